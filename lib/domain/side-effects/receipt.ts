/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/receipt` — record the receipt of a completed write
 * (docs/concepts.md#receipt: stored once). The rules are those of {@link applyReceiptReport}, shared with
 * `side_effect.receipt` events; a receipt that is not applied is kept as evidence for the person who reconciles, and
 * the answer says why it was not applied.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import type { Receipt } from "@/lib/contract/api";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { DomainError, isDomainError, notFound } from "../errors";
import { checkTaskId } from "../tasks/read";
import { LIMITS } from "../limits";
import { plainTextCheck } from "../names";
import { withRetry } from "../tx";
import { attemptField, checkEffectName, fenceAttempt, parseKeyed } from "./intent";
import { applyReceiptReport } from "./receipts";
import { expireLeasesNow } from "./lifecycle/lease";
import { mover } from "./lifecycle/moves";

import { isoTimeField } from "../time";
import type { VerbContext } from "../context";

export const receiptBodySchema = z.strictObject({
  idempotency_key: z.string(),
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

export type ReceiptOutcome = { status: "completed"; receipt: Receipt; replayed: boolean; warnings: string[] };

/**
 * Records a receipt: `in_flight` → `completed`. Once an effect is `unknown` (the run was interrupted, a new attempt
 * started, or the lease ran out — leases are expired by the server's clock before anything else) only a person may
 * settle it; a receipt refused for that or any other reason below is kept as evidence the reconciler sees.
 * @param body `{idempotency_key, external_operation_id, completed_at, attempt, result_digest?}`.
 * @returns the stored receipt; `replayed: true` when it was already stored identically; `warnings`
 *   (`completed_before_intent` when it claims a time before the server registered the intent).
 * @throws DomainError not_found (task), bad_request (key), validation_failed, idempotency_key_mismatch (422),
 *   stale_attempt (409, kept), no_intent (409: no intent yet; kept, and it completes the effect when the intent
 *   arrives), receipt_conflict (409, kept), reconcile_required (409: the effect is unknown; kept).
 */
export async function recordReceipt(
  { db, actor }: VerbContext,
  { taskId, name, body }: { taskId: string; name: string; body: unknown },
): Promise<ReceiptOutcome> {
  authorize(actor, "side_effects.receipt");
  checkTaskId(taskId);
  checkEffectName(name);
  const input = parseKeyed(receiptBodySchema, body);
  const receipt: Receipt = {
    external_operation_id: input.external_operation_id,
    result_digest: input.result_digest ?? null,
    completed_at: new Date(input.completed_at).toISOString(),
  };
  const tenantId = actor.tenantId;
  const report = {
    name,
    idempotency_key: input.idempotency_key,
    attempt: input.attempt,
    receipt,
    source: "route" as const,
  };
  await expireLeasesNow(db, tenantId, taskId);
  try {
    await fenceAttempt(db, actor, taskId, input.attempt, "A receipt from a new attempt");
  } catch (err) {
    // A stale attempt's receipt is still evidence: keep it before refusing.
    if (isDomainError(err) && err.code === "stale_attempt") await recordIn(db, actor, taskId, report);
    throw err;
  }
  const outcome = await recordIn(db, actor, taskId, report);
  if (outcome.applied) {
    const warnings = (outcome.receipt as { warnings?: string[] }).warnings ?? [];
    const { warnings: _w, ...stored } = outcome.receipt as Receipt & { warnings?: string[] };
    return { status: "completed", receipt: stored, replayed: outcome.replayed, warnings };
  }
  throw new DomainError(outcome.code, outcome.message, {
    kept_as_evidence: outcome.kept,
    ...(outcome.stored ? { stored: outcome.stored } : {}),
  });
}

/** Applies the report in one transaction with its audit entry (also when it is kept rather than applied), then seals it. */
async function recordIn(
  db: Db,
  actor: Actor,
  taskId: string,
  report: Parameters<typeof applyReceiptReport>[4],
): Promise<Awaited<ReturnType<typeof applyReceiptReport>>> {
  const tenantId = actor.tenantId;
  return withAuditSealed(db, tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const [task] = await queryRows<{ current_attempt: number }>(
          tx,
          sql`select current_attempt from tasks where tenant_id = ${tenantId} and task_id = ${taskId} for share`,
        );
        if (!task) throw notFound(`Task ${taskId}`);
        // The route's own entry below records the receipt's move (transitions.ts `receipt_completes`).
        const outcome = await applyReceiptReport(tx, mover(actor, "request"), taskId, task.current_attempt, report);
        if (outcome.applied && outcome.replayed) return outcome;
        if (!outcome.applied && !outcome.kept) throw new DomainError(outcome.code, outcome.message);
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
      }),
    ),
  );
}
