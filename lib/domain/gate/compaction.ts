/**
 * The compaction rule of the gate (docs/concepts.md#compaction-and-constraints): a `compaction.performed` that no
 * `constraint.checked` followed, in the server's receive order (never the runtime's clock), holds mutations back
 * (`replay`, `constraints_unchecked`) and is marked on the task's timeline. Pure: the gate (./ask.ts), the timeline
 * overview (lib/domain/tasks/timeline.ts) and the task page (following the arrival feed) decide it with these.
 */

/** An event as the rule reads it: `seq` is the server's receive order. */
export type CompactionFactEvent = { event_id: string; type: string; seq: number; occurred_at: string };

/** The compaction no check followed. */
export type UncheckedCompaction = { event_id: string; occurred_at: string };

/** The latest `compaction.performed` that no `constraint.checked` followed, in receive order (`seq`), or null. */
export function uncheckedCompaction(events: ReadonlyArray<CompactionFactEvent>): UncheckedCompaction | null {
  let compaction: CompactionFactEvent | null = null;
  let checkedAfter = -Infinity;
  for (const e of events) {
    if (e.type === "compaction.performed" && (!compaction || e.seq > compaction.seq)) compaction = e;
    if (e.type === "constraint.checked" && e.seq > checkedAfter) checkedAfter = e.seq;
  }
  return compaction && checkedAfter < compaction.seq
    ? { event_id: compaction.event_id, occurred_at: compaction.occurred_at }
    : null;
}

/**
 * The same rule carried forward over events that arrived since `current` was decided, given in the order the server
 * received them (the arrival feed's order). A suffix of the receive order applied on the state decided before it gives
 * the state of the whole: the last compaction or check wins.
 */
export function followUncheckedCompaction(
  current: UncheckedCompaction | null,
  arrived: ReadonlyArray<{ id: string; type: string; occurred_at: string }>,
): UncheckedCompaction | null {
  if (!arrived.some((e) => e.type === "compaction.performed" || e.type === "constraint.checked")) return current;
  const events: CompactionFactEvent[] = current
    ? [{ event_id: current.event_id, type: "compaction.performed", seq: 0, occurred_at: current.occurred_at }]
    : [];
  arrived.forEach((e, i) => events.push({ event_id: e.id, type: e.type, seq: i + 1, occurred_at: e.occurred_at }));
  return uncheckedCompaction(events);
}
