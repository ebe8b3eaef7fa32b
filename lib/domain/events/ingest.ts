/**
 * `POST /api/v1/events`: validate, redact and store a batch of runtime events, idempotently by event id.
 *
 * One set-based INSERT … SELECT … ON CONFLICT DO NOTHING per batch (no per-event round trips); the rows
 * it returns are the ones stored, everything else valid was a duplicate. Rows are inserted in event-id
 * order and tasks in task-id order so concurrent batches take those locks in one order; the rare
 * side-effect transitions lock in time order, and a deadlock there is retried (withRetry).
 * The hot path avoids repeated work: an event passes plain checks (no zod), its attrs are serialized once, and
 * superset tests on that text (secret words, escaped NUL or surrogates, bracket count) let the redaction and
 * storability walks run only for the few events that could need them. The batch document is `json` (not
 * `jsonb`) so PostgreSQL parses each attrs object once, and new tasks are created in the same statement as the
 * events. Measured by `npm run bench -- ingest`.
 * Source: DESIGN.md "Event"; issue "Runtime API v1".
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { authorize, type Actor } from "../authz";
import { DomainError } from "../errors";
import { applyEventTransitions } from "../side-effects/from-events";
import { MAX_JSON_DEPTH, mayHoldSecret, redactJson, redactString, unstorableJson } from "./redact";
import { attrsTooLarge, fastValidEvent, MAX_ATTRS_BYTES, secretInIdentity, validateEvent, type ValidEvent } from "./schema";
import type { EventResult } from "@/lib/client/types";
import { withRetry } from "../tx";

export const MAX_EVENTS_PER_BATCH = 1000;

/** A valid event after redaction, with its attrs serialized once (for the size check and the insert). */
export type PreparedEvent = ValidEvent & { attrs: Record<string, unknown>; redaction_count: number; attrs_json: string };

/** NUL or any UTF-16 surrogate half in a top-level string: the event takes the full check. */
const UNUSUAL_TEXT = /[\u0000\ud800-\udfff]/;
/** How JSON.stringify writes a NUL or an unpaired surrogate: text without these holds neither. */
const ESCAPED_UNSTORABLE = /\\u0000|\\ud[89a-f]/i;

/** True when the JSON text has fewer than `limit` opening brackets, so it cannot nest `limit` deep. */
function fewerBrackets(json: string, limit: number): boolean {
  let n = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if ((c === 123 || c === 91) && ++n >= limit) return false; // '{' or '['
  }
  return true;
}

/** An optional top-level string with nothing unusual and no secret in it. */
function plainText(v: string | undefined): boolean {
  return v === undefined || (!UNUSUAL_TEXT.test(v) && redactString(v).kinds.length === 0);
}

/**
 * The hot path for one event: a plainly valid event whose strings are ordinary and whose attrs, once
 * serialized, cannot hold a secret, an unstorable character or too deep nesting. Returns the event with its
 * attrs JSON, or null when the event needs the full path (zod messages, redaction, exact size). Every test
 * here is a superset check, so an event it passes would come out of the full path unchanged.
 */
export function fastPrepare(item: unknown): PreparedEvent | null {
  const e = fastValidEvent(item);
  if (!e) return null;
  if (!plainText(`${e.id}\n${e.task_id}\n${e.type}`) || !plainText(e.environment_id) || !plainText(e.actor)) return null;
  const attrs = e.attrs ?? {};
  const attrsJson = JSON.stringify(attrs);
  if (attrsJson.length > MAX_ATTRS_BYTES / 3) return null;
  // attrs sits at depth 1 of the event: MAX_JSON_DEPTH + 1 brackets are needed to go too deep.
  if (ESCAPED_UNSTORABLE.test(attrsJson) || !fewerBrackets(attrsJson, MAX_JSON_DEPTH) || mayHoldSecret(attrsJson)) return null;
  return {
    id: e.id,
    task_id: e.task_id,
    plane: e.plane,
    type: e.type,
    occurred_at: e.occurred_at,
    environment_id: e.environment_id,
    attempt: e.attempt,
    actor: e.actor,
    attrs,
    redaction_count: 0,
    attrs_json: attrsJson,
  };
}

/**
 * Validates the batch envelope and each event, and redacts what it stores.
 * @param body the parsed request body, expected `{events: EventInput[]}`.
 * @returns `prepared`: the events to store (first copy of each id), and `results` in input order.
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
    const outcome = fastPrepare(item) ?? prepareFully(item);
    if ("error" in outcome) {
      results.push(outcome);
    } else if (seen.has(outcome.id)) {
      results.push({ id: outcome.id, status: "duplicate" });
    } else {
      seen.add(outcome.id);
      prepared.push(outcome);
      results.push({ id: outcome.id, status: "stored" });
    }
  }
  return { prepared, results };
}

/** The full path for one event: precise rejection messages, redaction, the exact attrs size. */
export function prepareFully(item: unknown): PreparedEvent | (EventResult & { error: { code: string; message: string } }) {
  const unstorable = unstorableJson(item);
  if (unstorable) {
    const id = item && typeof item === "object" && typeof (item as { id?: unknown }).id === "string" ? (item as { id: string }).id : "";
    return { id: unstorableJson(id) ? "" : id, status: "rejected", error: { code: "invalid_event", message: `the event ${unstorable}` } };
  }
  let event = fastValidEvent(item);
  if (!event) {
    const v = validateEvent(item);
    if (!v.ok) return { id: v.id, status: "rejected", error: v.error };
    event = v.event;
  }
  const refused = attrsTooLarge(event) ?? secretInIdentity(event);
  if (refused) return { id: redactString(event.id).kinds.length ? "" : event.id, status: "rejected", error: refused };
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
    return { id: event.id, status: "rejected", error: { code: "attrs_too_large", message: `attrs is larger than ${MAX_ATTRS_BYTES} bytes` } };
  }
  return { ...event, attrs: value, redaction_count: redactionCount, attrs_json: attrsJson };
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
  const payload = batchDocument(prepared);
  const taskIds = [...new Set(prepared.map((e) => e.task_id))].sort();
  return withRetry(() =>
    db.transaction(async (tx) => {
      // One statement: the tasks an event names are created (in task-id order) alongside the event rows.
      const inserted = await queryRows<{ event_id: string }>(
        tx,
        sql`
        with new_tasks as (
          insert into tasks (tenant_id, task_id)
          select ${tenantId}::uuid, t.task_id
          from jsonb_array_elements_text(${JSON.stringify(taskIds)}::jsonb) as t(task_id)
          order by t.task_id
          on conflict do nothing)
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

/**
 * The batch as one JSON array for `json_to_recordset`, assembled from the attrs JSON made in prepareBatch (attrs
 * are not serialized twice). task_id, plane, type and occurred_at passed patterns that admit no character JSON
 * escapes, so they are written as they are; the free-text fields go through JSON.stringify.
 */
function batchDocument(prepared: PreparedEvent[]): string {
  const q = JSON.stringify;
  const rows = new Array<string>(prepared.length);
  for (let i = 0; i < prepared.length; i++) {
    const e = prepared[i]!;
    rows[i] =
      `{"event_id":${q(e.id)},"task_id":"${e.task_id}","plane":"${e.plane}","type":"${e.type}","occurred_at":"${e.occurred_at}",` +
      `"environment_id":${e.environment_id === undefined ? "null" : q(e.environment_id)},"attempt":${e.attempt ?? "null"},` +
      `"actor":${e.actor === undefined ? "null" : q(e.actor)},"attrs":${e.attrs_json},"redaction_count":${e.redaction_count}}`;
  }
  return `[${rows.join(",")}]`;
}

const TRANSITION_TYPES = new Set(["sandbox.created", "run.interrupted", "side_effect.intent", "side_effect.receipt"]);
