/**
 * One write, one go (docs/concepts.md#a-second-write-of-the-same-payload, decision 0029): a mutation whose action and
 * payload digest equal those of another effect of the same task that is in flight, completed or unknown is a second
 * write of the same thing — a retry under a new name or key, which is how a runtime charges twice — and does not start,
 * on every path that starts a write (the intent route, a `side_effect.intent` event, an imported RunState). A write
 * that means to repeat says so (`repeats: <effect name>`, naming the latest of the identical writes), is recorded, and
 * meets the approval rules of the write it repeats.
 *
 * Digests compare without case and without a `sha256:` prefix; actions without case, and an effect reported without
 * an action matches any. An effect under the intent's own key is not "another write": the key rule answers for it
 * (`idempotency_key_mismatch` when the key is bound to another effect). {@link sameWritesSql} reads the facts (inside the intent's one facts statement, or on its own
 * for an event), {@link duplicateVerdict} decides from them (pure).
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { SideEffectStatus } from "@/db/schema/enums";
import type { DuplicatePayloadDetails, Receipt } from "@/lib/contract/api";
import { DomainError } from "../errors";

/** The statuses in which an effect's write may have been made: a second identical write is refused. */
export const WRITTEN_STATUSES = ["in_flight", "completed", "unknown"] as const satisfies readonly SideEffectStatus[];

/** Another effect of the task that made (or may have made) the same write. */
export type SameWrite = {
  name: string;
  idempotency_key: string;
  status: (typeof WRITTEN_STATUSES)[number];
  receipt: (Receipt & { warnings?: string[] }) | null;
  intent_at: string | null;
};

/** The effect an intent's `repeats` names, as far as the rule needs it. */
export type RepeatedEffect = {
  name: string;
  /** Same action (or one side has none) and the same payload digest as the intent. */
  same_payload: boolean;
  /** Its write went under an approval request (any decision): a repeat needs one too. */
  had_approval: boolean;
};

/** What {@link duplicateVerdict} reads. */
export type DuplicateFacts = {
  /** Other mutating effects of the task with the same action and digest, in a written status, latest intent first. */
  same: SameWrite[];
  /** The effect `repeats` names, when the intent names one and the task has it. */
  repeated: RepeatedEffect | null;
};

/** What an intent asks: its effect's name and key, action, digest and the effect it says it repeats. */
export type DuplicateProbe = {
  name: string;
  idempotencyKey: string;
  action: string | null;
  payloadDigest: string;
  repeats: string | null;
};

/**
 * SQL: a `json_build_object('same', [...], 'repeated', {...}|null)` of the task's facts for `probe` — a scalar
 * subquery, to embed in a statement over `tasks t` (`t.tenant_id`, `t.task_id`) or run by {@link readDuplicateFacts}.
 * The digest expression is the one the index `side_effects_payload_idx` is built on (db/schema/tasks.ts).
 */
export function sameWritesSql(probe: DuplicateProbe): SQL {
  const digest = sql`lower(regexp_replace(${probe.payloadDigest}::text, '^sha256:', '', 'i'))`;
  const sameAction = sql`(s.action is null or ${probe.action}::text is null or lower(s.action) = lower(${probe.action}::text))`;
  return sql`json_build_object(
      'same', (select coalesce(json_agg(json_build_object('name', s.name, 'idempotency_key', s.idempotency_key,
                        'status', s.status, 'receipt', s.receipt,
                        'intent_at', to_char(s.intent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                      order by s.intent_at desc nulls last, s.name), '[]'::json)
               from side_effects s
               where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.payload_digest is not null
                 and lower(regexp_replace(s.payload_digest, '^sha256:', '', 'i')) = ${digest}
                 and s.name <> ${probe.name} and s.idempotency_key <> ${probe.idempotencyKey}
                 and s.mutation and ${sameAction}
                 and s.status in ('in_flight', 'completed', 'unknown')),
      'repeated', ${
        probe.repeats === null
          ? sql`null::json`
          : sql`(select json_build_object('name', s.name,
                   'same_payload', coalesce(s.payload_digest is not null
                     and lower(regexp_replace(s.payload_digest, '^sha256:', '', 'i')) = ${digest} and ${sameAction}, false),
                   'had_approval', exists (select 1 from approval_requests r where r.tenant_id = s.tenant_id
                     and r.task_id = s.task_id and r.side_effect = s.name and r.idempotency_key = s.idempotency_key))
                 from side_effects s
                 where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.name = ${probe.repeats})`
      })`;
}

/** Reads {@link DuplicateFacts} of one task on their own (the events path; the intent route reads them in its facts statement). */
export async function readDuplicateFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  probe: DuplicateProbe,
): Promise<DuplicateFacts> {
  const [row] = await queryRows<{ facts: DuplicateFacts | string }>(
    db,
    sql`select ${sameWritesSql(probe)} as facts from tasks t where t.tenant_id = ${tenantId} and t.task_id = ${taskId}`,
  );
  return parseDuplicateFacts(row?.facts ?? null);
}

/** The facts as a statement returned them (json arrives parsed, or as text from a driver without parsers). */
export function parseDuplicateFacts(raw: DuplicateFacts | string | null): DuplicateFacts {
  if (raw === null) return { same: [], repeated: null };
  return typeof raw === "string" ? (JSON.parse(raw) as DuplicateFacts) : raw;
}

/** A stored receipt as the error offers it for replay. */
function replayable(r: Receipt & { warnings?: string[] }): Receipt {
  return {
    external_operation_id: r.external_operation_id,
    result_digest: r.result_digest ?? null,
    completed_at: r.completed_at,
  };
}

/**
 * The rule (pure): may this mutation start, given the task's identical writes?
 * @returns `{needsApproval}` when it may (true when it repeats a write that went under an approval), or the refusal:
 *   `repeats_mismatch` (422: `repeats` names this effect itself, an effect the task does not have, or one with another
 *   action or payload), `duplicate_payload` (409: an identical write is in flight, completed or unknown and the intent
 *   does not name the latest of them in `repeats`; details name it, its key and status, and a completed one's receipt
 *   for replay).
 */
export function duplicateVerdict(
  probe: Pick<DuplicateProbe, "name" | "repeats">,
  facts: DuplicateFacts,
): { needsApproval: boolean } | { refused: DomainError } {
  const { repeats } = probe;
  if (repeats !== null) {
    if (repeats === probe.name)
      return {
        refused: repeatsMismatch(repeats, `${repeats} is this effect itself; name the earlier write it repeats`),
      };
    if (!facts.repeated) return { refused: repeatsMismatch(repeats, `this task has no side effect named ${repeats}`) };
    if (!facts.repeated.same_payload)
      return {
        refused: repeatsMismatch(
          repeats,
          `${repeats} was registered with another action or payload digest, so this write does not repeat it`,
        ),
      };
  }
  const latest = facts.same[0];
  const needsApproval = facts.repeated?.had_approval === true;
  if (!latest || latest.name === repeats) return { needsApproval };
  const status = latest.status.replace("_", " ");
  const advice =
    latest.status === "completed"
      ? `Its receipt is in details.receipt: use it instead of writing again.`
      : latest.status === "in_flight"
        ? `Wait for its receipt.`
        : `A responder must reconcile it first.`;
  const named =
    repeats !== null
      ? `repeats names ${repeats}, but ${latest.name} is a later write of the same payload: name it. `
      : "";
  return {
    refused: new DomainError(
      "duplicate_payload",
      `${named}${latest.name} (idempotency key ${latest.idempotency_key}) has the same action and payload digest and is ${status}: this would be a second write of the same payload. ${advice} A retry of that write goes under its own name and key; a deliberate second write names it: "repeats": "${latest.name}".`,
      {
        side_effect: latest.name,
        idempotency_key: latest.idempotency_key,
        status: latest.status,
        ...(latest.status === "completed" && latest.receipt ? { receipt: replayable(latest.receipt) } : {}),
        ...(repeats !== null ? { repeats_named: repeats } : {}),
        same_writes: facts.same.map((s) => ({
          side_effect: s.name,
          idempotency_key: s.idempotency_key,
          status: s.status,
        })),
      } satisfies DuplicatePayloadDetails,
    ),
  };
}

function repeatsMismatch(repeats: string, why: string): DomainError {
  return new DomainError("repeats_mismatch", `repeats names ${repeats}, but ${why}.`, { repeats });
}
