/**
 * One event's detail, fetched on demand by the timeline's drawer (decision 0034): pages ship large event bodies as
 * summaries (lib/domain/events/summary.ts), and this read gives one event at a time, capped.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { EVENT_COLUMNS, type EventRow } from "@/db/queries/tasks";
import type { StoredEvent } from "@/lib/contract/api";
import { eventDetail, eventSummary } from "../events/summary";
import { authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { LIMITS } from "../limits";
import { checkTaskId, storedEvent } from "./read";
import type { VerbContext } from "../context";

/**
 * The event `eventId` of task `taskId`, its `attrs` capped (`attrs_truncated` when cut).
 * @throws DomainError forbidden (no `tasks.read`), bad_request (an id past its limit), not_found (no such event in
 *   this task, also another tenant's).
 */
export async function getTaskEvent(
  { db, actor }: VerbContext,
  { taskId, eventId }: { taskId: string; eventId: string },
): Promise<StoredEvent> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  if (!eventId || eventId.length > LIMITS.eventId.max)
    throw new DomainError("bad_request", `An event id is 1–${LIMITS.eventId.max} characters.`, {
      fields: [{ path: "event_id", message: `1–${LIMITS.eventId.max} characters` }],
    });
  const [row] = await queryRows<EventRow>(
    db,
    sql`select ${EVENT_COLUMNS} from events
        where tenant_id = ${actor.tenantId} and task_id = ${taskId} and event_id = ${eventId}`,
  );
  if (!row) throw notFound(`Event ${eventId} of task ${taskId}`);
  return eventDetail(storedEvent(row));
}

/**
 * The `attrs` query parameter of the timeline reads: `full` (the default, the API's) or `summary` (what the task page
 * asks for: large bodies as summaries, lib/domain/events/summary.ts).
 * @returns the shaping to apply to each event.
 * @throws DomainError bad_request for another value.
 */
export function attrsMode(value: string | null): (e: StoredEvent) => StoredEvent {
  if (value === null || value === "full") return (e) => e;
  if (value === "summary") return eventSummary;
  throw new DomainError("bad_request", "attrs must be full or summary.", {
    fields: [{ path: "attrs", message: "full or summary" }],
  });
}
