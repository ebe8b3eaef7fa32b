/**
 * The task page's timeline data: the server's overview (every marker, the newest events, per-lane bins), new events
 * from the arrival feed while the page is open, and windows of detail fetched when the timeline is zoomed in.
 * Design: docs/decisions/0015-timeline-overview-and-arrival-feed.md.
 */
"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { followUncheckedCompaction, type UncheckedCompaction } from "@/lib/domain/gate/compaction";
import { apiFetch } from "./api";
import { unpackBins, type PageOverview } from "@/lib/contract/overview-pack";
import type { ArrivalPage, Plane, StoredEvent, TimelinePage } from "@/lib/contract/api";

const enc = encodeURIComponent;
/** Events per detail request; a denser window is loaded as far as this reaches (zoom in for the rest). */
export const WINDOW_LIMIT = 1000;
/** Feed pages read per refresh (each up to 1,000 events). */
const FEED_PAGES = 20;

/** What the task page's timeline shows. */
export type TimelineData = {
  /** Loaded events, in no particular order. */
  events: StoredEvent[];
  /** Events of the task (at least the loaded ones). */
  total: number;
  /** Per lane. */
  counts: Record<Plane, number>;
  /** The overview's bins (epoch ms), empty when every event is loaded. */
  serverBins: Array<{ plane: Plane; first: number; last: number; count: number; failed: number; denied: number }>;
  /** Loaded events are complete from this instant on (undefined: complete everywhere). */
  completeFrom: number | undefined;
  /** Fetches the detail of a window of real time (epoch ms) when it is not loaded yet. */
  loadWindow: (from: number, to: number) => void;
  /** Whether a detail window is being fetched. */
  loadingWindow: boolean;
  /** The last refresh or window fetch error, if any. */
  error: Error | null;
  /**
   * The compaction whose constraints were not re-checked (the gate's rule, receive order): from the overview, then
   * carried forward over the arrival feed. Null when none.
   */
  compactionUnchecked: UncheckedCompaction | null;
};

/**
 * The timeline data of one task. Starts from the server-rendered overview (bins packed, lib/contract/overview-pack.ts); every change of `tick` (e.g. each poll of
 * the task view while the run is live) reads the arrival feed from where it stopped, so every new event arrives,
 * back-dated ones included.
 */
export function useTimelineData(taskId: string, initial: PageOverview, tick: unknown): TimelineData {
  const [extra, setExtra] = useState<Map<string, StoredEvent>>(() => new Map());
  const [error, setError] = useState<Error | null>(null);
  const [loadingWindow, setLoadingWindow] = useState(false);
  const sinceRef = useRef(initial.since);
  const running = useRef(false);
  const again = useRef(false);
  const windows = useRef<Array<[number, number]>>([]);
  const seen = useRef<Set<string> | null>(null);
  // Events first seen in the feed (not in the overview), per lane: the overview's counts grow by them.
  const [fresh, setFresh] = useState<Record<Plane, number>>({ session: 0, environment: 0, tools: 0, vault: 0 });
  const [compactionUnchecked, setCompactionUnchecked] = useState<UncheckedCompaction | null>(
    initial.compaction_unchecked ?? null,
  );

  const merge = useCallback(
    (events: StoredEvent[], fromFeed: boolean) => {
      if (!events.length) return;
      seen.current ??= new Set(initial.events.map((e) => e.id));
      const added: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
      let any = false;
      for (const e of events) {
        if (seen.current.has(e.id)) continue;
        seen.current.add(e.id);
        if (fromFeed) {
          added[e.plane] += 1;
          any = true;
        }
      }
      if (any) {
        setFresh((f) => ({
          session: f.session + added.session,
          environment: f.environment + added.environment,
          tools: f.tools + added.tools,
          vault: f.vault + added.vault,
        }));
      }
      setExtra((prev) => {
        const next = new Map(prev);
        for (const e of events) next.set(e.id, e);
        return next;
      });
    },
    [initial.events],
  );

  const readFeed = useCallback(async () => {
    if (running.current) {
      again.current = true;
      return;
    }
    running.current = true;
    try {
      do {
        again.current = false;
        for (let i = 0; i < FEED_PAGES; i += 1) {
          const page = await apiFetch<ArrivalPage>(
            `/api/v1/tasks/${enc(taskId)}/timeline?since=${enc(sinceRef.current)}&limit=1000&attrs=summary`,
          );
          sinceRef.current = page.next_since;
          merge(page.events, true);
          // The feed is the server's receive order: the gate's compaction rule carries forward over it.
          setCompactionUnchecked((c) => followUncheckedCompaction(c, page.events));
          if (!page.has_more) break;
        }
      } while (again.current);
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      running.current = false;
    }
  }, [taskId, merge]);

  const firstTick = useRef(true);
  useEffect(() => {
    // The overview is fresh on the first render; read the feed on every later tick.
    if (firstTick.current) {
      firstTick.current = false;
      return;
    }
    void readFeed();
  }, [tick, readFeed]);

  const loadWindow = useCallback(
    (from: number, to: number) => {
      if (initial.complete) return;
      if (windows.current.some(([a, b]) => a <= from && b >= to)) return;
      setLoadingWindow(true);
      const qs = `from=${enc(new Date(Math.floor(from)).toISOString())}&to=${enc(new Date(Math.ceil(to) + 1).toISOString())}&limit=${WINDOW_LIMIT}&attrs=summary`;
      apiFetch<TimelinePage>(`/api/v1/tasks/${enc(taskId)}/timeline?${qs}`)
        .then((page) => {
          merge(page.events, false);
          // A full page covers the window only up to its last event.
          const last = page.events.at(-1);
          const end = page.next_cursor && last ? Date.parse(last.occurred_at) - 1 : to;
          if (end > from) windows.current.push([from, end]);
          setError(null);
        })
        .catch((err: unknown) => setError(err instanceof Error ? err : new Error(String(err))))
        .finally(() => setLoadingWindow(false));
    },
    [taskId, merge, initial.complete],
  );

  const events = useMemo(() => {
    if (extra.size === 0) return initial.events;
    const out = initial.events.filter((e) => !extra.has(e.id));
    out.push(...extra.values());
    return out;
  }, [initial.events, extra]);

  const serverBins = useMemo(() => unpackBins(initial.bins), [initial.bins]);
  const counts = useMemo(
    () => ({
      session: initial.counts.session + fresh.session,
      environment: initial.counts.environment + fresh.environment,
      tools: initial.counts.tools + fresh.tools,
      vault: initial.counts.vault + fresh.vault,
    }),
    [initial.counts, fresh],
  );
  const total = Math.max(counts.session + counts.environment + counts.tools + counts.vault, events.length);
  const completeFrom = initial.complete || initial.newest_from === null ? undefined : Date.parse(initial.newest_from);

  return { events, total, counts, serverBins, completeFrom, loadWindow, loadingWindow, error, compactionUnchecked };
}
