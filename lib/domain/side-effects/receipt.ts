/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/receipt` — record the receipt of a completed write
 * (DESIGN.md "Side effect": stored once). An identical second receipt is a no-op; a different one is a conflict.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { expireLeases, findSideEffect } from "@/db/queries/side-effects";
import { findTask } from "@/db/queries/tasks";
import type { Receipt } from "@/lib/client/types";
import { appendAudit } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { DomainError, notFound } from "../errors";
import { checkTaskId } from "../tasks/read";
import { checkEffectName, parseKeyed } from "./intent";
import { withRetry } from "../tx";
import { isoTimeField } from "../time";

export const receiptBodySchema = z.strictObject({
  idempotency_key: z.string(),
  external_operation_id: z.string().trim().min(1, "external_operation_id is required (not blank)").max(500),
  result_digest: z.string().max(200).nullable().optional(),
  completed_at: isoTimeField("completed_at", { plausible: true }),
});

export type ReceiptOutcome = { status: "completed"; receipt: Receipt; replayed: boolean };

/** Two receipts are the same when operation id, result digest and completion instant agree. */
export function sameReceipt(a: Receipt, b: Receipt): boolean {
  return (
    a.external_operation_id === b.external_operation_id &&
    (a.result_digest ?? null) === (b.result_digest ?? null) &&
    Date.parse(a.completed_at) === Date.parse(b.completed_at)
  );
}

/**
 * Records a receipt: `in_flight` → `completed`. Once an effect is `unknown` (the run was interrupted, a new sandbox
 * started, or the lease ran out) only a person may settle it (reconcile); a late receipt is refused with
 * `reconcile_required` and belongs in the reconcile's evidence.
 * @returns the stored receipt; `replayed: true` when it was already stored identically.
 * @throws DomainError not_found (task or effect), bad_request (key), validation_failed,
 *   idempotency_key_mismatch (422), no_intent (409: no intent was registered), receipt_conflict (409),
 *   reconcile_required (409: the effect is unknown).
 */
export async function recordReceipt(db: Db, actor: Actor, taskId: string, name: string, body: unknown): Promise<ReceiptOutcome> {
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
  // An in-flight effect whose lease ran out is unknown, however late its receipt: settle that first (committed on
  // its own), so every late receipt gets the same answer whether or not someone looked in between.
  await expireLeases(db, tenantId, taskId);
  return withRetry(() =>
    db.transaction(async (tx) => {
      if (!(await findTask(tx, tenantId, taskId))) throw notFound(`Task ${taskId}`);
      const effect = await findSideEffect(tx, tenantId, taskId, name);
      if (!effect) throw notFound(`Side effect ${name} of task ${taskId}`);
      if (effect.idempotency_key !== input.idempotency_key) {
        throw new DomainError(
          "idempotency_key_mismatch",
          `This side effect is bound to idempotency key "${effect.idempotency_key}".`,
        );
      }
      const updated = await queryRows(
        tx,
        sql`update side_effects
            set status = 'completed', receipt = ${JSON.stringify(receipt)}::jsonb, lease_expires_at = null,
                status_reason = null, updated_at = now()
            where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}
              and idempotency_key = ${input.idempotency_key} and status = 'in_flight'
            returning name`,
      );
      if (updated.length) {
        await appendAudit(tx, actor, {
          action: "side_effect.receipt",
          target: `side_effect:${taskId}/${name}`,
          details: { idempotency_key: input.idempotency_key, external_operation_id: receipt.external_operation_id, from: effect.status },
        });
        return { status: "completed" as const, receipt, replayed: false };
      }
      const now = await findSideEffect(tx, tenantId, taskId, name);
      if (now?.status === "completed" && now.receipt) {
        if (sameReceipt(now.receipt, receipt)) return { status: "completed" as const, receipt: now.receipt, replayed: true };
        throw new DomainError(
          "receipt_conflict",
          `A different receipt is already stored (external operation ${now.receipt.external_operation_id}).`,
          { stored: now.receipt },
        );
      }
      if (now?.status === "unknown") {
        throw new DomainError(
          "reconcile_required",
          `${name}'s outcome became unknown before this receipt arrived; a responder must reconcile it (quote operation ${receipt.external_operation_id} as evidence).`,
        );
      }
      throw new DomainError(
        "no_intent",
        `No intent is recorded for ${name} (status ${now?.status ?? "unknown"}); register an intent before the write.`,
      );
    }),
  );
}
