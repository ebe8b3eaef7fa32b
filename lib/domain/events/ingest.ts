/**
 * `POST /api/v1/events`: validate, redact and store a batch of runtime events, idempotently by event id.
 *
 * One set-based INSERT … SELECT … ON CONFLICT DO NOTHING per batch (no per-event round trips); the rows
 * it returns are the ones stored, everything else valid was a duplicate. Rows are inserted in event-id
 * order and tasks in task-id order so concurrent batches take those locks in one order; the rare
 * side-effect transitions lock in time order, and a deadlock there is retried (withRetry).
 * The hot path avoids repeated work: plain validation before zod, one redaction pass that skips strings that
 * cannot hold a secret, attrs serialized once, and `json` (not `jsonb`) for the batch document so PostgreSQL
 * parses each attrs object once. Measured by `npm run bench -- ingest`.
 * Source: DESIGN.md "Event"; issue "Runtime API v1".
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { authorize, type Actor } from "../authz";
import { DomainError } from "../errors";
import { applyEventTransitions } from "../side-effects/from-events";
import { redactJson, redactString, unstorableJson } from "./redact";
import { fastValidEvent, MAX_ATTRS_BYTES, validateEvent, type ValidEvent } from "./schema";
import type { EventResult } from "@/lib/client/types";
import { withRetry } from "../tx";

export const MAX_EVENTS_PER_BATCH = 1000;

/** A valid event after redaction, with its attrs serialized once (for the size check and the insert). */
export type PreparedEvent = ValidEvent & { attrs: Record<string, unknown>; redaction_count: number; attrs_json: string };

/**
 * Validates the batch envelope and each event.
 * @throws DomainError validation_failed when the body is not `{events: [...]}`; too_many_events above 1000.
 */
export function prepareBatch(body: unknown): { prepared: PreparedEvent[]; results: EventResult[] } {
  const raw = body && typeof body === "object" && !Array.isArray(body) ? (body as { events?: unknown }).events : undefined;
  if (!Array.isArray(raw)) {
    throw new DomainError("validation_failed", 'The body must be a JSON object {"events": [ ... ]}.');
  }
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
    const unstorable = unstorableJson(item);
    if (unstorable) {
      const id = item && typeof item === "object" && typeof (item as { id?: unknown }).id === "string" ? (item as { id: string }).id : "";
      results.push({ id: unstorableJson(id) ? "" : id, status: "rejected", error: { code: "invalid_event", message: `the event ${unstorable}` } });
      continue;
    }
    let event = fastValidEvent(item);
    if (!event) {
      const v = validateEvent(item);
      if (!v.ok) {
        results.push({ id: v.id, status: "rejected", error: v.error });
        continue;
      }
      event = v.event;
    }
    if (seen.has(event.id)) {
      results.push({ id: event.id, status: "duplicate" });
      continue;
    }
    const { value, redactions } = redactJson(event.attrs ?? {});
    // Sandbox ids and actors are shown on the timeline: a credential pasted there is redacted too.
    let redactionCount = redactions.length;
    for (const field of ["environment_id", "actor"] as const) {
      const v = event[field];
      if (v === undefined) continue;
      const r = redactString(v);
      if (r.kinds.length) {
        event = { ...event, [field]: r.value };
        redactionCount += r.kinds.length;
      }
    }
    const attrsJson = JSON.stringify(value);
    if (attrsJson.length > MAX_ATTRS_BYTES / 3 && Buffer.byteLength(attrsJson) > MAX_ATTRS_BYTES) {
      results.push({
        id: event.id,
        status: "rejected",
        error: { code: "attrs_too_large", message: `attrs is larger than ${MAX_ATTRS_BYTES} bytes` },
      });
      continue;
    }
    seen.add(event.id);
    prepared.push({ ...event, attrs: value, redaction_count: redactionCount, attrs_json: attrsJson });
    results.push({ id: event.id, status: "stored" });
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
  // The payload is assembled from the attrs JSON made once in prepareBatch (no second serialization of attrs).
  const q = JSON.stringify;
  const payload = `[${prepared
    .map(
      (e) =>
        `{"event_id":${q(e.id)},"task_id":${q(e.task_id)},"plane":${q(e.plane)},"type":${q(e.type)},"occurred_at":${q(e.occurred_at)},` +
        `"environment_id":${q(e.environment_id ?? null)},"attempt":${q(e.attempt ?? null)},"actor":${q(e.actor ?? null)},` +
        `"attrs":${e.attrs_json},"redaction_count":${e.redaction_count}}`,
    )
    .join(",")}]`;
  const taskIds = [...new Set(prepared.map((e) => e.task_id))].sort();
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
               coalesce(x.attrs::jsonb, '{}'::jsonb), x.redaction_count
        from json_to_recordset(${payload}::json) as x(
          event_id text, task_id text, plane event_plane, type text, occurred_at timestamptz,
          environment_id text, attempt integer, actor text, attrs json, redaction_count integer)
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
