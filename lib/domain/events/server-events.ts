/**
 * Events the server writes itself (decisions, approvals, revocation checks) into the same store as a runtime's, under
 * the same exactly-once rule: the id is claimed in `event_ids` first (decision 0054), so an id already taken — by the
 * server before, or by a runtime — stores nothing.
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { Plane } from "@/db/schema/enums";
import type { EventType } from "./catalogue";

/** One server-written event. `occurredAt` is SQL (`now()`, `clock_timestamp()` or a bound timestamptz). */
export type ServerEvent = {
  tenantId: string;
  eventId: string;
  taskId: string;
  plane: Plane;
  type: EventType;
  occurredAt: SQL;
  /** The actor's label. */
  actor: string;
  attrs: Record<string, unknown>;
};

/**
 * Stores `event` in the caller's transaction, in the partition its type belongs to, once per id.
 * @returns its `occurred_at` (ISO 8601 UTC) when stored; null when the id was already taken (nothing stored).
 */
export async function insertServerEvent(tx: Db, event: ServerEvent): Promise<string | null> {
  const rows = await queryRows<{ at: string }>(
    tx,
    sql`with ids as (
          insert into event_ids (tenant_id, event_id) values (${event.tenantId}, ${event.eventId})
          on conflict do nothing returning event_id)
        insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, actor, attrs, retention_class)
        select ${event.tenantId}, ids.event_id, ${event.taskId}, ${event.plane}, ${event.type}, ${event.occurredAt},
               ${event.actor}, ${JSON.stringify(event.attrs)}::jsonb, custody_event_retention_class(${event.type})
        from ids
        returning ${isoUtc("occurred_at")} as at`,
  );
  return rows[0]?.at ?? null;
}
