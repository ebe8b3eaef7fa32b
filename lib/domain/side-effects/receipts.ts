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
 *
 * A `not_applied` receipt — the tool owner's word that nothing of the write was applied — follows
 * {@link applyNotAppliedReport}: it settles an `in_flight` effect back to where a retry starts; anywhere else it is kept
 * as evidence and changes nothing (it never waits for an intent).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { findSideEffect, type SideEffectRow } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { SideEffectNotApplied } from "@/db/schema";
import type { Receipt } from "@/lib/contract/api";
import { actorRef } from "../authz";
import { redactString } from "../secrets/redact";
import { UNSAFE_MULTILINE_TEXT } from "../typed-text";
import { retryReusesApproval } from "../approvals/policy";
import type { SigningKey } from "../crypto/signing";
import type { Mover } from "./lifecycle/moves";
import { effectSeal, nothingLeftToSeal, storedEffectSealed } from "./lifecycle/seal";
import { completeWithReceipt, settleNotApplied } from "./lifecycle/statements";
import { noteClockSkew, SKEW_TOLERANCE_MS } from "../tasks/clock-skew";

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
      code:
        | "reconcile_required"
        | "stale_attempt"
        | "no_intent"
        | "receipt_conflict"
        | "idempotency_key_mismatch"
        | "evidence_mismatch";
      message: string;
      /** Kept as evidence (unapplied_receipts), visible to whoever reconciles the effect. */
      kept: boolean;
      stored?: Receipt;
    };

/** The refusal of a report about an effect whose stored state is not what the server sealed (decision 0036). */
function evidenceMismatch(name: string): { code: "evidence_mismatch"; message: string; kept: false } {
  return {
    code: "evidence_mismatch",
    message: `${name}'s stored state is not what the server sealed (changed outside the server), so nothing is replayed or moved from it; ask POST /resume for the details.`,
    kept: false,
  };
}

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
  key: SigningKey,
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
  // A row whose state is not what the server sealed answers nothing: no stored receipt replayed, no move from it.
  if (effect && !(await storedEffectSealed(tx, key, tenantId, { ...effect, task_id: taskId })))
    return { applied: false, ...evidenceMismatch(report.name) };
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
      return completeInFlight(tx, key, by, taskId, effect, report);
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
  key: SigningKey,
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
  const receiptJson = JSON.stringify(receipt);
  const updated = await completeWithReceipt(tx, by, {
    taskId,
    name: report.name,
    idempotencyKey: report.idempotency_key,
    receiptJson,
    // Over the receipt as its stored `jsonb` reads back: the text parsed, as the gate will read it (decision 0055).
    seal: effectSeal(key, by.actor.tenantId, {
      task_id: taskId,
      name: report.name,
      idempotency_key: report.idempotency_key,
      status: "completed",
      receipt: JSON.parse(receiptJson) as unknown,
    }),
    reason: warnings.length
      ? `The receipt says the write completed at ${report.receipt.completed_at}, before the server registered its intent at ${effect.intent_at}: check the runtime's clock.`
      : null,
  });
  if (!updated) throw new Error("side effect changed while its row was locked");
  // A clock found behind is shown on the task like one found ahead (docs/concepts.md#receive-order).
  const behind = effect.intent_at ? Date.parse(effect.intent_at) - Date.parse(report.receipt.completed_at) : 0;
  if (behind > SKEW_TOLERANCE_MS) {
    await noteClockSkew(
      tx,
      by.actor.tenantId,
      taskId,
      -behind,
      `The receipt of ${report.name} says it completed at ${report.receipt.completed_at}, ${Math.round(behind / 1000)} s before the server registered its intent: the runtime's clock seems to be behind. Decisions follow the order the server received things in.`,
    );
  }
  return nothingLeftToSeal({ applied: true as const, replayed: false, receipt, from: "in_flight" as const });
}

/**
 * Stores a receipt that was not applied, as evidence (and, for an `applied` one kept as `no_intent`, as pending for the
 * intent to come; a `not_applied` one never waits).
 */
export async function keepUnappliedReceipt(
  tx: Db,
  tenantId: string,
  taskId: string,
  report: ReceiptReport | NotAppliedReport,
  reason: string,
  message: string,
): Promise<void> {
  const receipt = "receipt" in report ? report.receipt : null;
  const error = "error" in report ? report.error : null;
  await tx.execute(sql`
    insert into unapplied_receipts (tenant_id, task_id, name, idempotency_key, source, event_id, attempt,
                                    external_operation_id, result_digest, completed_at, reason, message, outcome, error)
    values (${tenantId}, ${taskId}, ${report.name}, ${report.idempotency_key}, ${report.source}, ${report.event_id ?? null},
            ${report.attempt}, ${receipt?.external_operation_id || null}, ${receipt?.result_digest ?? null},
            ${receipt?.completed_at ?? null}::timestamptz, ${reason}, ${message}, ${receipt ? "applied" : "not_applied"},
            ${error})`);
}

/** Longest tool message kept with a `not_applied` receipt (characters); a longer one is cut, marked with `…`. */
export const MAX_TOOL_ERROR_CHARS = 1000;

/** Unsafe characters of multi-line text (control, bidirectional, invisible), all of them. */
const UNSAFE_GLOBAL = new RegExp(UNSAFE_MULTILINE_TEXT.source, "gu");

/**
 * A tool's error message as it is kept and shown: credentials replaced by `[REDACTED]`, characters that could disguise
 * how it displays replaced by U+FFFD, trimmed, at most {@link MAX_TOOL_ERROR_CHARS} characters. It is the tool's text,
 * not a person's: it is cleaned rather than refused, so a clean failure is never left waiting because of its wording.
 * @returns the text, and whether it was cut.
 */
export function toolErrorText(raw: string): { text: string; truncated: boolean } {
  const clean = redactString(raw.replace(UNSAFE_GLOBAL, "\uFFFD")).value.trim();
  const chars = [...clean];
  if (chars.length <= MAX_TOOL_ERROR_CHARS) return { text: clean, truncated: false };
  return { text: `${chars.slice(0, MAX_TOOL_ERROR_CHARS - 1).join("")}…`, truncated: true };
}

/** A `not_applied` receipt as the receipt route or a `side_effect.receipt` event reports it (error already cleaned). */
export type NotAppliedReport = {
  name: string;
  idempotency_key: string;
  attempt: number | null;
  /** The tool's message ({@link toolErrorText}). */
  error: string;
  source: "route" | "event";
  event_id?: string;
};

export type NotAppliedApplication =
  | { applied: true; replayed: boolean; status: "not_started" | "approved"; error: string; from: string }
  | {
      applied: false;
      code:
        | "reconcile_required"
        | "stale_attempt"
        | "no_intent"
        | "receipt_conflict"
        | "idempotency_key_mismatch"
        | "evidence_mismatch";
      message: string;
      kept: boolean;
    };

/**
 * Applies a `not_applied` receipt to the effect it names (docs/concepts.md#receipt), in a transaction that holds the
 * task row, after expiring leases and observing the report's attempt:
 * - `in_flight` → back to where a retry starts (`receipt_not_applied`: `not_started`, or `approved` when it went under
 *   an approval the workspace lets a retry reuse), with the receipt kept on the effect; the next intent under the same
 *   key gets a fresh go;
 * - the same receipt again (same key, attempt and message, nothing since) → a replay, nothing changes;
 * - an older attempt, no effect or no intent, an effect settled otherwise (a person's reconcile, another receipt),
 *   `unknown` (only a person settles it) or `completed` → kept as evidence, nothing changes.
 * @param by the receipt route's caller (whose verb audits the move) or the event's sender (audited on `by`).
 */
export async function applyNotAppliedReport(
  tx: Db,
  key: SigningKey,
  by: Mover<"request" | "event">,
  taskId: string,
  currentAttempt: number,
  report: NotAppliedReport,
): Promise<NotAppliedApplication> {
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
  // A row whose state is not what the server sealed answers nothing: no stored receipt replayed, no move from it.
  if (effect && !(await storedEffectSealed(tx, key, tenantId, { ...effect, task_id: taskId })))
    return { applied: false, ...evidenceMismatch(report.name) };
  const keep = async (
    code: "reconcile_required" | "stale_attempt" | "no_intent" | "receipt_conflict",
    message: string,
  ): Promise<NotAppliedApplication> => {
    await keepUnappliedReceipt(tx, tenantId, taskId, report, code, message);
    return { applied: false, code, message, kept: true };
  };
  if (report.attempt !== null && report.attempt < currentAttempt) {
    return keep(
      "stale_attempt",
      `This not_applied receipt comes from attempt ${report.attempt}, but attempt ${currentAttempt} has started since; it is kept as evidence for whoever reconciles ${report.name}, not applied.`,
    );
  }
  if (!effect) {
    return keep(
      "no_intent",
      `No intent is recorded for ${report.name}, so there is no write to settle; this not_applied receipt is kept as evidence.`,
    );
  }
  const last = effect.last_not_applied;
  switch (effect.status) {
    case "in_flight": {
      const reuse = await retryReusesApproval(tx, tenantId);
      const evidence: SideEffectNotApplied = {
        error: report.error,
        attempt: report.attempt,
        source: report.source,
        ...(report.event_id ? { event_id: report.event_id } : {}),
        by: actorRef(by.actor).label,
        at: new Date().toISOString(),
      };
      const status = await settleNotApplied(tx, by, {
        taskId,
        name: report.name,
        idempotencyKey: report.idempotency_key,
        notAppliedJson: JSON.stringify(evidence),
        reason: `The tool owner reported that nothing of the write was applied: ${report.error}`,
        reuseApproval: reuse,
      });
      if (!status) throw new Error("side effect changed while its row was locked");
      return { applied: true, replayed: false, status, error: report.error, from: "in_flight" };
    }
    case "not_started":
    case "approved":
    case "failed":
      // The same receipt again (a client's retry), with nothing since: no intent, no later reconcile.
      if (
        last &&
        !effect.intent_at &&
        !(effect.last_reconcile && Date.parse(effect.last_reconcile.at) > Date.parse(last.at)) &&
        last.error === report.error &&
        last.attempt === report.attempt
      ) {
        const status = effect.status === "approved" ? "approved" : "not_started";
        return { applied: true, replayed: true, status, error: last.error, from: effect.status };
      }
      return keep(
        "no_intent",
        effect.last_reconcile && effect.last_reconcile.outcome === "not_applied"
          ? `${report.name} was already settled as not applied by ${effect.last_reconcile.by}; this not_applied receipt is kept as evidence and changes nothing.`
          : `No write of ${report.name} is in flight (status ${effect.status.replace("_", " ")}); this not_applied receipt is kept as evidence and changes nothing.`,
      );
    case "completed":
      return keep(
        "receipt_conflict",
        `${report.name} completed (external operation ${effect.receipt?.external_operation_id ?? "unknown"}); this not_applied receipt contradicts it and is kept as evidence.`,
      );
    case "unknown":
      return keep(
        "reconcile_required",
        `${report.name}'s outcome became unknown before this not_applied receipt arrived${effect.status_reason ? ` — ${effect.status_reason.replace(/\.$/, "")}` : ""}. A responder must reconcile it; this receipt is kept as evidence.`,
      );
    default:
      return keep(
        "no_intent",
        `No write of ${report.name} is in flight (status ${effect.status.replace("_", " ")}); this not_applied receipt is kept as evidence and changes nothing.`,
      );
  }
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
            and reason = 'no_intent' and outcome = 'applied' and applied_at is null
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
  outcome: "applied" | "not_applied";
  /** A `not_applied` receipt's tool message (cleaned); null otherwise. */
  error: string | null;
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
    sql`select name, outcome, error, source, event_id, attempt, external_operation_id, result_digest, ${isoUtc("completed_at")} as completed_at,
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
