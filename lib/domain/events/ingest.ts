/**
 * `POST /api/v1/events`: validate, redact and store a batch of runtime events, idempotently by event id.
 *
 * One set-based INSERT … SELECT … ON CONFLICT DO NOTHING per batch (no per-event round trips); the rows
 * it returns are the ones stored, everything else valid was a duplicate. Rows are inserted in event-id
 * order and tasks in task-id order so concurrent batches lock in the same order and never deadlock.
 * Source: DESIGN.md "Event"; issue "Runtime API v1".
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { authorize, type Actor } from "../authz";
import { DomainError } from "../errors";
import { applyEventTransitions } from "../side-effects/from-events";
import { redactJson } from "./redact";
import { validateEvent, type ValidEvent } from "./schema";
import type { EventResult } from "@/lib/client/types";
import { withRetry } from "../tx";

export const MAX_EVENTS_PER_BATCH = 1000;

const batchSchema = z.object({ events: z.array(z.unknown()) });

export type PreparedEvent = ValidEvent & { attrs: Record<string, unknown>; redaction_count: number };

/**
 * Validates the batch envelope and each event.
 * @throws DomainError validation_failed when the body is not `{events: [...]}`; too_many_events above 1000.
 */
export function prepareBatch(body: unknown): { prepared: PreparedEvent[]; results: EventResult[] } {
  const envelope = batchSchema.safeParse(body);
  if (!envelope.success) {
    throw new DomainError("validation_failed", 'The body must be a JSON object {"events": [ ... ]}.');
  }
  const raw = envelope.data.events;
  if (raw.length > MAX_EVENTS_PER_BATCH) {
    throw new DomainError(
      "too_many_events",
      `A batch holds at most ${MAX_EVENTS_PER_BATCH} events; this one has ${raw.length}. Split it and send again.`,
    );
  }
  const results: EventResult[] = [];
  const prepared: PreparedEvent[] = [];
  const seen = new Set<string>();
  for (const item of raw) {
    const v = validateEvent(item);
    if (!v.ok) {
      results.push({ id: v.id, status: "rejected", error: v.error });
      continue;
    }
    if (seen.has(v.event.id)) {
      results.push({ id: v.event.id, status: "duplicate" });
      continue;
    }
    seen.add(v.event.id);
    const { value, redactions } = redactJson(v.event.attrs ?? {});
    prepared.push({ ...v.event, attrs: value, redaction_count: redactions.length });
    results.push({ id: v.event.id, status: "stored" });
  }
  return { prepared, results };
}

/**
 * Stores a batch for the actor's tenant.
 * @param body parsed JSON body `{events: EventInput[]}`.
 * @returns `{results}` in input order: stored | duplicate | rejected (with `{code, message}`).
 * @throws DomainError forbidden (not a runtime key), validation_failed, too_many_events.
 */
export async function ingestEvents(db: Db, actor: Actor, body: unknown): Promise<{ results: EventResult[] }> {
  authorize(actor, "events.write");
  const { prepared, results } = prepareBatch(body);
  if (prepared.length === 0) return { results };
  const stored = await storeEvents(db, actor.tenantId, prepared);
  for (const r of results) {
    if (r.status === "stored" && !stored.has(r.id)) r.status = "duplicate";
  }
  return { results };
}

/**
 * Inserts prepared events in one statement (plus one for new tasks and, when needed, side-effect
 * transitions) inside one transaction. Returns the ids actually stored.
 */
export async function storeEvents(db: Db, tenantId: string, prepared: PreparedEvent[]): Promise<Set<string>> {
  const rows = prepared.map((e) => ({
    event_id: e.id,
    task_id: e.task_id,
    plane: e.plane,
    type: e.type,
    occurred_at: e.occurred_at,
    environment_id: e.environment_id ?? null,
    attempt: e.attempt ?? null,
    actor: e.actor ?? null,
    attrs: e.attrs,
    redaction_count: e.redaction_count,
  }));
  const taskIds = [...new Set(rows.map((r) => r.task_id))].sort();
  const payload = JSON.stringify(rows);
  return withRetry(() =>
    db.transaction(async (tx) => {
      await tx.execute(sql`
        insert into tasks (tenant_id, task_id)
        select ${tenantId}::uuid, t.task_id
        from jsonb_array_elements_text(${JSON.stringify(taskIds)}::jsonb) as t(task_id)
        order by t.task_id
        on conflict do nothing`);
      const inserted = await queryRows<{ event_id: string }>(
        tx,
        sql`
        insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, environment_id, attempt, actor, attrs, redaction_count)
        select ${tenantId}::uuid, x.event_id, x.task_id, x.plane, x.type, x.occurred_at, x.environment_id, x.attempt, x.actor,
               coalesce(x.attrs, '{}'::jsonb), x.redaction_count
        from jsonb_to_recordset(${payload}::jsonb) as x(
          event_id text, task_id text, plane event_plane, type text, occurred_at timestamptz,
          environment_id text, attempt integer, actor text, attrs jsonb, redaction_count integer)
        order by x.event_id
        on conflict (tenant_id, event_id) do nothing
        returning event_id`,
      );
      const stored = new Set(inserted.map((r) => r.event_id));
      const transitions = prepared.filter((e) => stored.has(e.id) && TRANSITION_TYPES.has(e.type));
      if (transitions.length) await applyEventTransitions(tx, tenantId, transitions);
      return stored;
    }),
  );
}

const TRANSITION_TYPES = new Set(["sandbox.created", "run.interrupted", "side_effect.intent", "side_effect.receipt"]);
