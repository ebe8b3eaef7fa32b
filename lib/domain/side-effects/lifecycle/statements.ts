/**
 * Every write to `side_effects` but the clock's (lease.ts): one function (or, where a statement of another module
 * needs it inside itself, one SQL fragment) per transition of the table in transitions.ts, each a guarded
 * `INSERT … ON CONFLICT DO NOTHING` / `UPDATE … WHERE <status guard> … RETURNING` whose statuses come from the table
 * (decision 0003: the database decides races; whoever gets no row back lost). Moves the lifecycle audits itself are
 * recorded on the caller's {@link Mover} (moves.ts); the others are recorded by the calling verb's own entry, named
 * in the table. No other file writes the table (`tests/unit/side-effect-lifecycle.test.ts` checks the source tree).
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { SideEffectOrigin } from "@/db/schema";
import type { SideEffectStatus } from "@/db/schema/enums";
import { recordMoves, type Mover } from "./moves";
import { statusGuard, statusLiteral } from "./sql";
import { ABSENT, type FromOf, type ToOf } from "./transitions";

/** The lease of an intent as ISO 8601 UTC text with microseconds, as the intent route answers it. */
const LEASE_ISO = sql.raw(`to_char(lease_expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);

type Key = { tenantId: string; taskId: string; name: string };

// ---- The intent route (audited by its `side_effect.intent_recorded` entry) ------------------------------------------

/**
 * `intent_go` for an effect the server has no row for: created `in_flight` with a lease, in one statement with its
 * seal and its audit entry (decision 0055). The seal is computed by the caller from the facts this insert stores (the
 * effect's tenant, task, name and key, status `in_flight`, no receipt); the entry is written only when the row is.
 * @param seal the row's seal (lifecycle/seal.ts `effectSeal` over exactly those facts).
 * @param audit the entry's insert over the created row (audit/append.ts `auditPendingRowsSql` with `from`).
 * @returns the lease's expiry (ISO) and the entry's id, or null when the name or key is taken (the caller re-reads
 *   and decides again; nothing was written).
 */
export async function startNewIntent(
  tx: Db,
  e: Key & {
    idempotencyKey: string;
    tool: string;
    action: string;
    mutation: boolean;
    payloadDigest: string;
    attempt: number;
    leaseSeconds: number;
    /** The effect this write deliberately repeats (its intent's `repeats`), or null. */
    repeats: string | null;
  },
  seal: string,
  audit: (from: SQL) => SQL,
): Promise<{ leaseExpiresAt: string; auditId: string | number } | null> {
  const rows = await queryRows<{ lease_expires_at: string; audit_id: string | number }>(
    tx,
    sql`with created as (
          insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation,
                                    payload_digest, intent_at, intent_attempt, lease_expires_at, retry_status, origin,
                                    repeats, seal)
          values (${e.tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${statusLiteral("intent_go", "in_flight")},
                  ${e.tool}, ${e.action}, ${e.mutation}, ${e.payloadDigest}, now(), ${e.attempt},
                  now() + make_interval(secs => ${e.leaseSeconds}), 'not_started', 'intent', ${e.repeats}, ${seal})
          on conflict do nothing
          returning lease_expires_at),
        entry as (${audit(sql`created`)})
        select ${LEASE_ISO} as lease_expires_at, (select id from entry) as audit_id from created`,
  );
  const row = rows[0];
  return row ? { leaseExpiresAt: row.lease_expires_at, auditId: row.audit_id } : null;
}

/** What a retry goes back to after the write is found not applied (reconcile or receipt), by the status it left. */
function retryStatusFrom(status: SideEffectStatus): SideEffectStatus {
  return status === "approved" ? "approved" : "not_started";
}

/**
 * SQL: the status a not-applied write returns to — `approved` when it went under an approval and the workspace lets a
 * retry reuse it (`reuseApproval`), else `not_started` (an approval authorizes one go: the retry needs a fresh one).
 */
function notAppliedStatus(t: "reconciled_not_applied" | "receipt_not_applied", reuseApproval: boolean): SQL {
  const approved = statusLiteral(t, "approved");
  return reuseApproval
    ? sql`case when retry_status = ${approved} then ${approved} else ${statusLiteral(t, "not_started")} end`
    : statusLiteral(t, "not_started");
}

/**
 * `intent_go` for an existing effect read in status `observed`: `in_flight` with a lease, guarded by that status and
 * the key. @returns the lease's expiry (ISO), or null when the effect moved meanwhile.
 */
export async function startIntent(
  tx: Db,
  observed: Exclude<FromOf<"intent_go">, typeof ABSENT>,
  e: Key & {
    idempotencyKey: string;
    tool: string | null;
    action: string;
    mutation: boolean;
    payloadDigest: string;
    attempt: number;
    leaseSeconds: number;
    repeats: string | null;
  },
): Promise<string | null> {
  const rows = await queryRows<{ lease_expires_at: string }>(
    tx,
    sql`update side_effects
        set status = ${statusLiteral("intent_go", "in_flight")}, status_reason = null, updated_at = now(), intent_at = now(),
            intent_attempt = ${e.attempt}, payload_digest = ${e.payloadDigest}, repeats = ${e.repeats},
            action = ${e.action}, mutation = ${e.mutation}, tool = coalesce(${e.tool}::text, tool),
            lease_expires_at = now() + make_interval(secs => ${e.leaseSeconds}),
            retry_status = ${retryStatusFrom(observed)}::side_effect_status
        where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name}
          and idempotency_key = ${e.idempotencyKey} and ${statusGuard("intent_go", { observed })}
        returning ${LEASE_ISO} as lease_expires_at`,
  );
  return rows[0]?.lease_expires_at ?? null;
}

/**
 * `intent_replays_pending_receipt`: completes the effect (read in status `observed`, or created when absent) with the
 * receipt that arrived before its intent. @returns false when the effect moved meanwhile or the key is taken.
 */
export async function completeFromPendingReceipt(
  tx: Db,
  observed: FromOf<"intent_replays_pending_receipt">,
  e: Key & {
    idempotencyKey: string;
    tool: string;
    action: string;
    mutation: boolean;
    payloadDigest: string;
    attempt: number;
    receiptJson: string;
    reason: string;
    repeats: string | null;
  },
): Promise<boolean> {
  const completed = statusLiteral("intent_replays_pending_receipt", "completed");
  const rows =
    observed !== ABSENT
      ? await queryRows(
          tx,
          sql`update side_effects
              set status = ${completed}, receipt = ${e.receiptJson}::jsonb, status_reason = ${e.reason}, updated_at = now(),
                  intent_at = now(), intent_attempt = ${e.attempt}, payload_digest = coalesce(payload_digest, ${e.payloadDigest}),
                  action = ${e.action}, mutation = ${e.mutation}, lease_expires_at = null, repeats = ${e.repeats}
              where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name}
                and ${statusGuard("intent_replays_pending_receipt", { observed })}
              returning name`,
        )
      : await queryRows(
          tx,
          sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, payload_digest,
                                        intent_at, intent_attempt, receipt, status_reason, retry_status, origin, repeats)
              values (${e.tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${completed}, ${e.tool}, ${e.action},
                      ${e.mutation}, ${e.payloadDigest}, now(), ${e.attempt}, ${e.receiptJson}::jsonb, ${e.reason},
                      'not_started', 'intent', ${e.repeats})
              on conflict do nothing returning name`,
        );
  return rows.length > 0;
}

// ---- Receipts (route: its `side_effect.receipt_recorded` entry; event: own) -----------------------------------------

/**
 * `receipt_completes`: the in-flight effect completes with the receipt, and with its seal (decision 0055), computed by
 * the caller over the facts this update stores (lifecycle/seal.ts `effectSeal`: the effect's tenant, task, name and
 * key, status `completed`, the receipt as `receiptJson` parses).
 * @returns false when it is no longer in flight (nothing written).
 */
export async function completeWithReceipt(
  tx: Db,
  by: Mover<"request" | "event">,
  e: {
    taskId: string;
    name: string;
    idempotencyKey: string;
    receiptJson: string;
    seal: string;
    reason: string | null;
  },
): Promise<boolean> {
  const rows = await queryRows<{ name: string }>(
    tx,
    sql`update side_effects
        set status = ${statusLiteral("receipt_completes", "completed")}, receipt = ${e.receiptJson}::jsonb, lease_expires_at = null,
            status_reason = ${e.reason}, seal = ${e.seal}, updated_at = now()
        where tenant_id = ${by.actor.tenantId} and task_id = ${e.taskId} and name = ${e.name}
          and idempotency_key = ${e.idempotencyKey} and ${statusGuard("receipt_completes")}
        returning name`,
  );
  recordMoves(
    by,
    "receipt_completes",
    rows.map((r) => ({
      taskId: e.taskId,
      name: r.name,
      idempotencyKey: e.idempotencyKey,
      from: "in_flight",
      to: "completed",
      reason: e.reason,
    })),
  );
  return rows.length > 0;
}

/**
 * `receipt_not_applied`: the tool owner says nothing of the in-flight write was applied — it returns to where a retry
 * starts ({@link notAppliedStatus}), with the receipt's evidence (`notAppliedJson`, a `SideEffectNotApplied`).
 * @returns the status it reached, or null when it is no longer in flight.
 */
export async function settleNotApplied(
  tx: Db,
  by: Mover<"request" | "event">,
  e: {
    taskId: string;
    name: string;
    idempotencyKey: string;
    notAppliedJson: string;
    reason: string;
    reuseApproval: boolean;
  },
): Promise<ToOf<"receipt_not_applied"> | null> {
  const rows = await queryRows<{ name: string; status: ToOf<"receipt_not_applied"> }>(
    tx,
    sql`update side_effects
        set status = ${notAppliedStatus("receipt_not_applied", e.reuseApproval)}, lease_expires_at = null, intent_at = null,
            last_not_applied = ${e.notAppliedJson}::jsonb, status_reason = ${e.reason}, updated_at = now()
        where tenant_id = ${by.actor.tenantId} and task_id = ${e.taskId} and name = ${e.name}
          and idempotency_key = ${e.idempotencyKey} and ${statusGuard("receipt_not_applied")}
        returning name, status`,
  );
  recordMoves(
    by,
    "receipt_not_applied",
    rows.map((r) => ({
      taskId: e.taskId,
      name: r.name,
      idempotencyKey: e.idempotencyKey,
      from: "in_flight",
      to: r.status,
      reason: e.reason,
    })),
  );
  return rows[0]?.status ?? null;
}

// ---- Reported writes (`side_effect.intent` events; own audit) ------------------------------------------------------

type Reported = {
  taskId: string;
  name: string;
  idempotencyKey: string;
  tool: string;
  action: string | null;
  mutation: boolean;
  payloadDigest: string | null;
  attempt: number | null;
  /** The effect the reported write says it deliberately repeats, or null. */
  repeats: string | null;
};

/**
 * SQL: `update side_effects s … from (<the row, locked>) old …` — a guarded update of one effect that also returns
 * the status it left (`old_status`), for moves whose entry names it.
 */
function updateOne(
  tenantId: string,
  e: { taskId: string; name: string; idempotencyKey: string },
  set: SQL,
  guard: SQL,
): SQL {
  return sql`update side_effects s set ${set}
    from (select name, status as old_status from side_effects
          where tenant_id = ${tenantId} and task_id = ${e.taskId} and name = ${e.name} for update) old
    where s.tenant_id = ${tenantId} and s.task_id = ${e.taskId} and s.name = old.name
      and s.idempotency_key = ${e.idempotencyKey} and ${guard}
    returning s.name, old.old_status`;
}

/**
 * `reported_write_refused`: a reported write the intent route would have refused makes the effect `unknown`, created
 * when the server had not heard of it.
 */
export async function markReportedWriteUnknown(tx: Db, by: Mover<"event">, e: Reported, reason: string): Promise<void> {
  const tenantId = by.actor.tenantId;
  const unknown = statusLiteral("reported_write_refused", "unknown");
  const created = await queryRows<{ name: string }>(
    tx,
    sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, payload_digest,
                              intent_at, intent_attempt, retry_status, status_reason, origin, repeats)
    values (${tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${unknown}, ${e.tool},
            ${e.action}, ${e.mutation}, ${e.payloadDigest}, now(), ${e.attempt},
            'not_started', ${reason}, 'event', ${e.repeats})
    on conflict do nothing
    returning name`,
  );
  const moved = await queryRows<{ name: string; old_status: FromOf<"reported_write_refused"> }>(
    tx,
    updateOne(
      tenantId,
      e,
      sql`status = ${unknown}, updated_at = now(), status_reason = ${reason},
          intent_at = coalesce(s.intent_at, now()), intent_attempt = coalesce(s.intent_attempt, ${e.attempt}::integer)`,
      statusGuard("reported_write_refused", { column: "s.status" }),
    ),
  );
  const moves: Array<{ name: string; from: FromOf<"reported_write_refused"> }> = [
    ...created.map((r) => ({ name: r.name, from: ABSENT })),
    ...moved.map((r) => ({ name: r.name, from: r.old_status })),
  ];
  recordMoves(
    by,
    "reported_write_refused",
    moves.map((m) => ({ ...m, taskId: e.taskId, idempotencyKey: e.idempotencyKey, to: "unknown", reason })),
  );
}

/**
 * `reported_intent`: a reported write the intent route would have allowed — `in_flight` with the default lease, or
 * `completed` with a receipt that arrived before it.
 * @returns false when the key belongs to another effect of the tenant (nothing moved).
 */
export async function applyReportedIntent(
  tx: Db,
  by: Mover<"event">,
  e: Reported & { attempt: number },
  outcome: { status: ToOf<"reported_intent">; receiptJson: string | null; reason: string | null; leaseSeconds: number },
): Promise<boolean> {
  const tenantId = by.actor.tenantId;
  const status = statusLiteral("reported_intent", outcome.status);
  const lease = outcome.status === "completed" ? null : sql`now() + make_interval(secs => ${outcome.leaseSeconds})`;
  const record = (moves: Array<{ name: string; from: FromOf<"reported_intent"> }>) =>
    recordMoves(
      by,
      "reported_intent",
      moves.map((m) => ({
        ...m,
        taskId: e.taskId,
        idempotencyKey: e.idempotencyKey,
        to: outcome.status,
        reason: outcome.reason,
      })),
    );
  const inserted = await queryRows<{ name: string }>(
    tx,
    sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, payload_digest,
                                  intent_at, intent_attempt, lease_expires_at, retry_status, receipt, status_reason, origin,
                                  repeats)
        values (${tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${status}, ${e.tool},
                ${e.action}, ${e.mutation}, ${e.payloadDigest}, now(), ${e.attempt},
                ${lease}, 'not_started', ${outcome.receiptJson}::jsonb, ${outcome.reason}, 'event', ${e.repeats})
        on conflict do nothing
        returning name`,
  );
  if (inserted.length) {
    record(inserted.map((r) => ({ name: r.name, from: ABSENT })));
    return true;
  }
  const moved = await queryRows<{ name: string; old_status: Exclude<FromOf<"reported_intent">, typeof ABSENT> }>(
    tx,
    updateOne(
      tenantId,
      e,
      sql`status = ${status}, updated_at = now(), status_reason = ${outcome.reason},
          retry_status = case when s.status = 'approved' then 'approved'::side_effect_status else 'not_started'::side_effect_status end,
          intent_at = now(), intent_attempt = ${e.attempt},
          lease_expires_at = ${lease},
          receipt = coalesce(${outcome.receiptJson}::jsonb, s.receipt),
          payload_digest = coalesce(s.payload_digest, ${e.payloadDigest}::text),
          action = coalesce(${e.action}::text, s.action), repeats = ${e.repeats}::text`,
      statusGuard("reported_intent", { column: "s.status" }),
    ),
  );
  record(moved.map((r) => ({ name: r.name, from: r.old_status })));
  return moved.length > 0;
}

// ---- Ended attempts (request or event; own audit) ------------------------------------------------------------------

/**
 * `attempt_ended`: the in-flight effects of the task whose intent came from an attempt in `scope` (SQL over
 * `intent_attempt`) become `unknown` with `reason`.
 * @returns the names of the effects that moved.
 */
export async function endInFlight(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  scope: SQL,
  reason: string,
): Promise<string[]> {
  const rows = await queryRows<{ name: string; idempotency_key: string }>(
    tx,
    sql`update side_effects
        set status = ${statusLiteral("attempt_ended", "unknown")}, updated_at = now(), status_reason = ${reason}
        where tenant_id = ${by.actor.tenantId} and task_id = ${taskId} and ${statusGuard("attempt_ended")}
          and ${scope}
        returning name, idempotency_key`,
  );
  recordMoves(
    by,
    "attempt_ended",
    rows.map((r) => ({
      taskId,
      name: r.name,
      idempotencyKey: r.idempotency_key,
      from: "in_flight",
      to: "unknown",
      reason,
    })),
  );
  return rows.map((r) => r.name);
}

/**
 * `orphan_call_declared`: a declared effect read in status `observed`, whose tool call's attempt ended with no outcome
 * and no intent, becomes `unknown`. @returns the effect's name when it moved.
 */
export async function markOrphanCallEffect(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  name: string,
  observed: FromOf<"orphan_call_declared">,
  reason: string,
): Promise<string[]> {
  const rows = await queryRows<{ name: string; idempotency_key: string }>(
    tx,
    sql`update side_effects set status = ${statusLiteral("orphan_call_declared", "unknown")}, updated_at = now(),
          status_reason = ${reason}
        where tenant_id = ${by.actor.tenantId} and task_id = ${taskId} and name = ${name}
          and ${statusGuard("orphan_call_declared", { observed })}
        returning name, idempotency_key`,
  );
  recordMoves(
    by,
    "orphan_call_declared",
    rows.map((r) => ({
      taskId,
      name: r.name,
      idempotencyKey: r.idempotency_key,
      from: observed,
      to: "unknown",
      reason,
    })),
  );
  return rows.map((r) => r.name);
}

/**
 * `orphan_call_created`: a mutating tool call whose attempt ended with no outcome, and that no declared effect answers
 * for, becomes an `unknown` effect of its own. @returns its name when it was created.
 */
export async function createOrphanCallEffect(
  tx: Db,
  by: Mover<"request" | "event">,
  e: { taskId: string; name: string; idempotencyKey: string; tool: string; attempt: number | null; callId: string },
  reason: string,
): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    tx,
    sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, mutation, intent_attempt,
                                  retry_status, status_reason, origin, call_id)
        values (${by.actor.tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${statusLiteral("orphan_call_created", "unknown")},
                ${e.tool}, true, ${e.attempt}, 'not_started', ${reason}, 'tool_call', ${e.callId})
        on conflict do nothing
        returning name`,
  );
  recordMoves(
    by,
    "orphan_call_created",
    rows.map((r) => ({
      taskId: e.taskId,
      name: r.name,
      idempotencyKey: e.idempotencyKey,
      from: ABSENT,
      to: "unknown",
      reason,
    })),
  );
  return rows.map((r) => r.name);
}

// ---- Reconcile (a person; audited by its `side_effect.reconciled` entry) --------------------------------------------

/**
 * `reconciled_completed` or `reconciled_not_applied` (back to the effect's retry status): settles an `unknown` effect.
 * @returns the status it reached, or null when it was not unknown (settled by someone else, or never unknown).
 */
export async function settleUnknown(
  tx: Db,
  e: Key & { decisionJson: string; reason: string } & (
      | { outcome: "completed"; receiptJson: string }
      /** `reuseApproval`: the workspace lets a retry go under the approval its first go used. */
      | { outcome: "not_applied"; reuseApproval: boolean }
    ),
): Promise<ToOf<"reconciled_completed" | "reconciled_not_applied"> | null> {
  const rows = await queryRows<{ status: ToOf<"reconciled_completed" | "reconciled_not_applied"> }>(
    tx,
    e.outcome === "completed"
      ? sql`update side_effects
            set status = ${statusLiteral("reconciled_completed", "completed")}, receipt = ${e.receiptJson}::jsonb, lease_expires_at = null,
                status_reason = ${e.reason}, last_reconcile = ${e.decisionJson}::jsonb, updated_at = now()
            where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name} and ${statusGuard("reconciled_completed")}
            returning status`
      : sql`update side_effects
            set status = ${notAppliedStatus("reconciled_not_applied", e.reuseApproval)},
                lease_expires_at = null, intent_at = null,
                status_reason = ${e.reason}, last_reconcile = ${e.decisionJson}::jsonb, updated_at = now()
            where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name} and ${statusGuard("reconciled_not_applied")}
            returning status`,
  );
  return rows[0]?.status ?? null;
}

// ---- Checkpoint declarations (audited by its `task.checkpointed` entry) ---------------------------------------------

/**
 * SQL fragment for the checkpoint's one statement: `declared` — inserts the effects of the rows `d` (columns `name,
 * idempotency_key, status, tool, action, mutation, receipt, status_reason, payload_digest`, each status one of
 * `ToOf<"declared">`) that the server has no row for, in name order, and returns their names. The declared payload
 * digest is kept, so a later write of the same payload under another name meets the duplicate rule (decision 0029).
 * Embed as `ins as (<fragment>)`.
 */
export function declaredEffectsInsert(tenantId: string, taskId: string, rows: SQL): SQL {
  return sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, receipt,
                                    status_reason, payload_digest, origin)
          select ${tenantId}::uuid, ${taskId}, d.name, d.idempotency_key, d.status, d.tool, d.action, d.mutation, d.receipt,
                 d.status_reason, d.payload_digest, 'checkpoint'
          from ${rows} order by d.name
          on conflict do nothing
          returning name`;
}

// ---- Approvals (audited by `approval.requested` / `approval.decided`) ----------------------------------------------

/**
 * `approval_requested`: the effect waits for an approver — created `awaiting_approval` when the server did not know
 * it, or moved there from `not_started`.
 */
export async function awaitApproval(
  tx: Db,
  e: Key & { idempotencyKey: string; tool: string; action: string; origin: SideEffectOrigin; callId: string | null },
): Promise<void> {
  const awaiting = statusLiteral("approval_requested", "awaiting_approval");
  const reason = "Waits for an approver's decision.";
  await tx.execute(sql`
    insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, status_reason, origin, call_id)
    values (${e.tenantId}, ${e.taskId}, ${e.name}, ${e.idempotencyKey}, ${awaiting}, ${e.tool}, ${e.action},
            true, ${reason}, ${e.origin}, ${e.callId})
    on conflict do nothing`);
  await tx.execute(sql`
    update side_effects set status = ${awaiting}, status_reason = ${reason}, updated_at = now()
    where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name}
      and idempotency_key = ${e.idempotencyKey} and ${statusGuard("approval_requested")}`);
}

/**
 * `approval_granted` (→ `approved`) or `approval_rejected` (→ `awaiting_approval`): an approver's decision moves the
 * effect of the request, when it is still in a status the decision may leave.
 */
export async function applyApprovalDecision(
  tx: Db,
  e: Key & { idempotencyKey: string; decision: "approve" | "reject"; reason: string },
): Promise<void> {
  const [to, guard] =
    e.decision === "approve"
      ? [statusLiteral("approval_granted", "approved"), statusGuard("approval_granted")]
      : [statusLiteral("approval_rejected", "awaiting_approval"), statusGuard("approval_rejected")];
  await tx.execute(sql`
    update side_effects set status = ${to}, status_reason = ${e.reason}, updated_at = now()
    where tenant_id = ${e.tenantId} and task_id = ${e.taskId} and name = ${e.name}
      and idempotency_key = ${e.idempotencyKey} and ${guard}`);
}
