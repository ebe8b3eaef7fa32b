/**
 * Sandbox bars of the Environment lane: one per sandbox instance, from its creation to its end.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/sandbox-bars.test.ts.
 */
import type { TimedEvent } from "./events";
import { labelWidth, packRows } from "./rows";

/** One sandbox instance, drawn as a bar in the Environment lane. */
export type SandboxBar = {
  environmentId: string;
  attempt: number | null;
  start: number;
  end: number;
  /** No sandbox.destroyed / sandbox.replaced yet: the bar runs to the end of the data (or `now`). */
  open: boolean;
  endedBy: "destroyed" | "replaced" | null;
  /** The sandbox.created event, when the data holds it; otherwise `start` is the first event seen. */
  createdEventId: string | null;
  /** Sub-row inside the Environment lane, so that overlapping sandboxes do not hide each other. */
  row: number;
};

/**
 * Sandbox bars from time-ordered events, keyed by `environment_id`. A bar starts at the sandbox's
 * `sandbox.created` (or the first event carrying that environment id when the creation is not in the
 * data) and ends at its first `sandbox.destroyed` / `sandbox.replaced`, else when a sandbox of a higher attempt
 * is created (it was replaced), else at `endOfData` (open).
 * The attempt comes from the creation event, else the first event of that sandbox that has one.
 */
export function deriveSandboxBars(sorted: readonly TimedEvent[], endOfData: number): SandboxBar[] {
  type Acc = {
    environmentId: string;
    firstSeen: number;
    created: TimedEvent | null;
    ended: TimedEvent | null;
    attempt: number | null;
  };
  const byEnv = new Map<string, Acc>();
  for (const te of sorted) {
    const envId = te.event.environment_id;
    if (!envId) continue;
    let acc = byEnv.get(envId);
    if (!acc) {
      acc = { environmentId: envId, firstSeen: te.t, created: null, ended: null, attempt: null };
      byEnv.set(envId, acc);
    }
    const type = te.event.type;
    if (type === "sandbox.created" && !acc.created) acc.created = te;
    if ((type === "sandbox.destroyed" || type === "sandbox.replaced") && !acc.ended) acc.ended = te;
    if (acc.attempt === null && te.event.attempt !== null) acc.attempt = te.event.attempt;
  }
  const bars: Omit<SandboxBar, "row">[] = [];
  // A sandbox with no end event is over once a later attempt's sandbox is created: that one replaced it.
  const creations = [...byEnv.values()]
    .filter((a) => a.created && a.created.event.attempt !== null)
    .map((a) => ({ t: a.created!.t, attempt: a.created!.event.attempt! }));
  for (const acc of byEnv.values()) {
    const start = acc.created ? acc.created.t : acc.firstSeen;
    const attempt = acc.created?.event.attempt ?? acc.attempt;
    const successor =
      acc.ended === null && attempt !== null
        ? creations.filter((c) => c.attempt > attempt && c.t >= start).sort((a, b) => a.t - b.t)[0]
        : undefined;
    const open = acc.ended === null && !successor;
    const end = open ? Math.max(endOfData, start) : Math.max(acc.ended?.t ?? successor?.t ?? start, start);
    bars.push({
      environmentId: acc.environmentId,
      attempt,
      start,
      end,
      open,
      endedBy: acc.ended
        ? acc.ended.event.type === "sandbox.destroyed"
          ? "destroyed"
          : "replaced"
        : successor
          ? "replaced"
          : null,
      createdEventId: acc.created?.event.id ?? null,
    });
  }
  bars.sort((a, b) => a.start - b.start || a.end - b.end);
  const rows = packRows(bars);
  return bars.map((b, i) => ({ ...b, row: rows[i] ?? 0 }));
}

/** Label of a sandbox bar: `attempt N`, or `sandbox` when no attempt is known. */
export function sandboxBarLabel(bar: Pick<SandboxBar, "attempt">): string {
  return bar.attempt === null ? "sandbox" : `attempt ${bar.attempt}`;
}

/**
 * The text drawn inside a sandbox bar with `room` px free: the longest of `attempt N (no end recorded)` (open
 * bars), `attempt N`, `#N` that fits whole, or null when none does. A label never spills out of its bar nor is
 * cut mid-word (a cut "attempt 1" read as "at" next to the following bar's "attempt 2"); the full label stays in
 * the bar's tooltip. `measure` defaults to {@link labelWidth}.
 */
export function fitSandboxBarLabel(
  bar: Pick<SandboxBar, "attempt" | "open">,
  room: number,
  measure: (text: string) => number = labelWidth,
): string | null {
  const base = sandboxBarLabel(bar);
  const candidates = [
    ...(bar.open ? [`${base} (no end recorded)`] : []),
    base,
    ...(bar.attempt !== null ? [`#${bar.attempt}`] : []),
  ];
  return candidates.find((text) => measure(text) <= room) ?? null;
}
