/**
 * Events in time order, each with its parsed time.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/events.test.ts.
 */
import type { StoredEvent } from "@/lib/contract/api";

/** An event with its parsed time (epoch ms). */
export type TimedEvent = { event: StoredEvent; t: number };

/**
 * Events in time order (`occurred_at`), keeping the input order for equal times (the server's order,
 * which breaks ties by id). Events whose time does not parse are dropped.
 */
export function sortEvents(events: readonly StoredEvent[]): TimedEvent[] {
  return events
    .map((event) => ({ event, t: Date.parse(event.occurred_at) }))
    .filter((x) => Number.isFinite(x.t))
    .sort((a, b) => a.t - b.t);
}
