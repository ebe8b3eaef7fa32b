/**
 * One rule for a receipt, whichever path reports it (the receipt route or a `side_effect.receipt` event), and what
 * happens to receipts that do not complete an effect (docs/concepts.md#receipt: a receipt is stored once; a refused
 * late receipt is kept as evidence the reconciler sees, and the order in which batches arrive does not change the
 * outcome).
 *
 * - `in_flight` → `completed` with the receipt (flagged `completed_before_intent` when it claims a time before the
 *   server registered the intent);
 * - `completed` with the same receipt → a replay; with another → `receipt_conflict`, kept;
 * - `unknown` (interrupted, new attempt, lease ran out; leases are expired by the server's clock first) →
 *   `reconcile_required`, kept;
 * - a report from an attempt older than the task's current one → `stale_attempt`, kept;
 * - no effect yet, or one with no intent (`not_started`, `approved`, …) → `no_intent`, kept as pending: the intent that
 *   arrives later (route or event) completes the effect with it instead of starting a second write.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { findSideEffect, type SideEffectRow } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { Receipt } from "@/lib/contract/api";
import type { Mover } from "./lifecycle/moves";
import { completeWithReceipt } from "./lifecycle/statements";

export type ReceiptReport = {
  name: string;
  idempotency_key: string;
  /** The attempt that reports it; null only for reports from before attempts were required. */
  attempt: number | null;
  receipt: Receipt;
  source: "route" | "event";
  event_id?: string;
};

export type ReceiptApplication =
  | { applied: true; replayed: boolean; receipt: Receipt; from: string }
  | {
      applied: false;
      code: "reconcile_required" | "stale_attempt" | "no_intent" | "receipt_conflict" | "idempotency_key_mismatch";
      message: string;
      /** Kept as evidence (unapplied_receipts), visible to whoever reconciles the effect. */
      kept: boolean;
      stored?: Receipt;
    };

/** Two receipts are the same when operation id, result digest and completion instant agree. */
export function sameReceipt(a: Receipt, b: Receipt): boolean {
  return (
    a.external_operation_id === b.external_operation_id &&
    (a.result_digest ?? null) === (b.result_digest ?? null) &&
    Date.parse(a.completed_at) === Date.parse(b.completed_at)
  );
}

/**
 * Applies a receipt report to the effect it names. Call inside a transaction that holds the task row (FOR SHARE or
 * FOR UPDATE), after expiring leases and observing the report's attempt.
 * @param by the receipt route's caller (whose verb audits the receipt) or the event's sender (the completion is
 *   audited on `by`, transitions.ts `receipt_completes`).
 * @param currentAttempt the task's current attempt.
 */
export async function applyReceiptReport(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  currentAttempt: number,
  report: ReceiptReport,
): Promise<ReceiptApplication> {
  const tenantId = by.actor.tenantId;
  const effect = await findSideEffect(tx, tenantId, taskId, report.name, { forUpdate: true });
  if (effect && effect.idempotency_key !== report.idempotency_key) {
    return {
      applied: false,
      code: "idempotency_key_mismatch",
      message: `${report.name} is bound to idempotency key "${effect.idempotency_key}", not "${report.idempotency_key}".`,
      kept: false,
    };
  }
  const keep = async (
    code: "reconcile_required" | "stale_attempt" | "no_intent" | "receipt_conflict",
    message: string,
    stored?: Receipt,
  ) => {
    await keepUnappliedReceipt(tx, tenantId, taskId, report, code, message);
    return { applied: false as const, code, message, kept: true, ...(stored ? { stored } : {}) };
  };
  if (report.attempt !== null && report.attempt < currentAttempt) {
    return keep(
      "stale_attempt",
      `This receipt comes from attempt ${report.attempt}, but attempt ${currentAttempt} has started since; it is kept as evidence for whoever reconciles ${report.name}, not applied.`,
    );
  }
  if (!effect) {
    return keep(
      "no_intent",
      `No intent is recorded for ${report.name} yet; the receipt is kept and completes it when its intent arrives.`,
    );
  }
  switch (effect.status) {
    case "in_flight":
      return completeInFlight(tx, by, taskId, effect, report);
    case "completed": {
      const stored = effect.receipt!;
      if (sameReceipt(stored, report.receipt))
        return { applied: true, replayed: true, receipt: stored, from: "completed" };
      return keep(
        "receipt_conflict",
        `A different receipt is already stored for ${report.name} (external operation ${stored.external_operation_id}); this one is kept as evidence.`,
        stored,
      );
    }
    case "unknown":
      return keep(
        "reconcile_required",
        `${report.name}'s outcome became unknown before this receipt arrived${effect.status_reason ? ` — ${effect.status_reason.replace(/\.$/, "")}` : ""}. A responder must reconcile it; this receipt (operation ${report.receipt.external_operation_id}) is kept as evidence.`,
      );
    default:
      return keep(
        "no_intent",
        `No intent is recorded for ${report.name} (status ${effect.status.replace("_", " ")}); the receipt is kept and completes it when its intent arrives.`,
      );
  }
}

async function completeInFlight(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  effect: SideEffectRow,
  report: ReceiptReport,
): Promise<ReceiptApplication> {
  const warnings: string[] = [];
  // A receipt cannot precede the intent the server registered (allowing for a small clock difference).
  if (effect.intent_at && Date.parse(report.receipt.completed_at) < Date.parse(effect.intent_at) - 5_000)
    warnings.push("completed_before_intent");
  const receipt: Receipt & { warnings?: string[] } = { ...report.receipt, ...(warnings.length ? { warnings } : {}) };
  const updated = await completeWithReceipt(tx, by, {
    taskId,
    name: report.name,
    idempotencyKey: report.idempotency_key,
    receiptJson: JSON.stringify(receipt),
    reason: warnings.length
      ? `The receipt says the write completed at ${report.receipt.completed_at}, before the server registered its intent at ${effect.intent_at}: check the runtime's clock.`
      : null,
  });
  if (!updated) throw new Error("side effect changed while its row was locked");
  return { applied: true, replayed: false, receipt, from: "in_flight" };
}

/** Stores a receipt that was not applied, as evidence (and, for `no_intent`, as pending for the intent to come). */
export async function keepUnappliedReceipt(
  tx: Db,
  tenantId: string,
  taskId: string,
  report: ReceiptReport,
  reason: string,
  message: string,
): Promise<void> {
  await tx.execute(sql`
    insert into unapplied_receipts (tenant_id, task_id, name, idempotency_key, source, event_id, attempt,
                                    external_operation_id, result_digest, completed_at, reason, message)
    values (${tenantId}, ${taskId}, ${report.name}, ${report.idempotency_key}, ${report.source}, ${report.event_id ?? null},
            ${report.attempt}, ${report.receipt.external_operation_id || null}, ${report.receipt.result_digest ?? null},
            ${report.receipt.completed_at}::timestamptz, ${reason}, ${message})`);
}

/**
 * The oldest pending receipt (`no_intent`, not yet applied) for this effect and key, marked applied; null when none.
 * The caller completes the effect with it.
 */
export async function takePendingReceipt(
  tx: Db,
  tenantId: string,
  taskId: string,
  name: string,
  key: string,
): Promise<Receipt | null> {
  const rows = await queryRows<{ external_operation_id: string; result_digest: string | null; completed_at: string }>(
    tx,
    sql`update unapplied_receipts set applied_at = now()
        where tenant_id = ${tenantId} and id = (
          select id from unapplied_receipts
          where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name} and idempotency_key = ${key}
            and reason = 'no_intent' and applied_at is null
          order by received_at, id limit 1 for update)
        returning external_operation_id, result_digest, ${isoUtc("completed_at")} as completed_at`,
  );
  const r = rows[0];
  // Receipts keep completion times as ISO 8601 with milliseconds, as the receipt route stores them.
  return r
    ? {
        external_operation_id: r.external_operation_id,
        result_digest: r.result_digest,
        completed_at: new Date(r.completed_at).toISOString(),
      }
    : null;
}

export type UnappliedReceiptRow = {
  source: "route" | "event";
  event_id: string | null;
  attempt: number | null;
  external_operation_id: string | null;
  result_digest: string | null;
  completed_at: string | null;
  reason: string;
  message: string;
  received_at: string;
  applied_at: string | null;
};

/** Receipts kept for a task's effects, by effect name, oldest first. */
export async function listUnappliedReceipts(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<Map<string, UnappliedReceiptRow[]>> {
  const rows = await queryRows<UnappliedReceiptRow & { name: string }>(
    db,
    sql`select name, source, event_id, attempt, external_operation_id, result_digest, ${isoUtc("completed_at")} as completed_at,
               reason, message, ${isoUtc("received_at")} as received_at, ${isoUtc("applied_at")} as applied_at
        from unapplied_receipts where tenant_id = ${tenantId} and task_id = ${taskId}
        order by received_at, id limit 1000`,
  );
  const out = new Map<string, UnappliedReceiptRow[]>();
  for (const { name, ...r } of rows) {
    const list = out.get(name) ?? [];
    list.push(r);
    out.set(name, list);
  }
  return out;
}
