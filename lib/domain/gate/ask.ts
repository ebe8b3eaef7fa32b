/**
 * `POST /api/v1/tasks/{task_id}/resume`: gathers the stored facts of a task and asks the pure gate
 * ({@link evaluateGate}). Reads only (apart from the lazy lease-expiry transition).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { SIDE_EFFECT_COLUMNS, type SideEffectRow } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import { downgradedSql, listCheckpoints, type CheckpointRow } from "@/db/queries/tasks";
import type { SideEffectStatus } from "@/db/schema/enums";
import type { GateVerdict } from "@/lib/contract/api";
import { notePendingAudit, withAuditSealed } from "../audit/append";
import { authorize } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { notFound, validationError } from "../errors";
import { ATTEMPT_MAX } from "../limits";
import { checkTaskId } from "../tasks/read";
import { checkCheckpoint, placedCheck, type CheckpointCheck, type StoredCheckpoint } from "../tasks/signatures";
import { policyDocumentCached, policyGateFactsFor } from "../policies/egress";
import { GATE_ROW_TYPES } from "../events/catalogue";
import { uncheckedCompaction } from "./compaction";
import { evaluateGate, type GateCheckpoint, type GateFacts } from "./evaluate";
import { toolReportsOf, type AcceptedToolDefinition } from "./tools";
import { canonicalName } from "../names";
import { recordGateAsk, type AskCounted } from "./asks";
import { approvalFactsOf } from "../approvals/gate";
import { APPROVAL_COLUMNS, type ApprovalRow } from "../approvals/read";
import { LEASE_AUDIT_UPTO, LEASE_EXPIRED_REASON, leaseExpiryCtes } from "../side-effects/lifecycle/lease";
import type { SigningContext } from "../context";
import { taskDeletedError } from "../tasks/deleted";
import { sameWritesSql, type DuplicateFacts, type DuplicateProbe } from "../side-effects/duplicates";
import { LEGACY_SEAL, sealHolds, type SealedEffect } from "../side-effects/lifecycle/seal";

export const resumeBodySchema = z.strictObject({
  /** Tool name → sha256 of the definition the runtime would resume with. */
  tool_definitions: z
    .record(z.string().min(1).max(200), z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256"))
    .optional(),
  /** The sandbox attempt asking (a live intent of an older attempt then holds new writes back). */
  attempt: z.number().int("attempt must be a whole number").min(1, "attempt starts at 1").max(ATTEMPT_MAX).optional(),
});

type GateEventRow = {
  event_id: string;
  type: string;
  /** The server's receive order. */
  seq: number;
  occurred_at: string;
  received_at: string;
  attempt: number | null;
  /** The sandbox id the event names. */
  environment_id: string | null;
  attrs: Record<string, unknown>;
};

/**
 * The event types the facts statement ships whole (the catalogue's `gateFact: "rows"`) as SQL literals, not
 * parameters: under a generic plan (decision 0022) PostgreSQL can only use the partial index `events_task_facts_idx`
 * when it sees the types themselves. Not `snapshot.saved` (`gateFact: "probe"`): a long run saves one per step, and
 * the gate only asks whether a restored snapshot's digest is among them, which the statement answers itself
 * (`saved_digests`). Code constants, checked here. Every read of `events` in the statement also names
 * `retention_class = 'fact'`: each type it reads is a fact (decision 0054), so its plan touches the kept partition
 * alone, however many months of history the table holds.
 */
const GATE_EVENT_TYPES_SQL = sql.raw(
  GATE_ROW_TYPES.map((ty) => {
    if (!/^[a-z_.]+$/.test(ty)) throw new Error(`not a plain event type: ${ty}`);
    return `'${ty}'`;
  }).join(", "),
);

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/** What the gate reads of the latest checkpoint, with what identifies the stored record exactly. */
type GateCheckpointRow = {
  version: number;
  phase: unknown;
  tool_definitions: Record<string, string> | null;
  /** The snapshot the checkpoint names (its record's, or the latest saved before it). */
  snapshot: { digest: unknown; snapshot_id: unknown } | null;
  /** Without a record's snapshot: the digests saved since the one that stands for it (those count as current too). */
  snapshots_since: string[] | null;
  digest: string;
  signature: string;
  key_id: string;
  created_at: string;
  /**
   * The stored row's version (its `xmin`: the transaction that wrote it). Any change to the stored row writes a new
   * version with another `xmin`, so (task, version, row version) names one stored content exactly (decision 0022).
   */
  row_version: string;
  /**
   * A format-1 row (only its record signed) above a format-2 one of the same task: the server stopped writing format 1
   * before that version, so the row was put there (decision 0035).
   */
  downgraded: boolean;
  /** The task row's `latest_version`: the version of the newest checkpoint the server wrote. */
  task_version: number;
};

/** The facts statement's one row (json columns arrive parsed; PGlite or a driver without parsers gives text). */
type GateFactsRow = {
  task_id: string;
  principal: string | null;
  phase: string;
  current_attempt: number;
  /** A person ended the task (lib/domain/tasks/terminate.ts): when, who, why; null while not. */
  terminated_at: string | null;
  terminated_by: string | null;
  terminated_reason: string | null;
  /** An owner deleted the task (lib/domain/tasks/delete.ts, decision 0054): the gate answers 410 task_deleted. */
  deleted_at: string | null;
  deleted_by: string | null;
  expired: string[] | string | null;
  /** The highest audit entry id the lease expiry wrote (null when no lease ran out). */
  audit_upto: string | number | null;
  checkpoint: GateCheckpointRow | string | null;
  /**
   * The effects that can block or hold back a write, in full; and, unless for a write, the names and statuses of the
   * ones that may start (the verdict's `permitted`). Other statuses (completed, …) play no part in the verdict.
   */
  effects: { blocking: GateFacts["side_effects"]; open: Array<[string, SideEffectStatus]> } | string;
  revocation: { principal: string; reason: string; revoked_at: string } | string | null;
  events: GateEventRow[] | string;
  /** The digests of restored snapshots that a `snapshot.saved` of the task also names (both JSON strings). */
  saved_digests: string[] | string;
  effect: SideEffectRow | string | null;
  pending_receipt: boolean | null;
  /** The task's live approval requests whose effect has not gone (the gate's approval reasons); usually none. */
  live_requests: ApprovalRow[] | string;
  /** The tenant's current policy version, when one is active. */
  policy: { version: number; digest: string } | string | null;
  /** Hosts the task's runs were allowed to reach (lower case), when a policy is active; for drift. */
  egress_hosts: string[] | string | null;
  /** For an intent: whether the approval path may apply (a request under its key, or a rule for its action). */
  approval_hint: { key_requests: boolean; rule_requires: boolean } | string | null;
  /** With `countAsk`: the verdict the counted `gate_asks` row held before this ask; null when there was no row. */
  asked_verdict: GateVerdict["verdict"] | null;
  /** With `duplicateProbe`: the task's identical writes (lib/domain/side-effects/duplicates.ts). */
  duplicates: DuplicateFacts | string | null;
  /**
   * `[name, row version]` of every effect whose state needs the server's seal (decision 0035), except rows this
   * transaction wrote itself: the server's own moves, sealed before it commits (an event batch asks the gate between
   * the moves it makes).
   */
  sealed: Array<[string, string]> | string;
  /** The task's accepted tool definitions (decision 0033). */
  tools_accepted: AcceptedToolDefinition[] | string;
};

const parsed = <T>(v: T | string): T => (typeof v === "string" ? (JSON.parse(v) as T) : v);

/**
 * Collects the facts the gate needs from the database (the same facts for `POST /resume` and for deciding an intent).
 * @param askingAttempt the attempt asking, when the request names one.
 * @param opts.forWrite read only the side effects that can block or hold back a write (an intent's decision does not
 *   need the list of permitted effects).
 * @throws DomainError not_found when the tenant has no such task.
 */
export async function gatherGateFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
  toolDefinitions: Record<string, string> = {},
  now = new Date(),
  askingAttempt: number | null = null,
  opts: { forWrite?: boolean } = {},
): Promise<GateFacts> {
  const read = await readGateFacts(db, tenantId, taskId, key, {
    toolDefinitions,
    now,
    askingAttempt,
    forWrite: opts.forWrite,
  });
  if (!read) throw notFound(`Task ${taskId}`);
  return read.facts;
}

/**
 * The gate's facts of a task in ONE statement (task, lease expiry, latest checkpoint, side effects, principal
 * revocation, the gate's event types, which restored snapshots' digests a saved snapshot names, and optionally one
 * side effect by name), then the checkpoint's signature,
 * checked once per stored record (see {@link checkpointVerifiesCached}). Lazily expired leases are written by the same
 * statement (the lifecycle's `lease_expired`, with its audit entries; an enclosing `withAuditSealed` seals them) and
 * shown as `unknown` here, as a separate expiry before the read would show them.
 * Inside an intent's transaction the caller holds the task row FOR SHARE (taken by an earlier statement, so this
 * statement's snapshot sees every transition committed before the lock was granted).
 * @param opts.effectName also read this side effect (the intent's own), with the lease expiry applied.
 * @returns the facts, the named effect, and whether a receipt waits for it; null when the tenant has no such task.
 */
export async function readGateFacts(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
  opts: {
    toolDefinitions?: Record<string, string>;
    now?: Date;
    askingAttempt?: number | null;
    forWrite?: boolean;
    effectName?: string;
    /** Also say whether a receipt for this effect name and key waits for its intent (`no_intent`, not applied). */
    pendingReceiptKey?: string;
    /**
     * Also say whether the approval path may apply to an intent with this key, action and tool (a request under the
     * key, a Settings rule on the action, or the active policy's tool entry; decision 0033).
     */
    approvalProbe?: { idempotencyKey: string; action: string; tool: string };
    /** Also read the task's other writes of this action and payload digest, and the effect `repeats` names. */
    duplicateProbe?: DuplicateProbe;
    /**
     * Count a runtime's ask of the gate in the same statement: the task's `gate_asks` row for its current attempt, when
     * one exists, moves on by one ask (see {@link recordGateAsk}, which finishes the count).
     */
    countAsk?: boolean;
  } = {},
): Promise<{
  facts: GateFacts;
  effect: SideEffectRow | undefined;
  pendingReceipt: boolean;
  /** With `approvalProbe`: a live or decided request exists under the key, or the tenant's rule requires approval. */
  approvalMayApply: boolean;
  /** With `countAsk`: the counted row's verdict before this ask, or null when the attempt had no row yet. */
  askCounted: AskCounted | null;
  /** With `duplicateProbe`: the facts of the duplicate rule, as the statement returned them. */
  duplicates: DuplicateFacts | string | null;
} | null> {
  const [row] = await queryRows<GateFactsRow>(
    db,
    sql`with ${leaseExpiryCtes(tenantId, taskId)}${
      opts.countAsk
        ? sql`,
        asked as (
          update gate_asks g set asks = g.asks + 1, last_asked_at = greatest(g.last_asked_at, now())
          from tasks k where k.tenant_id = ${tenantId} and k.task_id = ${taskId}
            and g.tenant_id = k.tenant_id and g.task_id = k.task_id and g.attempt = k.current_attempt
          returning g.last_verdict)`
        : sql``
    }
        select t.task_id, t.principal, t.phase, t.current_attempt,
          ${isoUtc("t.terminated_at")} as terminated_at, t.terminated_by, t.terminated_reason,
          ${isoUtc("t.deleted_at")} as deleted_at, t.deleted_by,
          (select json_agg(x.name) from expired x) as expired, ${LEASE_AUDIT_UPTO} as audit_upto,
          (select json_build_object('version', c.version, 'phase', c.record -> 'phase', 'tool_definitions', c.record -> 'tool_definitions',
                    'snapshot', coalesce(c.record -> 'snapshot', f.snap),
                    'snapshots_since', case when (c.record -> 'snapshot') is null and f.seq is not null then
                      (select json_agg(distinct s.attrs ->> 'digest') from events s
                        where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.retention_class = 'fact' and s.type = 'snapshot.saved'
                          and jsonb_typeof(s.attrs -> 'digest') = 'string' and s.seq >= f.seq) end,
                    'digest', c.digest, 'signature', c.signature, 'key_id', c.key_id, 'created_at', ${isoUtc("c.created_at")},
                    'row_version', c.xmin::text, 'task_version', t.latest_version,
                    'downgraded', ${downgradedSql("c")})
             from task_checkpoints c
             left join lateral (
               select jsonb_build_object('digest', s.attrs -> 'digest', 'snapshot_id', s.attrs -> 'snapshot_id') as snap, s.seq
               from events s where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.retention_class = 'fact' and s.type = 'snapshot.saved'
                 and jsonb_typeof(s.attrs -> 'digest') = 'string' and s.received_at <= c.created_at
               order by s.seq desc limit 1) f on (c.record -> 'snapshot') is null
             where c.tenant_id = t.tenant_id and c.task_id = t.task_id
             order by c.version desc limit 1) as checkpoint,
          (select json_build_object(
                    'blocking', coalesce(json_agg(json_build_object('name', s.name, 'status', s.status, 'status_reason', s.status_reason,
                      'lease_expires_at', ${isoUtc("s.lease_expires_at")}, 'intent_attempt', s.intent_attempt) order by s.name)
                      filter (where s.status in ('unknown', 'in_flight', 'awaiting_approval')), '[]'::json),
                    'open', ${
                      opts.forWrite
                        ? sql`'[]'::json`
                        : sql`coalesce(json_agg(json_build_array(s.name, s.status) order by s.name)
                            filter (where s.status in ('not_started', 'approved', 'failed')), '[]'::json)`
                    })
             from side_effects s where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.status <> 'completed') as effects,
          (select json_build_object('principal', r.principal, 'reason', r.reason, 'revoked_at', ${isoUtc("r.revoked_at")})
             from principal_revocations r where r.tenant_id = t.tenant_id and lower(r.principal) = lower(t.principal)
             limit 1) as revocation,
          (select coalesce(json_agg(json_build_object('event_id', e.event_id, 'type', e.type, 'seq', e.seq,
                    'occurred_at', ${isoUtc("e.occurred_at")}, 'received_at', ${isoUtc("e.received_at")}, 'attempt', e.attempt,
                    'environment_id', e.environment_id,
                    'attrs', e.attrs) order by e.seq), '[]'::json)
             from events e where e.tenant_id = t.tenant_id and e.task_id = t.task_id
               and e.retention_class = 'fact' and e.type in (${GATE_EVENT_TYPES_SQL})) as events,
          (select coalesce(json_agg(distinct r.attrs ->> 'digest'), '[]'::json)
             from events r where r.tenant_id = t.tenant_id and r.task_id = t.task_id and r.retention_class = 'fact' and r.type = 'snapshot.restored'
               and jsonb_typeof(r.attrs -> 'digest') = 'string'
               and (select s.seq from events s
                     where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.retention_class = 'fact' and s.type = 'snapshot.saved'
                       and s.attrs -> 'digest' = r.attrs -> 'digest'
                     order by s.seq desc limit 1) is not null) as saved_digests,
          ${
            opts.effectName === undefined
              ? sql`null::json`
              : sql`(select row_to_json(s) from (select ${SIDE_EFFECT_COLUMNS} from side_effects
                     where tenant_id = t.tenant_id and task_id = t.task_id and name = ${opts.effectName}) s)`
          } as effect,
          ${
            opts.pendingReceiptKey === undefined || opts.effectName === undefined
              ? sql`null::boolean`
              : sql`exists (select 1 from unapplied_receipts u
                     where u.tenant_id = t.tenant_id and u.task_id = t.task_id and u.name = ${opts.effectName}
                       and u.idempotency_key = ${opts.pendingReceiptKey} and u.reason = 'no_intent' and u.outcome = 'applied'
                       and u.applied_at is null)`
          } as pending_receipt,
          (select coalesce(json_agg(a order by a.requested_at, a.id), '[]'::json)
             from (select ${APPROVAL_COLUMNS} from approval_requests r
                   where r.tenant_id = t.tenant_id and r.task_id = t.task_id and r.superseded_by is null and r.consumed_at is null
                     and not exists (select 1 from side_effects s where s.tenant_id = r.tenant_id and s.task_id = r.task_id
                                     and s.name = r.side_effect and s.idempotency_key = r.idempotency_key
                                     and s.status in ('in_flight', 'completed', 'unknown'))) a) as live_requests,
          (select json_build_object('version', p.version, 'digest', p.digest) from policy_versions p
             where p.tenant_id = t.tenant_id and p.activated_at is not null
             order by p.activated_at desc limit 1) as policy,
          (select json_agg(distinct lower(e.attrs ->> 'host')) from events e
             where e.tenant_id = t.tenant_id and e.task_id = t.task_id and e.retention_class = 'fact' and e.type = 'egress.allowed'
               and (e.attrs ->> 'host') is not null
               and exists (select 1 from policy_versions p where p.tenant_id = t.tenant_id and p.activated_at is not null)) as egress_hosts,
          ${
            opts.approvalProbe === undefined
              ? sql`null::json`
              : sql`json_build_object(
                  'key_requests', exists (select 1 from approval_requests r where r.tenant_id = t.tenant_id and r.task_id = t.task_id
                                            and r.idempotency_key = ${opts.approvalProbe.idempotencyKey} and r.superseded_by is null),
                  'rule_requires', coalesce((select x.requires_approval from approval_action_rules x
                                             where x.tenant_id = t.tenant_id and x.action = ${canonicalName(opts.approvalProbe.action)}), false))`
          } as approval_hint,
          ${opts.countAsk ? sql`(select a.last_verdict from asked a)` : sql`null::text`} as asked_verdict,
          (select coalesce(json_agg(json_build_object('tool', d.tool, 'digest', d.digest, 'since', ${isoUtc("d.since")})), '[]'::json)
             from task_tool_definitions d where d.tenant_id = t.tenant_id and d.task_id = t.task_id) as tools_accepted,
          ${opts.duplicateProbe ? sameWritesSql(opts.duplicateProbe) : sql`null::json`} as duplicates,
          (select coalesce(json_agg(json_build_array(s.name, s.xmin::text)), '[]'::json) from side_effects s
             where s.tenant_id = t.tenant_id and s.task_id = t.task_id
               and s.status not in ('unknown', 'awaiting_approval') and s.seal is distinct from ${LEGACY_SEAL}
               and not coalesce(s.xmin = xid(pg_current_xact_id_if_assigned()), false)) as sealed
        from tasks t where t.tenant_id = ${tenantId} and t.task_id = ${taskId}`,
  );
  notePendingAudit(row?.audit_upto);
  if (!row) return null;
  if (row.deleted_at) throw taskDeletedError(taskId, row);
  const task = {
    task_id: row.task_id,
    phase: row.phase,
    principal: row.principal,
    current_attempt: row.current_attempt,
    terminated: row.terminated_at
      ? {
          at: row.terminated_at,
          by: row.terminated_by ?? "someone",
          reason: row.terminated_reason ?? "no reason given",
        }
      : null,
  };
  const expired = new Set(parsed(row.expired) ?? []);
  const { blocking, open } = parsed(row.effects);
  const effects: GateFacts["side_effects"] = [
    ...blocking.map((e) =>
      expired.has(e.name) ? { ...e, status: "unknown" as const, status_reason: LEASE_EXPIRED_REASON } : e,
    ),
    ...open.map(([name, status]) => ({
      name,
      status,
      status_reason: null,
      lease_expires_at: null,
      intent_attempt: null,
    })),
  ];
  let effect = row.effect === null ? undefined : parsed(row.effect);
  if (effect && expired.has(effect.name))
    effect = { ...effect, status: "unknown", status_reason: LEASE_EXPIRED_REASON };
  const events = parsed(row.events);
  const cp = row.checkpoint === null ? null : parsed(row.checkpoint);

  // Every fact below is read in the server's receive order (`seq`; within a batch, the batch's order), never by the
  // runtime's `occurred_at` (docs/concepts.md#receive-order).
  // Snapshots: restores count for the current attempt (or, without attempts, since the last sandbox start).
  const lastSandboxStart = [...events].reverse().find((e) => e.type === "sandbox.created")?.seq ?? null;
  // Saved digests only as far as the verdict asks: those a restore names (newest saves probed first).
  const snapshots_saved = parsed(row.saved_digests).filter((d) => !!d);
  const snapshots_restored = events
    .filter((e) => e.type === "snapshot.restored")
    .filter((e) =>
      e.attempt !== null
        ? e.attempt === task.current_attempt || task.current_attempt === 0
        : lastSandboxStart === null || e.seq >= lastSandboxStart,
    )
    .map((e) => ({
      event_id: e.event_id,
      digest: str(e.attrs.digest),
      snapshot_id: str(e.attrs.snapshot_id),
      received_at: e.received_at,
    }));

  // Credentials: the latest issued instance per credential_ref, and whether it was revoked or expired since. An attach
  // without an issue of that instance starts one too (the run holds it); an attach of the instance held does not renew
  // it, so a policy ttl counts from the server's receipt of the issue (or of the first attach).
  type Held = GateFacts["credentials"][number] & { held_since: string };
  const latestCredential = new Map<string, Held>();
  const refById = new Map<string, string>();
  // A revocation is final for its credential id: an issue or attach of that id received later holds it revoked.
  const revokedIds = new Map<string, string>();
  const instance = (ref: string, id: string | null, e: GateEventRow, extra: Partial<Held> = {}): Held => ({
    credential_ref: ref,
    credential_id: id,
    revoked_at: null,
    expired_at: null,
    expires_at: null,
    held_since: e.received_at,
    ...extra,
  });
  for (const e of events) {
    const id = str(e.attrs.credential_id);
    // A revocation may name only the instance: find its credential_ref from the issue event.
    const ref = str(e.attrs.credential_ref) ?? (id ? refById.get(id) : undefined) ?? id;
    if (!ref) continue;
    if (id && (e.type === "credential.issued" || e.type === "credential.attached")) refById.set(id, ref);
    const cur = latestCredential.get(ref);
    const revokedBefore = id ? revokedIds.get(id) : undefined;
    if (e.type === "credential.issued") {
      latestCredential.set(
        ref,
        instance(ref, id, e, { expires_at: str(e.attrs.expires_at), revoked_at: revokedBefore ?? null }),
      );
      continue;
    }
    const sameInstance = cur && (!id || !cur.credential_id || id === cur.credential_id);
    if (e.type === "credential.attached") {
      if (!cur || !sameInstance || cur.revoked_at || cur.expired_at)
        latestCredential.set(
          ref,
          // An attach naming no instance does not clear a revocation of the instance held.
          instance(ref, id, e, {
            expires_at: str(e.attrs.expires_at),
            revoked_at: revokedBefore ?? (id ? null : (cur?.revoked_at ?? null)),
          }),
        );
    } else if (e.type === "credential.revoked") {
      const revokedId = id ?? cur?.credential_id;
      if (revokedId && !revokedIds.has(revokedId)) revokedIds.set(revokedId, e.occurred_at);
      if (cur && sameInstance) cur.revoked_at ??= e.occurred_at;
      else if (!cur) latestCredential.set(ref, instance(ref, id, e, { revoked_at: e.occurred_at }));
    } else if (e.type === "credential.expired") {
      if (cur && sameInstance) cur.expired_at = e.occurred_at;
      else if (!cur) latestCredential.set(ref, instance(ref, id, e, { expired_at: e.occurred_at }));
    }
  }

  // Approvals and the policy version (docs/concepts.md#approvals): the same standing the intent route answers for its
  // own effect. Policy custody (docs/concepts.md#egress-and-vault-custody): a current policy that fails lint, a host
  // this run reached that it no longer admits, and the current policy's credentials. Both come from the statement
  // above; the database is asked again only when a request is live (its current facts) or when this process has not yet
  // read the current policy version's document.
  const now = opts.now ?? new Date();
  const approvalFacts = await approvalFactsOf(
    db,
    key,
    tenantId,
    taskId,
    parsed(row.live_requests),
    effects.filter((e) => e.status === "awaiting_approval").map((e) => e.name),
    now,
  );
  const policyRef = row.policy === null ? null : parsed(row.policy);
  const policyDoc = policyRef ? await policyDocumentCached(db, tenantId, policyRef) : null;
  const policyFacts =
    policyRef && policyDoc
      ? policyGateFactsFor(taskId, { ...policyRef, ...policyDoc }, parsed(row.egress_hosts) ?? [])
      : { reasons: [], credential_policy: null };
  // The active policy's tool list is an approval rule like Settings' rules (decision 0033).
  const probe = opts.approvalProbe;
  const probeNames = probe ? new Set([canonicalName(probe.action), canonicalName(probe.tool)]) : null;
  const policyRequires =
    probeNames !== null &&
    (policyDoc?.document?.tools ?? []).some((t) => t.requires_approval && probeNames.has(canonicalName(t.name)));

  const check = cp ? await checkpointCheckCached(db, tenantId, taskId, cp, key) : null;
  const latest: GateCheckpoint | null = cp
    ? {
        version: cp.version,
        phase: typeof cp.phase === "string" ? cp.phase : "start",
        signature_valid: check === "valid",
        ...(check === "misplaced" ? { misplaced: true } : {}),
        created_at: cp.created_at,
        tool_definitions: cp.tool_definitions ?? null,
        snapshot: namedSnapshot(cp.snapshot, cp.snapshots_since),
      }
    : null;
  const verified = latest === null || latest.signature_valid ? latest : await latestVerified(db, tenantId, taskId, key);

  // Sandboxes: one the current attempt reports under the id of an earlier attempt's sandbox is not fresh, unless this
  // attempt reported it verified again (`sandbox.verified`).
  const sandboxOf = (e: GateEventRow) => e.environment_id ?? str(e.attrs.sandbox_id);
  const firstAttempt = new Map<string, number>();
  const reverified = new Set<string>();
  for (const e of events) {
    const sandbox = sandboxOf(e);
    if (!sandbox || e.attempt === null) continue;
    if (e.type === "sandbox.verified") reverified.add(`${e.attempt}\u0000${sandbox}`);
    else if (e.type === "sandbox.created" || e.type === "sandbox.replaced")
      firstAttempt.set(sandbox, Math.min(firstAttempt.get(sandbox) ?? e.attempt, e.attempt));
  }
  const sandboxes_reused: NonNullable<GateFacts["sandboxes_reused"]> = [];
  for (const e of events) {
    const sandbox = sandboxOf(e);
    if ((e.type !== "sandbox.created" && e.type !== "sandbox.replaced") || !sandbox) continue;
    if (e.attempt !== task.current_attempt) continue;
    const earlier = firstAttempt.get(sandbox)!;
    if (earlier >= e.attempt || reverified.has(`${e.attempt}\u0000${sandbox}`)) continue;
    if (sandboxes_reused.some((r) => r.sandbox_id === sandbox)) continue;
    sandboxes_reused.push({ event_id: e.event_id, sandbox_id: sandbox, attempt: e.attempt, earlier_attempt: earlier });
  }

  // Tool definitions (decision 0033): what the server received, in its receive order, and the latest checkpoint that
  // verifies; the asking request's own claim is added by the gate and can only add a change.
  const accepted = parsed(row.tools_accepted);
  const tool_definition_reports = accepted.length ? toolReportsOf(events, verified) : [];

  const facts: GateFacts = {
    now,
    task,
    unsealed_effects: await unsealedEffects(db, tenantId, taskId, key, parsed(row.sealed)),
    checkpoint: latest,
    verified_checkpoint: verified,
    asking_attempt: opts.askingAttempt ?? null,
    principal_revocation: row.revocation === null ? null : parsed(row.revocation),
    side_effects: effects.map((e) => ({
      name: e.name,
      status: e.status,
      status_reason: e.status_reason,
      lease_expires_at: e.lease_expires_at,
      intent_attempt: e.intent_attempt,
    })),
    snapshots_saved,
    // A restore the server received before the checkpoint to resume from is part of what that checkpoint recorded.
    snapshots_restored: snapshots_restored.map(({ received_at, ...r }) => ({
      ...r,
      after_checkpoint: !verified || received_at >= verified.created_at,
    })),
    sandboxes_reused,
    credentials: [...latestCredential.values()],
    credential_policy: policyFacts.credential_policy,
    tool_definitions_now: opts.toolDefinitions ?? {},
    tool_definitions_accepted: accepted,
    tool_definition_reports,
    compaction_unchecked: uncheckedCompaction(events),
    approvals: approvalFacts.approvals,
    policy: [...approvalFacts.policy, ...policyFacts.reasons],
  };
  const hint = row.approval_hint === null ? null : parsed(row.approval_hint);
  return {
    facts,
    effect,
    pendingReceipt: row.pending_receipt === true,
    approvalMayApply: policyRequires || (hint !== null && (hint.key_requests || hint.rule_requires)),
    askCounted: row.asked_verdict === null ? null : { previousVerdict: row.asked_verdict },
    duplicates: row.duplicates,
  };
}

/**
 * Checked seals of stored side-effect rows, by key id, tenant, task, effect name and the row's `xmin`: a row version
 * seals the same way every time it is read, and any change to the row writes a new version, read and checked afresh.
 * So an ask checks only the rows changed since this process last checked them (decision 0035). Bounded; oldest out
 * first.
 */
const checkedSeals = new Map<string, boolean>();
const CHECKED_SEALS_MAX = 50_000;

/**
 * The names of the task's effects whose stored state is not what the server sealed (decision 0035), sorted. Reads the
 * rows not checked before (one statement, only when there are any).
 */
async function unsealedEffects(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
  sealed: Array<[string, string]>,
): Promise<string[]> {
  const id = (name: string, rowVersion: string) => [key.kid, tenantId, taskId, name, rowVersion].join("\u0000");
  const bad: string[] = [];
  const unchecked: string[] = [];
  for (const [name, rowVersion] of sealed) {
    const known = checkedSeals.get(id(name, rowVersion));
    if (known === undefined) unchecked.push(name);
    else if (!known) bad.push(name);
  }
  if (unchecked.length) {
    const rows = await queryRows<SealedEffect & { seal: string | null; row_version: string }>(
      db,
      sql`select task_id, name, idempotency_key, status, receipt, seal, xmin::text as row_version from side_effects
          where tenant_id = ${tenantId} and task_id = ${taskId} and name in (${sql.join(
            unchecked.map((n) => sql`${n}`),
            sql`, `,
          )})`,
    );
    for (const r of rows) {
      const ok = sealHolds(key, tenantId, r);
      if (checkedSeals.size >= CHECKED_SEALS_MAX) checkedSeals.delete(checkedSeals.keys().next().value!);
      checkedSeals.set(id(r.name, r.row_version), ok);
      if (!ok) bad.push(r.name);
    }
  }
  return [...new Set(bad)].sort();
}

/**
 * Checked signatures of stored checkpoint rows, by key id and the row's identity and version: tenant, task, checkpoint
 * version and the row's `xmin`. A stored row under the same key always verifies the same way; any change to the
 * stored row (its record, digest, signatures or format) writes a new row version with another `xmin`, so a tampered
 * row is read and checked afresh. Naming the row version costs nothing to read, where hashing the record's text cost
 * about half a millisecond of the database per ask on a record declaring 500 effects (decision 0022). Bounded; oldest
 * out first.
 */
const checkedRecords = new Map<string, CheckpointCheck>();
const CHECKED_RECORDS_MAX = 2000;

const checkedRecordId = (kid: string, tenantId: string, taskId: string, version: number, rowVersion: string) =>
  [kid, tenantId, taskId, String(version), rowVersion].join("\u0000");

/**
 * How the latest checkpoint verifies in its place ({@link checkCheckpoint}: record signature, and from format 2 its
 * binding to tenant, task, version and attempt), checking each stored row version once per process: the record itself
 * is read and checked only the first time that version is seen. A format-1 row above a format-2 one, or a latest row
 * that is not the version the task row names, is `misplaced` (decision 0035).
 */
async function checkpointCheckCached(
  db: Db,
  tenantId: string,
  taskId: string,
  cp: GateCheckpointRow,
  key: SigningKey,
): Promise<CheckpointCheck> {
  if (cp.key_id !== key.kid) return "record_invalid";
  const placed = (c: CheckpointCheck): CheckpointCheck =>
    placedCheck(c, {
      version: cp.version,
      downgraded: cp.downgraded,
      newest: true,
      taskLatestVersion: cp.task_version,
    });
  const known = checkedRecords.get(checkedRecordId(key.kid, tenantId, taskId, cp.version, cp.row_version));
  if (known !== undefined) return placed(known);
  const [stored] = await queryRows<StoredCheckpoint & { row_version: string }>(
    db,
    sql`select record, digest, signature, key_id, version, attempt, signature_format, binding_signature,
               xmin::text as row_version
        from task_checkpoints where tenant_id = ${tenantId} and task_id = ${taskId} and version = ${cp.version}`,
  );
  if (!stored) return "record_invalid";
  const check = checkCheckpoint(stored, key, { tenantId, taskId });
  if (checkedRecords.size >= CHECKED_RECORDS_MAX) checkedRecords.delete(checkedRecords.keys().next().value!);
  checkedRecords.set(checkedRecordId(key.kid, tenantId, taskId, cp.version, stored.row_version), check);
  // The row read now is the one the gate's facts came from (checkpoints are never rewritten); if it is not, say it does
  // not verify rather than vouch for facts read from another version of it.
  if (stored.digest !== cp.digest || stored.signature !== cp.signature || stored.row_version !== cp.row_version)
    return "record_invalid";
  return placed(check);
}

/**
 * The snapshot a checkpoint names, as the gate reads it (a digest is required; anything else names none). `since`: when
 * the record names none, the digests saved at or after the snapshot that stands for it.
 */
function namedSnapshot(v: unknown, since: string[] | null = null): GateCheckpoint["snapshot"] {
  if (!v || typeof v !== "object") return null;
  const { digest, snapshot_id } = v as { digest?: unknown; snapshot_id?: unknown };
  if (!str(digest)) return null;
  return { digest: str(digest)!, snapshot_id: str(snapshot_id), ...(since ? { also_current: since } : {}) };
}

/**
 * A stored checkpoint as the gate reads it, with its signatures checked in its place. Only its record's `snapshot` names
 * a snapshot here (read when the latest checkpoint does not verify, so an earlier one is resumed from).
 */
function gateCheckpoint(c: CheckpointRow, key: SigningKey, at: { tenantId: string; taskId: string }): GateCheckpoint {
  const record = c.record as { phase?: unknown; tool_definitions?: Record<string, string>; snapshot?: unknown };
  const check = placedCheck(checkCheckpoint(c, key, at), {
    version: c.version,
    downgraded: c.downgraded,
    newest: false,
    taskLatestVersion: c.version,
  });
  return {
    version: c.version,
    phase: typeof record.phase === "string" ? record.phase : "start",
    signature_valid: check === "valid",
    created_at: c.created_at,
    tool_definitions: record.tool_definitions ?? null,
    snapshot: namedSnapshot(record.snapshot),
  };
}

/**
 * The newest checkpoint that verifies in its place (only read when the latest does not); a format-1 row above a
 * format-2 one does not.
 */
async function latestVerified(
  db: Db,
  tenantId: string,
  taskId: string,
  key: SigningKey,
): Promise<GateCheckpoint | null> {
  const rows = await listCheckpoints(db, tenantId, taskId, { limit: 200 });
  for (const c of rows) {
    const g = gateCheckpoint(c, key, { tenantId, taskId });
    if (g.signature_valid) return g;
  }
  return null;
}

/**
 * Asks the resume gate for a task.
 * @param body optional `{tool_definitions?: {name: sha256}, attempt?: number}` — the tools the runtime would resume with
 *   and the attempt asking.
 * @returns `{verdict, reasons: [{code, message, target}], next_phase, permitted_side_effects}`.
 * @throws DomainError not_found, validation_failed, forbidden.
 */
export async function askGate(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, body }: { taskId: string; body: unknown },
): Promise<GateVerdict> {
  authorize(actor, "gate.ask");
  checkTaskId(taskId);
  const parsed = resumeBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  // A runtime's ask is counted by the facts statement itself when its attempt has a row already (the usual poll).
  // A lease the statement finds run out is audited by it; the entries are sealed before the answer.
  const read = await withAuditSealed(db, actor.tenantId, () =>
    readGateFacts(db, actor.tenantId, taskId, key, {
      toolDefinitions: parsed.data.tool_definitions ?? {},
      now: new Date(),
      askingAttempt: parsed.data.attempt ?? null,
      countAsk: actor.kind === "api_key",
    }),
  );
  if (!read) throw notFound(`Task ${taskId}`);
  return recordGateAsk(db, actor, read.facts.task, evaluateGate(read.facts), read.askCounted);
}
