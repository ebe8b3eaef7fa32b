/**
 * `POST /api/v1/events`: validate, redact and store a batch of runtime events, idempotently by event id.
 *
 * One set-based INSERT … SELECT … ON CONFLICT DO NOTHING per batch (no per-event round trips); the rows
 * it returns are the ones stored, everything else valid was a duplicate. Ids are claimed in event-id
 * order and tasks in task-id order so concurrent batches take those locks in one order; the rare
 * side-effect transitions lock in time order, and a deadlock there is retried (withRetry).
 * The hot path avoids repeated work: an event passes plain checks (no zod), its attrs are serialized once, and
 * superset tests on that text (secret words, escaped NUL or surrogates, bracket count) let the redaction and
 * storability walks run only for the few events that could need them. The batch document is `json` (not
 * `jsonb`) so PostgreSQL parses each attrs object once, and new tasks are created in the same statement as the
 * events. Measured by `npm run bench -- ingest`.
 * Source: docs/concepts.md#events; docs/api.md#runtime-routes.
 */
import { sql, type SQL } from "drizzle-orm";
import { copyIn, queryRows, type Db } from "@/db";
import { deletedTaskIds } from "../tasks/deleted";
import { authorize, type Actor } from "../authz";
import { DomainError } from "../errors";
import { isoUtc } from "@/db/queries/sql-helpers";
import { canonicalJson, sha256Hex } from "../crypto/canonical";
import type { SigningKey } from "../crypto/signing";
import {
  applyEventTransitions,
  callsWithEffects,
  needsTransition,
  noteFutureClocks,
  type EffectNote,
} from "../side-effects/from-events";
import { credentialKindsInName, redactName } from "../names";
import { MAX_JSON_DEPTH, mayHoldSecret, redactJson, unstorableJson } from "./redact";
import { mayHoldVaultValue, redactVaultAttrs } from "../secrets/vault";
import {
  attrsTooLarge,
  fastValidEvent,
  MAX_ATTRS_BYTES,
  secretInIdentity,
  validateEvent,
  type EventError,
  type ValidEvent,
} from "./schema";
import type { EventResult } from "@/lib/contract/api";
import { withRetry } from "../tx";
import { ATTEMPT_STEP } from "../limits";
import { outsidePrefix } from "../tenancy/api-key-scope";
import { attemptTooFarAhead } from "../side-effects/attempts";
import { withAuditSealed } from "../audit/append";
import type { SigningContext } from "../context";
import { sealMovedEffects } from "../side-effects/lifecycle/seal";
import { egressDenied } from "../notifications/facts";
import { enqueueNotifications } from "../notifications/outbox";

export const MAX_EVENTS_PER_BATCH = 1000;

/**
 * A valid event after redaction, with its attrs serialized once (for the size check and the insert). `redaction_kinds`
 * lists the distinct kinds redacted (null when nothing was): a vault-plane event with any is flagged on the timeline.
 */
export type PreparedEvent = ValidEvent & {
  attrs: Record<string, unknown>;
  redaction_count: number;
  redaction_kinds: string[] | null;
  attrs_json: string;
};

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

/** An optional top-level string with nothing unusual and no secret in it (also none joined by `_`: ids and labels). */
function plainText(v: string | undefined): boolean {
  return v === undefined || (!UNUSUAL_TEXT.test(v) && credentialKindsInName(v).length === 0);
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
  if (!plainText(`${e.id}\n${e.task_id}\n${e.type}`) || !plainText(e.environment_id) || !plainText(e.actor))
    return null;
  const attrs = e.attrs ?? {};
  const attrsJson = JSON.stringify(attrs);
  if (attrsJson.length > MAX_ATTRS_BYTES / 3) return null;
  // attrs sits at depth 1 of the event: MAX_JSON_DEPTH + 1 brackets are needed to go too deep.
  if (ESCAPED_UNSTORABLE.test(attrsJson) || !fewerBrackets(attrsJson, MAX_JSON_DEPTH) || mayHoldSecret(attrsJson))
    return null;
  // The vault lane carries metadata only: a value or a placeholder there takes the full path (redacted and flagged).
  if (e.plane === "vault" && mayHoldVaultValue(attrsJson)) return null;
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
    redaction_kinds: null,
    attrs_json: attrsJson,
  };
}

/**
 * Validates the batch envelope and each event, and redacts what it stores.
 * @param body the parsed request body, expected `{events: EventInput[]}`.
 * @returns `prepared`: the events to store (first copy of each id), and `results` in input order (a later copy of an
 *   id in the same batch is `duplicate` when its content is the same, `conflict` when it differs).
 * @throws DomainError validation_failed when the body is not `{events: [...]}`; too_many_events above 1000.
 */
export function prepareBatch(body: unknown): {
  prepared: PreparedEvent[];
  results: EventResult[];
  /** Later copies of an id in the batch: the index of their result, and the copy. */
  repeats: Array<{ index: number; event: PreparedEvent }>;
} {
  const raw =
    body && typeof body === "object" && !Array.isArray(body) ? (body as { events?: unknown }).events : undefined;
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
  const repeats: Array<{ index: number; event: PreparedEvent }> = [];
  const first = new Map<string, PreparedEvent>();
  for (const item of raw) {
    const outcome = fastPrepare(item) ?? prepareFully(item);
    if ("error" in outcome) {
      results.push(outcome);
      continue;
    }
    const earlier = first.get(outcome.id);
    if (earlier) {
      repeats.push({ index: results.length, event: outcome });
      const digest = eventDigest(earlier);
      results.push(
        digest === eventDigest(outcome) ? { id: outcome.id, status: "duplicate" } : conflictResult(outcome.id, digest),
      );
    } else {
      first.set(outcome.id, outcome);
      prepared.push(outcome);
      results.push({ id: outcome.id, status: "stored" });
    }
  }
  return { prepared, results, repeats };
}

/** The content of an event as stored (attrs redacted), for comparing two events that share an id. */
type EventContent = {
  id: string;
  task_id: string;
  plane: string;
  type: string;
  occurred_at: string;
  environment_id?: string | null;
  attempt?: number | null;
  actor?: string | null;
  attrs: Record<string, unknown>;
};

/** sha256 hex of the RFC 8785 JSON of an event's content; times compared as instants (UTC, microseconds). */
export function eventDigest(e: EventContent): string {
  return sha256Hex(
    canonicalJson({
      id: e.id,
      task_id: e.task_id,
      plane: e.plane,
      type: e.type,
      occurred_at: isoMicros(e.occurred_at),
      environment_id: e.environment_id ?? null,
      attempt: e.attempt ?? null,
      actor: e.actor ?? null,
      attrs: e.attrs,
    }),
  );
}

/** An ISO 8601 time as UTC with six fractional digits (as PostgreSQL keeps it), so equal instants compare equal. */
function isoMicros(iso: string): string {
  const m = /\.(\d+)(?=Z|[+-]\d\d:?\d\d$)/i.exec(iso);
  const micros = m ? m[1]!.padEnd(6, "0").slice(0, 6) : "000000";
  return `${new Date(iso).toISOString().slice(0, 19)}.${micros}Z`;
}

function conflictResult(id: string, storedDigest: string): EventResult {
  return {
    id,
    status: "conflict",
    stored_digest: storedDigest,
    error: {
      code: "event_id_conflict",
      message: `An event with id ${id} was already received with different content (stored digest ${storedDigest.slice(0, 12)}…); nothing was stored. Event ids are unique per tenant: give a new event a new id.`,
    },
  };
}

/** The full path for one event: precise rejection messages, redaction, the exact attrs size. */
export function prepareFully(item: unknown): PreparedEvent | (EventResult & { error: EventError }) {
  const unstorable = unstorableJson(item);
  if (unstorable) {
    const id =
      item && typeof item === "object" && typeof (item as { id?: unknown }).id === "string"
        ? (item as { id: string }).id
        : "";
    return {
      id: unstorableJson(id) ? "" : id,
      status: "rejected",
      error: { code: "invalid_event", message: `the event ${unstorable}` },
    };
  }
  let event = fastValidEvent(item);
  if (!event) {
    const v = validateEvent(item);
    if (!v.ok) return { id: v.id, status: "rejected", error: v.error };
    event = v.event;
  }
  const refused = attrsTooLarge(event) ?? secretInIdentity(event);
  if (refused)
    return { id: credentialKindsInName(event.id).length ? "" : event.id, status: "rejected", error: refused };
  const redacted = redactJson(event.attrs ?? {});
  let value = redacted.value;
  const kinds = redacted.redactions.map((r) => r.kind);
  // The vault lane carries metadata only (docs/concepts.md#redaction): credential values and placeholders are redacted
  // too, and flagged.
  if (event.plane === "vault") {
    const vault = redactVaultAttrs(value);
    value = vault.value;
    for (const r of vault.redactions) kinds.push(r.kind);
  }
  // Sandbox ids and actors are shown on the timeline: a credential pasted there is redacted too.
  for (const field of ["environment_id", "actor"] as const) {
    const v = event[field];
    if (v === undefined) continue;
    const r = redactName(v);
    if (r.kinds.length) {
      event = { ...event, [field]: r.value };
      kinds.push(...r.kinds);
    }
  }
  const attrsJson = JSON.stringify(value);
  if (attrsJson.length > MAX_ATTRS_BYTES / 3 && Buffer.byteLength(attrsJson) > MAX_ATTRS_BYTES) {
    return {
      id: event.id,
      status: "rejected",
      error: { code: "attrs_too_large", message: `attrs is larger than ${MAX_ATTRS_BYTES} bytes`, path: "attrs" },
    };
  }
  return {
    ...event,
    attrs: value,
    redaction_count: kinds.length,
    redaction_kinds: kinds.length ? [...new Set(kinds)].sort() : null,
    attrs_json: attrsJson,
  };
}

/**
 * Stores a batch for the actor's tenant.
 * @param body parsed JSON body `{events: EventInput[]}`.
 * @param key the server's signing key (the gate's facts include the checkpoint's signature check).
 * @returns `{results}` in input order: stored | duplicate (same id, same content) | conflict (same id, other content;
 *   with `stored_digest`) | rejected (with `{code, message}`); events that moved a side effect carry `effect`
 *   `{name, applied, code?, message?}` saying what happened and, when not applied, why.
 * @throws DomainError forbidden (not a runtime key), validation_failed, too_many_events.
 */
export async function ingestEvents(
  { db, actor, signingKey: key }: SigningContext,
  { body }: { body: unknown },
): Promise<{ results: EventResult[] }> {
  authorize(actor, "events.write");
  const batch = refuseOutsidePrefix(actor, prepareBatch(body));
  const { results } = batch;
  const { prepared, repeats } = await refuseFarAttempts(
    db,
    actor.tenantId,
    await refuseDeletedTasks(db, actor.tenantId, batch),
  );
  if (prepared.length === 0) return { results };
  // The effects the batch moved are audited in its transaction; their entries are sealed before the answer.
  const outcome = await withAuditSealed(db, actor.tenantId, () => storeEvents(db, actor, prepared, key));
  const firstCopies = new Map(prepared.map((e) => [e.id, e]));
  for (const r of results) {
    if (r.status !== "stored") continue;
    const o = outcome.get(r.id);
    if (!o || o.status === "duplicate") r.status = "duplicate";
    else if (o.status === "conflict") Object.assign(r, conflictResult(r.id, o.stored_digest!));
    else if (o.effect) r.effect = o.effect;
  }
  // A later copy in the batch compares with what is stored under its id (the first copy, or an earlier event).
  for (const { index, event } of repeats) {
    const o = outcome.get(event.id);
    const stored = o?.status === "conflict" ? o.stored_digest! : eventDigest(firstCopies.get(event.id)!);
    results[index] =
      eventDigest(event) === stored ? { id: event.id, status: "duplicate" } : conflictResult(event.id, stored);
  }
  return { results };
}

/**
 * Rejects the events of a batch that name an attempt more than {@link ATTEMPT_STEP} ahead of their task's current
 * attempt (decision 0032; path `attempt`), in `batch.results`, and leaves them out of what is stored. Reads the current
 * attempts (one query) only when an event names an attempt above the step, which a new task could not reach anyway.
 */
/**
 * A `task_prefix` key (decision 0044) reports only for tasks whose id starts with its prefix: any other event is
 * rejected as `not_found`, as if the task did not exist; the rest of the batch goes on.
 */
function refuseOutsidePrefix(actor: Actor, batch: ReturnType<typeof prepareBatch>): ReturnType<typeof prepareBatch> {
  const scope = actor.kind === "api_key" ? actor.scope : undefined;
  if (scope?.kind !== "task_prefix") return batch;
  const out = (e: PreparedEvent) => outsidePrefix(scope, e.task_id);
  const refused = new Set(batch.prepared.filter(out).map((e) => e.id));
  for (const x of batch.repeats) if (out(x.event)) refused.add(x.event.id);
  if (!refused.size) return batch;
  batch.results.forEach((r, i) => {
    if (!refused.has(r.id) || r.status === "rejected") return;
    batch.results[i] = {
      id: r.id,
      status: "rejected",
      error: { code: "not_found", message: "task_id: this task was not found.", path: "task_id" },
    };
  });
  return {
    results: batch.results,
    prepared: batch.prepared.filter((e) => !out(e)),
    repeats: batch.repeats.filter((x) => !out(x.event)),
  };
}

/**
 * Rejects the events of a batch whose task was deleted (decision 0054; code `task_deleted`, path `task_id`) and leaves
 * them out of what is stored, so a stale runtime cannot write under a tombstone. One indexed query per batch.
 */
async function refuseDeletedTasks(
  db: Db,
  tenantId: string,
  batch: ReturnType<typeof prepareBatch>,
): Promise<ReturnType<typeof prepareBatch>> {
  const ids = new Set(batch.prepared.map((e) => e.task_id));
  for (const x of batch.repeats) ids.add(x.event.task_id);
  const deleted = await deletedTaskIds(db, tenantId, [...ids]);
  if (!deleted.size) return batch;
  const out = (e: PreparedEvent) => deleted.has(e.task_id);
  const refused = new Set(batch.prepared.filter(out).map((e) => e.id));
  for (const x of batch.repeats) if (out(x.event)) refused.add(x.event.id);
  batch.results.forEach((r, i) => {
    if (!refused.has(r.id) || r.status === "rejected") return;
    batch.results[i] = {
      id: r.id,
      status: "rejected",
      error: {
        code: "task_deleted",
        message: "task_id: this task was deleted; it takes no more events.",
        path: "task_id",
      },
    };
  });
  return {
    results: batch.results,
    prepared: batch.prepared.filter((e) => !refused.has(e.id)),
    repeats: batch.repeats.filter((x) => !refused.has(x.event.id)),
  };
}

async function refuseFarAttempts(
  db: Db,
  tenantId: string,
  batch: ReturnType<typeof prepareBatch>,
): Promise<Pick<ReturnType<typeof prepareBatch>, "prepared" | "repeats">> {
  const far = batch.prepared.filter((e) => (e.attempt ?? 0) > ATTEMPT_STEP);
  if (!far.length) return batch;
  const taskIds = [...new Set(far.map((e) => e.task_id))];
  const rows = await queryRows<{ task_id: string; current_attempt: number }>(
    db,
    sql`select task_id, current_attempt from tasks where tenant_id = ${tenantId} and task_id in (${sql.join(
      taskIds.map((id) => sql`${id}`),
      sql`, `,
    )})`,
  );
  const current = new Map(rows.map((r) => [r.task_id, r.current_attempt]));
  const refused = new Map<string, EventResult>();
  for (const e of far) {
    const now = current.get(e.task_id) ?? 0;
    if (e.attempt! <= now + ATTEMPT_STEP) continue;
    const err = attemptTooFarAhead(e.attempt!, now);
    refused.set(e.id, {
      id: e.id,
      status: "rejected",
      error: { code: err.code, message: err.message, path: "attempt" },
    });
  }
  if (!refused.size) return batch;
  batch.results.forEach((r, i) => {
    const no = refused.get(r.id);
    if (no && (r.status === "stored" || batch.repeats.some((x) => x.index === i))) batch.results[i] = no;
  });
  return {
    prepared: batch.prepared.filter((e) => !refused.has(e.id)),
    repeats: batch.repeats.filter((x) => !refused.has(x.event.id)),
  };
}

type StoreOutcome = { status: "stored" | "duplicate" | "conflict"; stored_digest?: string; effect?: EffectNote };

/**
 * The staging table a batch is copied into on PostgreSQL: temporary (one per connection, never WAL-logged, no
 * row-level security — it is private to the session and emptied when the transaction ends), created on first use.
 * `COPY` into a table with row-level security is refused for the walled role, so the batch lands here and the one
 * `INSERT … SELECT … ON CONFLICT DO NOTHING` into `events` runs under the tenant wall as before. Readable and writable
 * by PUBLIC because the same connection serves the walled role and the owner (tests, scripts), whichever created it.
 * Emptied before each use too, for a transaction that stores two batches.
 */
const STAGE = "events_ingest_stage_2";
const STAGE_COLUMNS =
  "ord, event_id, task_id, plane, type, occurred_at, environment_id, attempt, actor, attrs, redaction_count, redaction_kinds";
const ENSURE_STAGE = `do $$ begin
  if to_regclass('pg_temp.${STAGE}') is null then
    create temp table ${STAGE} (ord integer not null, event_id text not null, task_id text not null, plane public.event_plane not null, type text not null,
      occurred_at timestamptz not null, environment_id text, attempt integer, actor text, attrs jsonb not null,
      redaction_count integer not null, redaction_kinds text[]) on commit delete rows;
    grant select, insert, delete on ${STAGE} to public;
  else
    delete from ${STAGE}; -- a batch stored earlier in the same transaction (empty otherwise: costs nothing)
  end if;
end $$`;
const COPY_STAGE = `copy ${STAGE} (${STAGE_COLUMNS}) from stdin`;

/**
 * Batches at least this large go through the staging table. The stage costs PostgreSQL about a millisecond per batch
 * whatever its size (the DO statement, the COPY, extending the temporary file, emptying it at commit); the JSON
 * document costs more per event (parsed as json, each attrs again as jsonb). Measured one batch after another on the
 * development machine, PostgreSQL CPU per batch: 1 event 1.1 ms (JSON) against 1.8 ms (COPY), 100–200 events about
 * even, 400 events 14 / 12 ms, 1,000 events 40 / 26 ms.
 */
export const COPY_MIN_EVENTS = 150;

/**
 * Inserts prepared events in one statement — which also creates the tasks of the events it stored (never of refused
 * or duplicate ones) and compares every id that was already taken with the stored event — then applies the
 * side-effect transitions, all in one transaction. A batch of {@link COPY_MIN_EVENTS} or more reaches that statement,
 * on PostgreSQL, through `COPY` into a temporary staging table (decision 0021: each attrs object is parsed once,
 * straight to jsonb); a smaller one, and every batch on PGlite (whose driver has no `COPY` from a client stream), as
 * one JSON document read by `json_to_recordset`. Both feed the same `INSERT … SELECT … ON CONFLICT DO NOTHING`.
 * @param sender who sent the events: the actor of the audit entries of the effects they move (written in the same
 *   transaction, sealed by the caller after it commits).
 * @returns per event id: stored, duplicate (same content) or conflict (other content, with the stored event's digest).
 */
export async function storeEvents(
  db: Db,
  sender: Actor,
  prepared: PreparedEvent[],
  key: SigningKey,
): Promise<Map<string, StoreOutcome>> {
  const tenantId = sender.tenantId;
  let copyData: Buffer | undefined;
  return withRetry(() =>
    db.transaction(async (tx) => {
      const staged =
        prepared.length >= COPY_MIN_EVENTS &&
        (await copyIn(tx, COPY_STAGE, () => (copyData ??= batchCopyData(prepared)), ENSURE_STAGE)) !== null;
      const source = staged ? STAGE_SOURCE : jsonSource(prepared);
      const rows = await queryRows<{ event_id: string; outcome: "stored" | "duplicate" | "conflict" }>(
        tx,
        insertStatement(tenantId, source),
      );
      const outcome = new Map<string, StoreOutcome>(rows.map((r) => [r.event_id, { status: r.outcome }]));
      // An id another batch stored while this statement ran: compare with it now that it is visible.
      const raced = prepared.filter((e) => !outcome.has(e.id));
      if (raced.length) {
        const again = await queryRows<{ event_id: string; outcome: "duplicate" | "conflict" }>(
          tx,
          staged
            ? compareStatement(
                tenantId,
                STAGE_SOURCE,
                sql`where x.event_id in (${sql.join(
                  raced.map((e) => sql`${e.id}`),
                  sql`, `,
                )})`,
              )
            : compareStatement(tenantId, jsonSource(raced), sql``),
        );
        for (const r of again) outcome.set(r.event_id, { status: r.outcome });
        // An id `event_ids` holds whose event is gone (retention dropped its month): still a duplicate, with nothing
        // left to compare its content with.
        for (const e of raced) if (!outcome.has(e.id)) outcome.set(e.id, { status: "duplicate" });
      }
      const conflicts = [...outcome].filter(([, o]) => o.status === "conflict").map(([id]) => id);
      if (conflicts.length) {
        for (const stored of await storedEvents(tx, tenantId, conflicts))
          outcome.get(stored.id)!.stored_digest = eventDigest(stored);
      }

      const stored = prepared.filter((e) => outcome.get(e.id)?.status === "stored");
      if (stored.length) await noteFutureClocks(tx, tenantId, stored);
      const denied = stored.filter((e) => e.type === "egress.denied");
      if (denied.length) await enqueueNotifications(tx, tenantId, egressDenied(denied));
      const outcomes = stored.filter((e) => e.type === "tool.completed" || e.type === "tool.failed");
      const callEffects = outcomes.length ? await callsWithEffects(tx, tenantId, outcomes) : new Set<string>();
      const transitions = stored.filter((e) => needsTransition(e, callEffects));
      if (transitions.length) {
        const notes = await applyEventTransitions(tx, sender, transitions, key);
        for (const [id, note] of notes) if (note.name) outcome.get(id)!.effect = note;
        // The effects these events moved carry the server's seal, committed with them (decision 0035).
        await sealMovedEffects(
          tx,
          key,
          tenantId,
          transitions.map((e) => e.task_id),
        );
      }
      return outcome;
    }),
  );
}

/**
 * Where the statements read the batch from: `from` names it `x` (after the CTE `cte`, if any), and `attrs` is an
 * event's attrs as jsonb.
 */
type BatchSource = { cte: SQL | null; from: SQL; attrs: SQL };

/** PostgreSQL: the staging table the batch was copied into; its attrs are jsonb already (parsed once, by COPY). */
const STAGE_SOURCE: BatchSource = { cte: null, from: sql.raw(`${STAGE} x`), attrs: sql`x.attrs` };

/**
 * PGlite: the batch as one JSON document, read once by `json_to_recordset` into the CTE `x` (attrs as `json`, so each
 * attrs object is parsed to jsonb once, where it is used).
 */
function jsonSource(prepared: PreparedEvent[]): BatchSource {
  return {
    cte: sql`x as (
      select * from json_to_recordset(${batchDocument(prepared)}::json) as x(
        ord integer, event_id text, task_id text, plane event_plane, type text, occurred_at timestamptz,
        environment_id text, attempt integer, actor text, attrs json, redaction_count integer, redaction_kinds text[]))`,
    from: sql`x`,
    attrs: sql`coalesce(x.attrs::jsonb, '{}'::jsonb)`,
  };
}

/**
 * SQL: the one statement that stores a batch read from `source`: each id is claimed in `event_ids` (the exactly-once
 * check across every partition of `events`, decision 0054) and the events whose ids it claimed are stored, each in the
 * partition `custody_event_retention_class(type)` names. Ids are claimed in event-id order and tasks in
 * task-id order so concurrent batches take those locks in one order, but each row's `seq` (the server's receive order,
 * docs/concepts.md#receive-order) is drawn in the order of the batch (`ord`) first: within a batch, the batch's order
 * is the order the server received its facts in. Answers `stored` for each row it inserted and `duplicate`/`conflict`
 * for each id that was stored before. A new task takes its workflow from the first stored `task.created` of the batch that
 * names one (decision 0049; an existing task without one gets it in applyEventTransitions, by the same rule).
 */
function insertStatement(tenantId: string, source: BatchSource): SQL {
  return sql`
    with ${source.cte ? sql`${source.cte},` : sql``}
    ids as (
      insert into event_ids (tenant_id, event_id)
      select ${tenantId}::uuid, x.event_id from ${source.from}
      order by x.event_id
      on conflict do nothing
      returning event_id),
    ins as (
      insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, environment_id, attempt, actor, attrs,
                          redaction_count, redaction_kinds, seq, retention_class)
      overriding system value
      select ${tenantId}::uuid, x.event_id, x.task_id, x.plane, x.type, x.occurred_at, x.environment_id, x.attempt, x.actor,
             ${source.attrs}, x.redaction_count, x.redaction_kinds, x.seq, custody_event_retention_class(x.type)
      from (select b.*, nextval('events_seq_seq') as seq
            from (select * from ${source.from} where x.event_id in (select event_id from ids) order by x.ord) b) x
      order by x.event_id
      returning event_id, task_id, seq,
        case when type = 'task.created' then attrs ->> 'workflow' end as workflow),
    new_tasks as (
      insert into tasks (tenant_id, task_id, workflow)
      select distinct on (i.task_id) ${tenantId}::uuid, i.task_id, i.workflow from ins i
      order by i.task_id, i.workflow is null, i.seq
      on conflict do nothing)
    select i.event_id, 'stored' as outcome from ins i
    union all
    ${comparedRows(tenantId, source, sql`where not exists (select 1 from ids where ids.event_id = x.event_id)`)}`;
}

/** SQL: `duplicate` or `conflict` for each row of the batch (filtered by `where`) whose id is already stored. */
function compareStatement(tenantId: string, source: BatchSource, where: SQL): SQL {
  return sql`${source.cte ? sql`with ${source.cte}` : sql``} ${comparedRows(tenantId, source, where)}`;
}

function comparedRows(tenantId: string, source: BatchSource, where: SQL): SQL {
  return sql`select x.event_id, ${sameContent(source.attrs)} as outcome
    from ${source.from} join lateral (${storedById(tenantId)}) e on true ${where}`;
}

/**
 * SQL: the stored event with the incoming `x`'s id, probed by `events_id_idx` (in each partition) once per incoming row
 * whose id was taken before. Both guards are
 * against statistics that do not know the tenant yet (a new tenant that then grows), which estimate its rows at one:
 * `offset 0` keeps the planner from turning the probes into a hash join over all of the tenant's events, and the
 * tenant id as a sub-select (a value the planner cannot look up in the statistics, so it estimates a tenant's share
 * of the table) keeps each probe on `events_id_idx` — with the literal, it chose any index leading with `tenant_id`
 * (`events_task_arrival_idx`) and filtered the tenant's every event for each incoming id: each batch cost in
 * proportion to all the tenant had stored.
 * Rows the same statement inserts are not visible here (one snapshot for the whole statement), so an id found here
 * was stored before: a duplicate or a conflict, never this batch's own insert.
 */
export function storedById(tenantId: string): SQL {
  return sql`select e.task_id, e.plane, e.type, e.occurred_at, e.environment_id, e.attempt, e.actor, e.attrs
             from events e where e.tenant_id = (select ${tenantId}::uuid) and e.event_id = x.event_id offset 0`;
}

/** SQL: 'duplicate' when the stored event `e` has the same content as the incoming `x` (attrs as jsonb: `attrs`), else 'conflict'. */
function sameContent(attrs: SQL) {
  return sql`case when e.task_id = x.task_id and e.plane = x.plane and e.type = x.type and e.occurred_at = x.occurred_at
    and e.environment_id is not distinct from x.environment_id and e.attempt is not distinct from x.attempt
    and e.actor is not distinct from x.actor and e.attrs = ${attrs}
  then 'duplicate' else 'conflict' end`;
}

/** Stored events by id, as {@link eventDigest} reads them. */
async function storedEvents(tx: Db, tenantId: string, ids: string[]): Promise<EventContent[]> {
  const rows = await queryRows<{
    event_id: string;
    task_id: string;
    plane: string;
    type: string;
    occurred_at: string;
    environment_id: string | null;
    attempt: number | null;
    actor: string | null;
    attrs: Record<string, unknown>;
  }>(
    tx,
    sql`select event_id, task_id, plane, type, ${isoUtc("occurred_at")} as occurred_at, environment_id, attempt, actor, attrs
        from events where tenant_id = ${tenantId} and event_id in (${sql.join(
          ids.map((id) => sql`${id}`),
          sql`, `,
        )})`,
  );
  return rows.map(({ event_id, ...r }) => ({ id: event_id, ...r }));
}

/** Characters COPY's text format reads specially inside a field. */
const COPY_SPECIAL = /[\\\n\r\t]/;

/** One free-text field in COPY text format: backslash, newline, carriage return and tab escaped. */
function copyField(v: string | undefined): string {
  if (v === undefined) return "\\N";
  return COPY_SPECIAL.test(v)
    ? v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")
    : v;
}

/** A PostgreSQL array literal of text elements, each quoted (so commas, braces, quotes and spaces stay inside it). */
function textArray(items: string[]): string {
  return `{${items.map((v) => `"${v.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
}

/**
 * The batch in COPY text format (one line per event, {@link STAGE_COLUMNS} in order), written straight into one buffer
 * (no intermediate string) from the attrs JSON made in prepareBatch: attrs are not serialized again, and
 * `JSON.stringify` escapes every control character, so only their backslashes need doubling. task_id, plane, type and
 * occurred_at passed patterns that admit no character COPY escapes; the free-text fields are escaped.
 */
export function batchCopyData(prepared: PreparedEvent[]): Buffer {
  let size = 0;
  for (const e of prepared) size += e.attrs_json.length + 300;
  let buf = Buffer.allocUnsafe(size);
  let at = 0;
  const put = (text: string) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for that, and `write` never truncates.
    if (at + 3 * text.length > buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * buf.length, at + 3 * text.length));
      buf.copy(bigger, 0, 0, at);
      buf = bigger;
    }
    at += buf.write(text, at);
  };
  for (let i = 0; i < prepared.length; i++) {
    const e = prepared[i]!;
    put(
      `${i}\t${copyField(e.id)}\t${e.task_id}\t${e.plane}\t${e.type}\t${e.occurred_at}\t${copyField(e.environment_id)}\t` +
        `${e.attempt ?? "\\N"}\t${copyField(e.actor)}\t`,
    );
    put(e.attrs_json.includes("\\") ? e.attrs_json.replace(/\\/g, "\\\\") : e.attrs_json);
    put(`\t${e.redaction_count}\t${e.redaction_kinds === null ? "\\N" : copyField(textArray(e.redaction_kinds))}\n`);
  }
  return buf.subarray(0, at);
}

/**
 * The batch as one JSON array for `json_to_recordset` (PGlite), assembled from the attrs JSON made in prepareBatch
 * (attrs are not serialized twice). task_id, plane, type and occurred_at passed patterns that admit no character JSON
 * escapes, so they are written as they are; the free-text fields go through JSON.stringify.
 */
function batchDocument(prepared: PreparedEvent[]): string {
  const q = JSON.stringify;
  const rows = new Array<string>(prepared.length);
  for (let i = 0; i < prepared.length; i++) {
    const e = prepared[i]!;
    rows[i] =
      `{"ord":${i},"event_id":${q(e.id)},"task_id":"${e.task_id}","plane":"${e.plane}","type":"${e.type}","occurred_at":"${e.occurred_at}",` +
      `"environment_id":${e.environment_id === undefined ? "null" : q(e.environment_id)},"attempt":${e.attempt ?? "null"},` +
      `"actor":${e.actor === undefined ? "null" : q(e.actor)},"attrs":${e.attrs_json},"redaction_count":${e.redaction_count},` +
      `"redaction_kinds":${e.redaction_kinds === null ? "null" : q(e.redaction_kinds)}}`;
  }
  return `[${rows.join(",")}]`;
}
