/**
 * Timeline reads that stay true on long runs: the overview (every marker, the newest events and server-side bins),
 * windows of detail, and the arrival feed for incremental readers.
 * Design: docs/decisions/0015-timeline-overview-and-arrival-feed.md.
 */
import type { Db } from "@/db";
import { decodeCursor, encodeCursor } from "@/db/queries/sql-helpers";
import * as q from "@/db/queries/tasks";
import * as tq from "@/db/queries/timeline";
import type { ArrivalPage, Plane, TimelineBin, TimelineOverview } from "@/lib/contract/api";
import { authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { findLiveTask } from "./deleted";
import { checkTaskId, storedEvent } from "./read";
import { TIMELINE_MARKER_TYPES } from "../events/catalogue";
import { uncheckedCompaction } from "../gate/compaction";
import type { VerbContext } from "../context";

/** A task with at most this many events is sent whole (the overview is then the full timeline). */
export const OVERVIEW_FULL_MAX = 2000;
/** How many of the newest events the overview of a longer task carries. */
export const OVERVIEW_NEWEST = 250;
/** Time buckets per lane in the overview of a longer task. */
export const OVERVIEW_BUCKETS = 240;
/** Upper bound of marker events in one overview (far above any real run's restarts). */
export const OVERVIEW_MARKERS_MAX = 5000;

/**
 * The overview of a task's timeline. A task of up to {@link OVERVIEW_FULL_MAX} events comes whole (`complete`);
 * a longer one comes as every marker event, the {@link OVERVIEW_NEWEST} newest events and per-lane bins counted in
 * SQL, so it holds every attempt, interruption and restart and the newest events however long the run. Either way it
 * names the compaction whose constraints were not re-checked (the gate's rule, receive order) and carries its event.
 * `since` is an arrival-feed cursor taken before the reads: following it yields every event this overview missed.
 * @param columns `summary` (pages): large bodies are cut in the database, never read whole in bulk (decision 0036).
 * @throws DomainError not_found.
 */
export async function getTimelineOverview(
  { db, actor }: VerbContext,
  { taskId, columns = "whole" }: { taskId: string; columns?: q.EventColumns },
): Promise<TimelineOverview> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  // One round of statements before the reads (the horizon must be taken before them; the rest only sizes them).
  // Whether the task is short is answered from at most OVERVIEW_FULL_MAX + 1 index entries; a long task is counted by its bins.
  const [task, horizon, total, range, compactionRows] = await Promise.all([
    findLiveTask(db, actor.tenantId, taskId),
    tq.arrivalHorizon(db),
    tq.countEventsUpTo(db, actor.tenantId, taskId, OVERVIEW_FULL_MAX + 1),
    tq.timelineRange(db, actor.tenantId, taskId),
    tq.latestCompactionFacts(db, actor.tenantId, taskId),
  ]);
  if (!task) throw notFound(`Task ${taskId}`);
  const since = encodeCursor([horizon, 0]);
  // The gate's compaction rule (receive order), so the timeline marks the compaction whose constraints were not re-checked.
  const compaction_unchecked = uncheckedCompaction(
    compactionRows.map((r) => ({ event_id: r.event_id, type: r.type, seq: Number(r.seq), occurred_at: r.occurred_at })),
  );
  const counts: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
  if (total <= OVERVIEW_FULL_MAX || !range) {
    const rows = await q.timelinePage(db, actor.tenantId, taskId, { limit: OVERVIEW_FULL_MAX + 1, columns });
    if (rows.length <= OVERVIEW_FULL_MAX) {
      for (const r of rows) counts[r.plane] += 1;
      return {
        total: rows.length,
        counts,
        range: rows.length ? { first: rows[0]!.occurred_at, last: rows.at(-1)!.occurred_at } : null,
        complete: true,
        events: rows.map(storedEvent),
        newest_from: rows[0]?.occurred_at ?? null,
        bins: [],
        since,
        compaction_unchecked,
      };
    }
  }
  const [bins, markers, newest] = await Promise.all([
    overviewBins(db, actor.tenantId, taskId, range!, horizon),
    tq.timelineMarkers(db, actor.tenantId, taskId, TIMELINE_MARKER_TYPES, OVERVIEW_MARKERS_MAX, columns),
    tq.timelineNewest(db, actor.tenantId, taskId, OVERVIEW_NEWEST, columns),
  ]);
  let binTotal = 0;
  for (const b of bins) {
    counts[b.plane] += b.count;
    binTotal += b.count;
  }
  const byId = new Map<string, q.EventRow>();
  for (const r of markers) byId.set(r.event_id, r);
  for (const r of newest) byId.set(r.event_id, r);
  // The unchecked compaction is carried whatever its age, like the markers: the timeline marks it.
  const unchecked = compactionRows.find((r) => r.event_id === compaction_unchecked?.event_id);
  if (unchecked) {
    const { seq: _seq, ...row } = unchecked;
    byId.set(row.event_id, row);
  }
  const events = [...byId.values()]
    .sort((a, b) =>
      a.occurred_at < b.occurred_at ? -1 : a.occurred_at > b.occurred_at ? 1 : a.event_id < b.event_id ? -1 : 1,
    )
    .map(storedEvent);
  return {
    total: binTotal,
    counts,
    range: range!,
    complete: false,
    events,
    newest_from: newest[0]?.occurred_at ?? null,
    bins,
    since,
    compaction_unchecked,
  };
}

/** A task's bins as last counted, and the arrival horizon they are exact below. */
type CachedBins = { key: string; strideMs: number; origin: number; horizon: string; bins: Map<string, TimelineBin> };

/** Bins of recently opened long tasks, newest use last (soft state: losing it costs one full count). */
const binCache = new Map<string, CachedBins>();
/** Tasks whose bins are kept per server process. */
export const BIN_CACHE_TASKS = 100;
/** More new rows than this since the last count: count again in SQL instead. */
const BIN_DELTA_MAX = 20_000;

function addToBin(
  c: CachedBins,
  plane: Plane,
  bucket: number,
  first: string,
  last: string,
  count: number,
  failed: number,
  denied: number,
) {
  const k = `${plane}|${bucket}`;
  const b = c.bins.get(k);
  if (!b) {
    c.bins.set(k, { plane, first, last, count, failed, denied });
    return;
  }
  b.count += count;
  b.failed += failed;
  b.denied += denied;
  if (first < b.first) b.first = first;
  if (last > b.last) b.last = last;
}

/**
 * The overview's bins, exact for every row of a transaction below `horizon`. The first request for a task counts
 * them in SQL (a pass over the task's rows); later ones add only the rows that arrived since, read from the arrival
 * index by transaction range (events are never updated, so counted rows stay counted). Kept per process for
 * {@link BIN_CACHE_TASKS} tasks; several servers each keep their own.
 */
async function overviewBins(
  db: Db,
  tenantId: string,
  taskId: string,
  range: { first: string; last: string },
  horizon: string,
): Promise<TimelineBin[]> {
  const key = `${tenantId}|${taskId}`;
  const base = binCache.get(key);
  let next: CachedBins | undefined;
  if (base && BigInt(horizon) <= BigInt(base.horizon)) {
    next = base; // already counted this far (or further)
  } else if (base) {
    const delta = await tq.arrivalDelta(db, tenantId, taskId, base.horizon, horizon);
    if (delta.length <= BIN_DELTA_MAX) {
      // A copy: requests overlap, and each adds its own delta to the state it started from.
      next = { ...base, horizon, bins: new Map([...base.bins].map(([k, v]) => [k, { ...v }])) };
      for (const r of delta) {
        const bucket = Math.floor((Date.parse(r.occurred_at) - next.origin) / next.strideMs);
        const failed = r.type === "tool.failed" ? 1 : 0;
        const denied = r.type === "egress.denied" || r.type === "credential.denied" ? 1 : 0;
        addToBin(next, r.plane, bucket, r.occurred_at, r.occurred_at, 1, failed, denied);
      }
    }
  }
  if (!next) {
    const rows = await tq.timelineBins(db, tenantId, taskId, range, OVERVIEW_BUCKETS, horizon);
    next = { key, strideMs: rows[0]?.strideMs ?? 1, origin: Date.parse(range.first), horizon, bins: new Map() };
    for (const r of rows) addToBin(next, r.plane, r.bucket, r.first, r.last, r.count, r.failed, r.denied);
    if (rows.length === 0) return [];
  }
  // Keep it unless another request replaced the entry meanwhile (its state is as good; never merge the two).
  if (binCache.get(key) === base) {
    binCache.delete(key);
    binCache.set(key, next);
    while (binCache.size > BIN_CACHE_TASKS) binCache.delete(binCache.keys().next().value!);
  }
  return [...next.bins.values()]
    .map((b) => ({ ...b }))
    .sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
}

/** Decodes an arrival-feed cursor (`since`): `0` starts at the beginning. @throws DomainError bad_request. */
function arrivalCursor(since: string): { txid: string; seq: number } {
  if (since === "0") return { txid: "0", seq: 0 };
  const [txid, seq] = decodeCursor(since, 2) ?? [];
  if (
    typeof txid !== "string" ||
    !/^\d{1,20}$/.test(txid) ||
    typeof seq !== "number" ||
    !Number.isSafeInteger(seq) ||
    seq < 0
  ) {
    throw new DomainError(
      "bad_request",
      "since is not a valid cursor; start again with since=0 or from an overview's since.",
      {
        fields: [{ path: "since", message: "a next_since value, or 0" }],
      },
    );
  }
  return { txid, seq };
}

/**
 * The arrival feed: the task's events in the order the server received them (commit-safe: a transaction still
 * running holds the feed back instead of being skipped), `limit` at a time. `since=0` starts at the first event;
 * `next_since` continues (also when nothing new has arrived: poll with it). Back-dated events (an earlier
 * `occurred_at` than events already read) arrive here when they are received, unlike the time-ordered pages.
 * @throws DomainError not_found, bad_request (since).
 */
export async function getArrivalFeed(
  { db, actor }: VerbContext,
  { taskId, ...opts }: { taskId: string; since: string; limit: number; columns?: q.EventColumns },
): Promise<ArrivalPage> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  const after = arrivalCursor(opts.since);
  // The task and the page in one round (a task that does not exist has no rows, and its page is not answered).
  const [task, { rows, horizon }] = await Promise.all([
    findLiveTask(db, actor.tenantId, taskId),
    tq.arrivalFeed(db, actor.tenantId, taskId, { after, limit: opts.limit + 1, columns: opts.columns }),
  ]);
  if (!task) throw notFound(`Task ${taskId}`);
  const page = rows.slice(0, opts.limit);
  const hasMore = rows.length > opts.limit;
  const last = page.at(-1);
  // Without more rows, every event below the horizon has been read: continue from the horizon.
  let next: [string, number];
  if (hasMore && last) next = [last.txid, Number(last.seq)];
  else if (BigInt(horizon) > BigInt(after.txid)) next = [horizon, 0];
  else next = [after.txid, after.seq];
  return { events: page.map(storedEvent), next_since: encodeCursor(next), has_more: hasMore };
}
