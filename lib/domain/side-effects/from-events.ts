/**
 * What runtime events change in custody state (docs/concepts.md#events, #side-effects, #tool-calls; decision 0006).
 * Events are facts the runtime reports: they are stored as sent (redacted), and the state they move follows the same
 * rules as the routes, whatever order batches arrive in, and in the order the server received them (within a batch, the
 * batch's order; never the runtime's `occurred_at`):
 * - `sandbox.created` / `sandbox.replaced` with a higher attempt → the current attempt rises and older attempts end
 *   ({@link observeAttempt});
 * - `run.interrupted`, `run.stopped`, `sandbox.destroyed` → the attempt they name (every attempt so far when they name
 *   none) ends: its in-flight writes become `unknown`, and its mutating tool calls without an outcome become effects
 *   whose outcome is `unknown` ({@link endAttempts});
 * - `side_effect.intent` → `in_flight` (lease from the server's clock). It reports a write the runtime started: when the
 *   intent route would have refused it for a revoked principal, a stop, a missing or used approval (also one its
 *   action's rule or its own `requires_approval` asks for), a stale attempt or a second write of another effect's
 *   payload (`duplicate_payload`, decision 0029; `repeats` names a deliberate one), the effect is `unknown` instead, so
 *   a person reconciles it; a receipt that arrived earlier completes it;
 * - `side_effect.receipt` → {@link applyReceiptReport}, the receipt route's rule (kept as evidence when not applied);
 *   with `outcome: "not_applied"` → {@link applyNotAppliedReport} (an in-flight write goes back to where a retry
 *   starts). A `tool.failed` naming an idempotency key settles nothing: a failure is no evidence nothing was applied;
 * - a mutating `tool.called` of an attempt that has already ended, or a `tool.completed` / `tool.failed` for a call that
 *   already became an unknown effect (kept as evidence);
 * - `task.created` naming a `principal` sets the task's principal until its first checkpoint; naming a `workflow`, the
 *   task's workflow when it has none.
 * Leases are expired by the server's clock before anything is applied, and the rows of the tasks involved are locked
 * FOR UPDATE, so an intent's decision (which holds them FOR SHARE) never interleaves with these changes.
 * Every transition is one of the lifecycle's guarded statements (./lifecycle): replays and races cannot regress a
 * status. Each event that moves an effect gets a note for its per-event result, and each moved effect an audit entry
 * by the key that sent the batch (one insert for the whole batch).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { findSideEffect } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { GateVerdict } from "@/lib/contract/api";
import type { Actor } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { CUSTODY_ALWAYS_TYPES } from "../events/catalogue";
import type { PreparedEvent } from "../events/ingest";
import { gatherGateFacts } from "../gate/ask";
import { evaluateGate, writePermission } from "../gate/evaluate";
import { normalizePrincipal } from "../tasks/principal";
import { noteClockSkew, SKEW_TOLERANCE_MS } from "../tasks/clock-skew";
import { attemptEnded, endAttempts, flagOrphanToolCalls, observeAttempt } from "./attempts";
import { DEFAULT_LEASE_SECONDS, markRepeat } from "./intent";
import { duplicateVerdict, readDuplicateFacts } from "./duplicates";
import { approvalForReportedIntent } from "../approvals/for-intent";
import { storedEffectSealed } from "./lifecycle/seal";
import {
  applyNotAppliedReport,
  applyReceiptReport,
  keepUnappliedReceipt,
  takePendingReceipt,
  toolErrorText,
} from "./receipts";
import { expireLeases } from "./lifecycle/lease";
import { flushMoves, forEvent, mover, type Mover } from "./lifecycle/moves";
import { applyReportedIntent, markReportedWriteUnknown } from "./lifecycle/statements";

/** What an event did to a side effect, for its per-event result. */
export type EffectNote = { name: string; applied: boolean; code?: string; message?: string };

type Attrs = {
  name?: string;
  idempotency_key?: string;
  payload_digest?: string;
  action?: string;
  tool?: string;
  mutation?: boolean;
  external_operation_id?: string;
  result_digest?: string;
  completed_at?: string;
  principal?: string;
  /** `task.created`: the workflow the run belongs to (decision 0049). */
  workflow?: string;
  call_id?: string;
  /** `side_effect.intent`: the runtime says the write requires approval (as on the intent route). */
  requires_approval?: unknown;
  /** `side_effect.intent`: the effect this write deliberately repeats. */
  repeats?: string;
  /** `side_effect.receipt`: `applied` (default) or `not_applied` (nothing of the write was applied). */
  outcome?: "applied" | "not_applied";
  /** `side_effect.receipt` with outcome `not_applied`: the tool's message. */
  error?: string;
};

/** Event types whose transitions run on every stored event of the type (the catalogue's `movesCustody: "always"`). */
const ALWAYS: ReadonlySet<string> = new Set(CUSTODY_ALWAYS_TYPES);

/**
 * The stored events of a batch whose transitions must run: side-effect, attempt and task events, mutating tool calls,
 * and outcomes of calls that became effects (`toolCallEffects`: call ids of the batch's tasks that have one).
 */
export function needsTransition(e: PreparedEvent, toolCallEffects: ReadonlySet<string>): boolean {
  if (ALWAYS.has(e.type)) return true;
  const attrs = e.attrs as Attrs;
  if (e.type === "tool.called") return attrs.mutation === true && typeof attrs.call_id === "string";
  if (e.type === "tool.completed" || e.type === "tool.failed")
    return typeof attrs.call_id === "string" && toolCallEffects.has(`${e.task_id}\u0000${attrs.call_id}`);
  return false;
}

/** Call ids (as `task \0 call`) among `outcomes` that already have an effect made from their call. One query. */
export async function callsWithEffects(tx: Db, tenantId: string, outcomes: PreparedEvent[]): Promise<Set<string>> {
  const pairs = outcomes
    .map((e) => ({ task_id: e.task_id, call_id: (e.attrs as Attrs).call_id }))
    .filter((p): p is { task_id: string; call_id: string } => typeof p.call_id === "string");
  if (!pairs.length) return new Set();
  const rows = await queryRows<{ task_id: string; call_id: string }>(
    tx,
    sql`select s.task_id, s.call_id from side_effects s
        join json_to_recordset(${JSON.stringify(pairs)}::json) as p(task_id text, call_id text)
          on s.task_id = p.task_id and s.call_id = p.call_id
        where s.tenant_id = ${tenantId} and s.origin = 'tool_call'`,
  );
  return new Set(rows.map((r) => `${r.task_id}\u0000${r.call_id}`));
}

/**
 * Applies the transitions of newly stored events in the batch's order (the order the server received them, decision
 * 0032), and writes the audit entries of the effects they moved (one insert, actor `sender`). Call in the batch's
 * transaction.
 * @param sender who sent the events (the runtime's key; the person or runtime of an import).
 * @returns a note per event that moved or tried to move a side effect.
 */
export async function applyEventTransitions(
  tx: Db,
  sender: Actor,
  events: PreparedEvent[],
  key: SigningKey,
): Promise<Map<string, EffectNote>> {
  const tenantId = sender.tenantId;
  const batch = mover(sender, "event");
  const notes = new Map<string, EffectNote>();
  // The gate's verdict per task and asking attempt, reused across a batch's intents: an intent applied as reported only
  // adds a write of its own attempt, which changes no verdict for that attempt. Anything that could block clears it.
  const verdicts: VerdictCache = new Map();
  const taskIds = [...new Set(events.map((e) => e.task_id))].sort();
  await tx.execute(sql`
    select task_id from tasks where tenant_id = ${tenantId}
      and task_id in (${sql.join(
        taskIds.map((t) => sql`${t}`),
        sql`, `,
      )})
    order by task_id for update`);
  for (const taskId of taskIds) await expireLeases(tx, tenantId, taskId);

  // The batch's order is the receive order (docs/concepts.md#receive-order): custody moves follow it, never the
  // runtime's `occurred_at`, so an end dated before a write it was sent after still ends that write.
  for (const e of events) {
    const attrs = e.attrs as Attrs;
    const by = forEvent(batch, e.id);
    switch (e.type) {
      case "sandbox.created":
      case "sandbox.replaced":
        verdicts.delete(e.task_id);
        if (e.attempt) await observeAttempt(tx, by, e.task_id, e.attempt, `A new sandbox`);
        break;
      case "run.interrupted":
      case "run.stopped":
      case "sandbox.destroyed":
        verdicts.delete(e.task_id);
        await endFromEvent(tx, by, e);
        break;
      case "task.created":
        if (attrs.principal) {
          await tx.execute(sql`update tasks set principal = ${normalizePrincipal(attrs.principal)}, updated_at = now()
                               where tenant_id = ${tenantId} and task_id = ${e.task_id} and principal is null`);
        }
        // The first task.created naming a workflow gives the task its workflow (decision 0049): a task row made
        // earlier (by a checkpoint, or by events that came before it) gets it here; a new row got it on insert.
        if (attrs.workflow) {
          await tx.execute(sql`update tasks set workflow = ${attrs.workflow}, updated_at = now()
                               where tenant_id = ${tenantId} and task_id = ${e.task_id} and workflow is null`);
        }
        break;
      case "side_effect.intent":
        notes.set(e.id, await applyIntentEvent(tx, by, e, attrs, key, verdicts));
        break;
      case "side_effect.receipt":
        notes.set(e.id, await applyReceiptEvent(tx, key, by, e, attrs));
        break;
      case "tool.called": {
        if (!(await attemptEnded(tx, tenantId, e.task_id, e.attempt ?? null, e.id))) break;
        verdicts.delete(e.task_id);
        const flagged = await flagOrphanToolCalls(tx, by, e.task_id, sql`true`, attrs.call_id!);
        if (flagged[0]) {
          notes.set(e.id, {
            name: flagged[0],
            applied: true,
            code: "unknown",
            message: "Its attempt had already ended with no outcome recorded: the write's outcome is unknown.",
          });
        }
        break;
      }
      case "tool.completed":
      case "tool.failed":
        notes.set(e.id, await keepLateOutcome(tx, tenantId, e, attrs));
        break;
    }
  }
  await flushMoves(tx, batch);
  return notes;
}

/** An attempt ends: its in-flight writes and open mutating calls become unknown; a clock far behind is noted. */
async function endFromEvent(tx: Db, by: Mover<"event">, e: PreparedEvent): Promise<void> {
  const tenantId = by.actor.tenantId;
  const scope = e.attempt ? { through: e.attempt } : ("all" as const);
  const why =
    e.type === "sandbox.destroyed"
      ? `The sandbox of attempt ${e.attempt ?? "unknown"} was destroyed (event ${e.id}) before a receipt was recorded.`
      : e.type === "run.stopped"
        ? `The run stopped (event ${e.id}) before a receipt was recorded.`
        : `The run was interrupted (event ${e.id}) before a receipt was recorded.`;
  // An end the runtime dates well before an intent the server registered in that same attempt: its clock is behind.
  const [latest] = await queryRows<{ intent_at: string | null }>(
    tx,
    sql`select ${isoUtc("max(intent_at)")} as intent_at from side_effects
        where tenant_id = ${tenantId} and task_id = ${e.task_id} and status = 'in_flight'
          ${e.attempt ? sql`and intent_attempt = ${e.attempt}` : sql``}`,
  );
  if (latest?.intent_at) {
    const behind = Date.parse(latest.intent_at) - Date.parse(e.occurred_at);
    if (behind > SKEW_TOLERANCE_MS) {
      await noteClockSkew(
        tx,
        tenantId,
        e.task_id,
        -behind,
        `${e.type} (event ${e.id}) is dated ${e.occurred_at}, ${Math.round(behind / 1000)} s before the server registered an intent of the same attempt: the runtime's clock seems to be behind. Decisions follow the order the server received things in.`,
      );
    }
  }
  await endAttempts(tx, by, e.task_id, scope, why);
}

/** Notes, on their tasks, events dated more than the tolerance ahead of the server's clock. */
export async function noteFutureClocks(tx: Db, tenantId: string, events: PreparedEvent[]): Promise<void> {
  const now = Date.now();
  for (const e of events) {
    const ahead = Date.parse(e.occurred_at) - now;
    if (ahead > SKEW_TOLERANCE_MS) {
      await noteClockSkew(
        tx,
        tenantId,
        e.task_id,
        ahead,
        `Event ${e.id} is dated ${e.occurred_at}, ${Math.round(ahead / 1000)} s after the server received it: the runtime's clock seems to be ahead.`,
      );
    }
  }
}

async function currentAttempt(tx: Db, tenantId: string, taskId: string): Promise<number> {
  const [t] = await queryRows<{ current_attempt: number }>(
    tx,
    sql`select current_attempt from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return t?.current_attempt ?? 0;
}

/** The effect a `side_effect.intent` event reports, as the lifecycle's statements take it. */
function reported(e: PreparedEvent, attrs: Attrs) {
  return {
    taskId: e.task_id,
    name: attrs.name!,
    idempotencyKey: attrs.idempotency_key!,
    tool: attrs.tool ?? attrs.name!,
    action: attrs.action ?? null,
    mutation: attrs.mutation ?? true,
    payloadDigest: attrs.payload_digest ?? null,
    attempt: e.attempt ?? null,
    repeats: attrs.repeats ?? null,
  };
}

type VerdictCache = Map<string, { attempt: number; verdict: GateVerdict }>;

async function applyIntentEvent(
  tx: Db,
  by: Mover<"event">,
  e: PreparedEvent,
  attrs: Attrs,
  key: SigningKey,
  verdicts: VerdictCache,
): Promise<EffectNote> {
  const name = attrs.name!;
  const idemKey = attrs.idempotency_key!;
  const attempt = e.attempt!;
  const tenantId = by.actor.tenantId;
  const seen = await observeAttempt(tx, by, e.task_id, attempt, "An intent from a new attempt");
  if (seen.raised) verdicts.delete(e.task_id);
  const current = seen.current ?? 0;
  const existing = await findSideEffect(tx, tenantId, e.task_id, name, { forUpdate: true });
  if (existing && existing.idempotency_key !== idemKey) {
    return {
      name,
      applied: false,
      code: "idempotency_key_mismatch",
      message: `${name} is bound to idempotency key "${existing.idempotency_key}"; nothing changed.`,
    };
  }
  // A row whose state is not what the server sealed is neither moved nor answered from (decision 0036).
  if (existing && !(await storedEffectSealed(tx, key, tenantId, { ...existing, task_id: e.task_id })))
    return {
      name,
      applied: false,
      code: "evidence_mismatch",
      message: `${name}'s stored state is not what the server sealed (changed outside the server); nothing changed.`,
    };
  if (existing && existing.payload_digest && attrs.payload_digest && existing.payload_digest !== attrs.payload_digest) {
    return {
      name,
      applied: false,
      code: "idempotency_key_mismatch",
      message: `${name} was registered with another payload_digest; nothing changed.`,
    };
  }
  if (attempt < current) {
    const reason = `Attempt ${attempt}, older than the current attempt ${current}, reported starting this write (event ${e.id}).`;
    // The effect is unknown (created when the server had not heard of it).
    await markReportedWriteUnknown(tx, by, reported(e, attrs), reason);
    verdicts.delete(e.task_id);
    return {
      name,
      applied: false,
      code: "stale_attempt",
      message: `${reason} A stale attempt may not write; the effect is unknown until reconciled unless it had already completed.`,
    };
  }
  if (existing?.status === "completed" || existing?.status === "unknown" || existing?.status === "in_flight") {
    const code =
      existing.status === "completed" ? "replay" : existing.status === "unknown" ? "reconcile_required" : "in_flight";
    return {
      name,
      applied: false,
      code,
      message: `${name} is already ${existing.status.replace("_", " ")}; nothing changed.`,
    };
  }
  // A write reported from an attempt that had ended when the server received the report (the batch's order; as for a
  // mutating `tool.called`, attemptEnded): an interruption sent before it in the batch ends it whatever the dates.
  if (await attemptEnded(tx, tenantId, e.task_id, attempt, e.id)) {
    const reason = `Attempt ${attempt} had ended (interrupted, stopped or its sandbox destroyed, with no run.resumed since) when this write was reported (event ${e.id}).`;
    await markReportedWriteUnknown(tx, by, reported(e, attrs), reason);
    verdicts.delete(e.task_id);
    return { name, applied: false, code: "unknown", message: `${reason} The effect is unknown until reconciled.` };
  }
  // One write, one go (decision 0029): a second write of a payload another effect of the task wrote, is writing or may
  // have written is refused as the intent route refuses it, unless it names that effect in `repeats`.
  const mutation = attrs.mutation ?? true;
  let repeatOfApproved = false;
  if (mutation && attrs.payload_digest) {
    const probe = {
      name,
      idempotencyKey: idemKey,
      action: attrs.action ?? null,
      payloadDigest: attrs.payload_digest,
      repeats: attrs.repeats ?? null,
    };
    const verdict = duplicateVerdict(probe, await readDuplicateFacts(tx, tenantId, e.task_id, probe));
    if ("refused" in verdict) {
      const why = verdict.refused.message.replace(/\.$/, "");
      const reason = `A write was reported (event ${e.id}) that the intent route would have refused: ${why}.`;
      await markReportedWriteUnknown(tx, by, reported(e, attrs), reason);
      verdicts.delete(e.task_id);
      return {
        name,
        applied: false,
        code: verdict.refused.code,
        message: `${reason} The effect is unknown until reconciled.`,
      };
    }
    repeatOfApproved = verdict.needsApproval;
  }
  let cached = verdicts.get(e.task_id);
  if (!cached || cached.attempt !== attempt) {
    cached = {
      attempt,
      verdict: evaluateGate(
        await gatherGateFacts(tx, tenantId, e.task_id, key, {}, new Date(), attempt, { forWrite: true }),
      ),
    };
    verdicts.set(e.task_id, cached);
  }
  const verdict = cached.verdict;
  const permission = writePermission(verdict, mutation);
  const refusal =
    existing?.status === "awaiting_approval"
      ? { code: "approval_required", message: "it waits for an approver's decision" }
      : !permission.allowed && permission.code !== "gate_replay"
        ? { code: permission.code, message: permission.message.replace(/\.$/, "") }
        : mutation
          ? // A reported write meets the intent route's approval rule (docs/concepts.md#approvals): bound digest, single use — a retry
            // after not_applied needs a fresh approval unless the workspace says otherwise — a repeat of an approved
            // write needs its own, and so does a write the runtime or the tenant's action rule says requires approval.
            await approvalForReportedIntent(
              tx,
              key,
              tenantId,
              e.task_id,
              idemKey,
              {
                payload_digest: attrs.payload_digest,
                action: attrs.action,
                tool: typeof attrs.tool === "string" ? attrs.tool : name,
              },
              attempt,
              { required: repeatOfApproved, requiresApproval: attrs.requires_approval === true },
            )
          : null;
  if (refusal) {
    const reason = `A write was reported (event ${e.id}) that the intent route would have refused: ${refusal.message}.`;
    // The effect is unknown (created when the server had not heard of it).
    await markReportedWriteUnknown(tx, by, reported(e, attrs), reason);
    verdicts.delete(e.task_id);
    return { name, applied: false, code: refusal.code, message: `${reason} The effect is unknown until reconciled.` };
  }

  const pending = await takePendingReceipt(tx, tenantId, e.task_id, name, idemKey);
  const status = pending ? "completed" : "in_flight";
  const reason = pending ? "Its receipt arrived before its intent; the intent completed it with that receipt." : null;
  const receiptJson = pending ? JSON.stringify(pending) : null;
  const moved = await applyReportedIntent(
    tx,
    by,
    { ...reported(e, attrs), attempt },
    { status, receiptJson, reason, leaseSeconds: DEFAULT_LEASE_SECONDS },
  );
  if (!moved) {
    return {
      name,
      applied: false,
      code: "idempotency_key_mismatch",
      message: `idempotency_key "${idemKey}" belongs to another side effect of this tenant; nothing changed.`,
    };
  }
  if (attrs.repeats) await markRepeat(tx, by.actor, e.task_id, name, idemKey, attrs.repeats, e.id);
  if (pending) return { name, applied: true, code: "completed", message: reason! };
  if (!permission.allowed)
    return {
      name,
      applied: true,
      code: permission.code,
      message: `Applied, but the gate said replay: ${permission.message}`,
    };
  return { name, applied: true };
}

async function applyReceiptEvent(
  tx: Db,
  key: SigningKey,
  by: Mover<"event">,
  e: PreparedEvent,
  attrs: Attrs,
): Promise<EffectNote> {
  const name = attrs.name!;
  const tenantId = by.actor.tenantId;
  await observeAttempt(tx, by, e.task_id, e.attempt!, "A receipt from a new attempt");
  const common = {
    name,
    idempotency_key: attrs.idempotency_key!,
    attempt: e.attempt ?? null,
    source: "event" as const,
  };
  const current = await currentAttempt(tx, tenantId, e.task_id);
  if (attrs.outcome === "not_applied") {
    const outcome = await applyNotAppliedReport(tx, key, by, e.task_id, current, {
      ...common,
      error: toolErrorText(attrs.error ?? "").text,
      event_id: e.id,
    });
    if (outcome.applied)
      return {
        name,
        applied: true,
        code: outcome.replayed ? "replay" : "not_applied",
        message: `Nothing of the write was applied (the tool said: ${outcome.error}); ${name} is ${outcome.status.replace("_", " ")} again.`,
      };
    return { name, applied: false, code: outcome.code, message: outcome.message };
  }
  const outcome = await applyReceiptReport(tx, key, by, e.task_id, current, {
    ...common,
    receipt: {
      external_operation_id: attrs.external_operation_id!,
      result_digest: attrs.result_digest ?? null,
      completed_at: new Date(attrs.completed_at ?? e.occurred_at).toISOString(),
    },
    event_id: e.id,
  });
  if (outcome.applied) return { name, applied: true, ...(outcome.replayed ? { code: "replay" } : {}) };
  return { name, applied: false, code: outcome.code, message: outcome.message };
}

/** A tool outcome for a call that already became an unknown effect: kept as evidence, the effect stays unknown. */
async function keepLateOutcome(tx: Db, tenantId: string, e: PreparedEvent, attrs: Attrs): Promise<EffectNote> {
  const [effect] = await queryRows<{ name: string; idempotency_key: string }>(
    tx,
    sql`select name, idempotency_key from side_effects
        where tenant_id = ${tenantId} and task_id = ${e.task_id} and origin = 'tool_call' and call_id = ${attrs.call_id!}`,
  );
  if (!effect) return { name: "", applied: false };
  const message = `${e.type} for call ${attrs.call_id} arrived after its attempt ended and the call became an unknown effect; kept as evidence for whoever reconciles it.`;
  await keepUnappliedReceipt(
    tx,
    tenantId,
    e.task_id,
    {
      name: effect.name,
      idempotency_key: effect.idempotency_key,
      attempt: e.attempt ?? null,
      receipt: {
        external_operation_id: typeof attrs.external_operation_id === "string" ? attrs.external_operation_id : "",
        result_digest: null,
        completed_at: e.occurred_at,
      },
      source: "event",
      event_id: e.id,
    },
    "late_outcome",
    message,
  );
  return { name: effect.name, applied: false, code: "late_outcome", message };
}
