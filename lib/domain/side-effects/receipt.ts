/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/receipt` — record the receipt of a write (docs/concepts.md#receipt):
 * a completed one (stored once; the rules of {@link applyReceiptReport}), or the tool owner's word that nothing of it
 * was applied (`outcome: "not_applied"`; the rules of {@link applyNotAppliedReport}, decision 0029). Both are shared
 * with `side_effect.receipt` events; a receipt that is not applied is kept as evidence for the person who reconciles,
 * and the answer says why it was not applied.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import type { Receipt } from "@/lib/contract/api";
import { appendAuditPending, notePendingAudit, withAuditSealed } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { DomainError, isDomainError, notFound } from "../errors";
import { checkTaskId } from "../tasks/read";
import { LIMITS } from "../limits";
import { plainTextCheck } from "../names";
import { withRetry } from "../tx";
import { attemptField, checkEffectName, fenceAttempt, parseKeyed, staleAttempt } from "./intent";
import {
  applyNotAppliedReport,
  applyReceiptReport,
  type ReceiptApplication,
  toolErrorText,
  type NotAppliedApplication,
  type NotAppliedReport,
} from "./receipts";
import { LEASE_AUDIT_UPTO, leaseExpiryCtes } from "./lifecycle/lease";
import { mover } from "./lifecycle/moves";

import { isoTimeField } from "../time";
import type { SigningContext } from "../context";
import type { SigningKey } from "../crypto/signing";
import { leavesNothingToSeal, sealMovedEffects } from "./lifecycle/seal";
import { unsealedEffectReason } from "../gate/evaluate";

/** A receipt of a write that was made (`outcome` absent or `applied`: the default, as before outcomes existed). */
export const receiptBodySchema = z.strictObject({
  idempotency_key: z.string(),
  outcome: z.literal("applied", { error: 'outcome is "applied" (the default) or "not_applied"' }).optional(),
  external_operation_id: z
    .string()
    .trim()
    .min(1, "external_operation_id is required (not blank)")
    .max(LIMITS.externalOperationId.max)
    .check(plainTextCheck("external_operation_id")),
  result_digest: z.string().max(LIMITS.digest.max).check(plainTextCheck("result_digest")).nullable().optional(),
  completed_at: isoTimeField("completed_at", { plausible: true }),
  attempt: attemptField,
});

/** Longest `error` a not_applied receipt may send (characters); what is kept is cut shorter (`MAX_TOOL_ERROR_CHARS`). */
const MAX_ERROR_INPUT = 65_536;

/** The tool owner's word that nothing of the write was applied, with the tool's message. */
export const notAppliedReceiptBodySchema = z.strictObject({
  idempotency_key: z.string(),
  outcome: z.literal("not_applied"),
  error: z
    .string({ error: "error is required: the tool's message saying why nothing was applied" })
    .max(MAX_ERROR_INPUT, `error is at most ${MAX_ERROR_INPUT} characters`)
    .refine((v) => v.trim().length > 0, "error is required: the tool's message saying why nothing was applied"),
  attempt: attemptField,
});

export type ReceiptOutcome =
  | { status: "completed"; receipt: Receipt; replayed: boolean; warnings: string[] }
  | {
      /** Where a retry starts: the next intent under the same key gets a fresh go. */
      status: "not_started" | "approved";
      outcome: "not_applied";
      /** The tool's message as kept (credentials redacted, at most 1000 characters). */
      error: string;
      replayed: boolean;
      warnings: string[];
    };

/**
 * Records a receipt: `in_flight` → `completed`. Once an effect is `unknown` (the run was interrupted, a new attempt
 * started, or the lease ran out — leases are expired by the server's clock before anything else) only a person may
 * settle it; a receipt refused for that or any other reason below is kept as evidence the reconciler sees.
 * @param body `{idempotency_key, external_operation_id, completed_at, attempt, result_digest?}`.
 * @returns the stored receipt; `replayed: true` when it was already stored identically; `warnings`
 *   (`completed_before_intent` when it claims a time before the server registered the intent).
 *   With `{outcome: "not_applied", error}` (no operation id): an in-flight write returns to where a retry starts
 *   (`not_started`, or `approved` when the workspace lets a retry reuse its approval), answered `{status, outcome,
 *   error, replayed, warnings}` (`warnings: ["error_truncated"]` when the message was cut); the same receipt again is
 *   a replay.
 * @throws DomainError not_found (task), bad_request (key), validation_failed, idempotency_key_mismatch (422),
 *   stale_attempt (409, kept), no_intent (409: no intent yet — kept, and an applied receipt completes the effect when
 *   the intent arrives — or, for not_applied, no write in flight), receipt_conflict (409, kept), reconcile_required
 *   (409: the effect is unknown; kept).
 */
export async function recordReceipt(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, name, body }: { taskId: string; name: string; body: unknown },
): Promise<ReceiptOutcome> {
  authorize(actor, "side_effects.receipt");
  checkTaskId(taskId);
  checkEffectName(name);
  if (body && typeof body === "object" && (body as { outcome?: unknown }).outcome === "not_applied")
    return recordNotApplied({ db, actor, signingKey: key }, { taskId, name, body });
  const input = parseKeyed(receiptBodySchema, body);
  const receipt: Receipt = {
    external_operation_id: input.external_operation_id,
    result_digest: input.result_digest ?? null,
    completed_at: new Date(input.completed_at).toISOString(),
  };
  const report = {
    name,
    idempotency_key: input.idempotency_key,
    attempt: input.attempt,
    receipt,
    source: "route" as const,
  };
  const outcome = await underCurrentAttempt(db, actor, taskId, input.attempt, (recheck) =>
    decideUnderLock(db, actor, taskId, report.attempt, recheck, (tx, current) =>
      receiptDecision(tx, actor, key, taskId, current, report),
    ),
  );
  if (outcome.applied) {
    const warnings = (outcome.receipt as { warnings?: string[] }).warnings ?? [];
    const { warnings: _w, ...stored } = outcome.receipt as Receipt & { warnings?: string[] };
    return { status: "completed", receipt: stored, replayed: outcome.replayed, warnings };
  }
  if (outcome.code === "evidence_mismatch") throw refusal(taskId, name, outcome);
  throw new DomainError(outcome.code, outcome.message, {
    kept_as_evidence: outcome.kept,
    ...(outcome.stored ? { stored: outcome.stored } : {}),
  });
}

/** The not_applied receipt: parsed (the tool's message cleaned, not refused), fenced, applied with its audit entry. */
async function recordNotApplied(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, name, body }: { taskId: string; name: string; body: unknown },
): Promise<ReceiptOutcome> {
  let truncated = false;
  const input = parseKeyed(notAppliedReceiptBodySchema, body, (v) => {
    const cleaned = toolErrorText(v.error);
    truncated = cleaned.truncated;
    return { ...v, error: cleaned.text };
  });
  const report: NotAppliedReport = {
    name,
    idempotency_key: input.idempotency_key,
    attempt: input.attempt,
    error: input.error,
    source: "route",
  };
  const outcome = await underCurrentAttempt(db, actor, taskId, input.attempt, (recheck) =>
    decideUnderLock(db, actor, taskId, report.attempt, recheck, (tx, current) =>
      notAppliedDecision(tx, actor, key, taskId, current, report),
    ),
  );
  if (outcome.applied) {
    return {
      status: outcome.status,
      outcome: "not_applied",
      error: outcome.error,
      replayed: outcome.replayed,
      warnings: truncated ? ["error_truncated"] : [],
    };
  }
  if (outcome.code === "evidence_mismatch") throw refusal(taskId, name, outcome);
  throw new DomainError(outcome.code, outcome.message, { kept_as_evidence: outcome.kept });
}

/** What a deciding transaction answers when the receipt names a newer attempt than the task's current one. */
const RAISE = Symbol("raise");

/**
 * Runs a receipt's deciding transaction under the attempt it names (the fence of docs/concepts.md#attempts-and-fencing):
 * `decide(true)` first; when it answers {@link RAISE}, the attempt is raised in a transaction of its own (committed
 * whatever is then answered; the older attempts' in-flight writes end) and `decide(false)` runs. A receipt from an
 * older attempt is applied as evidence (kept) and then refused.
 * @returns what the deciding transaction returned.
 * @throws DomainError stale_attempt (409, `{attempt, current_attempt}`) after keeping the receipt, not_found (task).
 */
async function underCurrentAttempt<T>(
  db: Db,
  actor: Actor,
  taskId: string,
  attempt: number,
  decide: (recheckAttempt: boolean) => Promise<{ outcome: T; currentAttempt: number } | typeof RAISE>,
): Promise<T> {
  let decided = await decide(true);
  if (decided === RAISE) {
    try {
      await fenceAttempt(db, actor, taskId, attempt, "A receipt from a new attempt");
    } catch (err) {
      // A stale attempt's receipt is still evidence: keep it before refusing.
      if (isDomainError(err) && err.code === "stale_attempt") await decide(false);
      throw err;
    }
    decided = await decide(false);
  }
  if (decided === RAISE) throw new Error("a receipt's deciding transaction asked for a raise twice");
  if (attempt < decided.currentAttempt) throw staleAttempt(attempt, decided.currentAttempt);
  return decided.outcome;
}

/**
 * The deciding transaction's first statement: the task's expired leases move to `unknown` (a receipt after its lease
 * ran out is refused with `reconcile_required` and kept), and the task row is read FOR SHARE (its current attempt,
 * under the lock every attempt change takes). One round trip.
 * @returns the current attempt.
 * @throws DomainError not_found (task).
 */
async function lockTaskForReceipt(tx: Db, tenantId: string, taskId: string): Promise<number> {
  const [task] = await queryRows<{ current_attempt: number; audit_upto: string | null }>(
    tx,
    sql`with ${leaseExpiryCtes(tenantId, taskId)}
        select current_attempt, ${LEASE_AUDIT_UPTO} as audit_upto
        from tasks where tenant_id = ${tenantId} and task_id = ${taskId} for share`,
  );
  notePendingAudit(task?.audit_upto);
  if (!task) throw notFound(`Task ${taskId}`);
  return task.current_attempt;
}

/**
 * The error for a report that was neither applied nor kept; a row whose stored state is not what the server sealed is
 * refused as the intent route refuses it: `409 gate_stop` with the gate's `evidence_mismatch` reason (decision 0036).
 */
function refusal(
  taskId: string,
  name: string,
  outcome: Extract<ReceiptApplication | NotAppliedApplication, { applied: false }>,
): DomainError {
  if (outcome.code === "evidence_mismatch")
    return new DomainError("gate_stop", `The resume gate says stop (evidence_mismatch): ${outcome.message}`, {
      reasons: [unsealedEffectReason(taskId, name)],
    });
  return new DomainError(outcome.code, outcome.message);
}

/**
 * A receipt's deciding transaction: {@link lockTaskForReceipt}, then `decide` under the locked task row, sealed after
 * commit; answers {@link RAISE} instead when `recheckAttempt` and `attempt` is newer than the task's current one.
 */
async function decideUnderLock<T>(
  db: Db,
  actor: Actor,
  taskId: string,
  attempt: number | null,
  recheckAttempt: boolean,
  decide: (tx: Db, currentAttempt: number) => Promise<T>,
): Promise<{ outcome: T; currentAttempt: number } | typeof RAISE> {
  const tenantId = actor.tenantId;
  return withAuditSealed(db, tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const currentAttempt = await lockTaskForReceipt(tx, tenantId, taskId);
        if (recheckAttempt && attempt != null && attempt > currentAttempt) return RAISE;
        return { outcome: await decide(tx, currentAttempt), currentAttempt };
      }),
    ),
  );
}

/** The not_applied report applied (or kept) under the locked task row, with its audit entry and seal. */
async function notAppliedDecision(
  tx: Db,
  actor: Actor,
  key: SigningKey,
  taskId: string,
  currentAttempt: number,
  report: NotAppliedReport,
): Promise<NotAppliedApplication> {
  const tenantId = actor.tenantId;
  // The route's own entry below records the move (transitions.ts `receipt_not_applied`).
  const outcome = await applyNotAppliedReport(tx, key, mover(actor, "request"), taskId, currentAttempt, report);
  if (outcome.applied && outcome.replayed) return outcome;
  if (!outcome.applied && !outcome.kept) throw refusal(taskId, report.name, outcome);
  // The move carries the server's seal, committed with it (decision 0035).
  if (outcome.applied) await sealMovedEffects(tx, key, tenantId, [taskId], [report.name]);
  await appendAuditPending(tx, actor, {
    action: "side_effect.receipt_recorded",
    target: `side_effect:${taskId}/${report.name}`,
    details: {
      idempotency_key: report.idempotency_key,
      outcome: "not_applied",
      error: report.error,
      attempt: report.attempt,
      ...(outcome.applied
        ? { from: outcome.from, to: outcome.status }
        : { refused: outcome.code, kept_as_evidence: true }),
    },
  });
  return outcome;
}

type ReceiptReport = Parameters<typeof applyReceiptReport>[5];
type ReceiptDecision = Awaited<ReturnType<typeof applyReceiptReport>>;

/** The receipt applied (or kept) under the locked task row, with its audit entry and seal. */
async function receiptDecision(
  tx: Db,
  actor: Actor,
  key: SigningKey,
  taskId: string,
  currentAttempt: number,
  report: ReceiptReport,
): Promise<ReceiptDecision> {
  const tenantId = actor.tenantId;
  // The route's own entry below records the receipt's move (transitions.ts `receipt_completes`).
  const outcome = await applyReceiptReport(tx, key, mover(actor, "request"), taskId, currentAttempt, report);
  if (outcome.applied && outcome.replayed) return outcome;
  if (!outcome.applied && !outcome.kept) throw refusal(taskId, report.name, outcome);
  // The move carries the server's seal, committed with it (decision 0035); written by the move itself when it could
  // be (decision 0055).
  if (outcome.applied && !leavesNothingToSeal(outcome))
    await sealMovedEffects(tx, key, tenantId, [taskId], [report.name]);
  await appendAuditPending(tx, actor, {
    action: "side_effect.receipt_recorded",
    target: `side_effect:${taskId}/${report.name}`,
    details: {
      idempotency_key: report.idempotency_key,
      external_operation_id: report.receipt.external_operation_id,
      attempt: report.attempt,
      ...(outcome.applied ? { from: outcome.from } : { refused: outcome.code, kept_as_evidence: true }),
    },
  });
  return outcome;
}
