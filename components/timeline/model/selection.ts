/**
 * Filtering events and moving the selection between them.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/selection.test.ts.
 */
import type { Plane, StoredEvent } from "@/lib/contract/api";
import type { TimedEvent } from "./events";
import { LANES } from "./lanes";

/** Filter shared by the timeline and the event list: enabled planes and a substring of the type. */
export type EventFilter = { planes: readonly Plane[]; typeQuery: string };

/** The filter that lets every event through. */
export const ALL_EVENTS_FILTER: EventFilter = { planes: LANES.map((l) => l.plane), typeQuery: "" };

/**
 * Whether an event passes a filter: its plane is enabled and its type contains every whitespace- or
 * comma-separated term of the query (case-insensitive).
 */
export function matchesFilter(event: Pick<StoredEvent, "plane" | "type">, filter: EventFilter): boolean {
  if (!filter.planes.includes(event.plane)) return false;
  const terms = filter.typeQuery
    .toLowerCase()
    .split(/[\s,]+/)
    .filter((s) => s !== "");
  const type = event.type.toLowerCase();
  return terms.every((term) => type.includes(term));
}

/**
 * The id the selection moves to with Arrow Right (`dir` 1) / Arrow Left (`dir` -1) over time-ordered
 * events, skipping events that fail `accept`. With nothing selected (or a selection not in the list)
 * it is the first (dir 1) or last (dir -1) accepted event. At either end the selection stays.
 * Null when no event is accepted.
 */
export function neighbourId(
  sorted: readonly TimedEvent[],
  selectedId: string | null,
  dir: 1 | -1,
  accept: (event: StoredEvent) => boolean = () => true,
): string | null {
  const index = selectedId === null ? -1 : sorted.findIndex((te) => te.event.id === selectedId);
  if (index === -1) {
    const ordered = dir === 1 ? sorted : [...sorted].reverse();
    return ordered.find((te) => accept(te.event))?.event.id ?? null;
  }
  for (let i = index + dir; i >= 0 && i < sorted.length; i += dir) {
    const te = sorted[i];
    if (te && accept(te.event)) return te.event.id;
  }
  return selectedId;
}
