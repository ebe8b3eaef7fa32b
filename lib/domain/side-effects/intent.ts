/**
 * `POST /api/v1/tasks/{task_id}/side-effects/{name}/intent` — register the intent to make an external write
 * (docs/concepts.md#intent, #resume-gate; decision 0006).
 *
 * - Fencing: the intent names its `attempt`; one from an attempt older than the task's current one is refused
 *   (`stale_attempt`); a newer one raises the current attempt first, which ends the older attempts (their in-flight
 *   writes become `unknown`).
 * - The gate is enforced: the answer for a new write comes from {@link writePermission} over the same verdict
 *   `POST /resume` gives for the same facts, so the two cannot disagree. Writes of one attempt may run side by side.
 * - Exactly one concurrent caller gets `go`: a new effect is created by `INSERT … ON CONFLICT DO NOTHING RETURNING`,
 *   an existing one moves by `UPDATE … WHERE status = <observed> RETURNING`; whoever gets no row back lost the race and
 *   re-reads the state. The task row is held FOR SHARE, so a transition that changes the gate's facts (which takes it
 *   FOR UPDATE) is never interleaved with a decision.
 * - One write, one go (decision 0029): a mutation of a payload another effect of the task wrote, is writing or may have
 *   written is refused unless `repeats` names it; a mutation's first statement takes a transaction lock on its task,
 *   action and payload digest, so concurrent intents for one payload under different names or keys decide in turn. A
 *   sent `payload` must have the digest `payload_digest`.
 * - Every refusal after the body parsed is audited, like every go.
 */
import { sql, type SQL } from "drizzle-orm";
import { insertServerEvent } from "../events/server-events";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { findSideEffect, type SideEffectRow } from "@/db/queries/side-effects";
import type { Receipt } from "@/lib/contract/api";
import { appendAuditPending, auditPendingRowsSql, notePendingAudit, withAuditSealed } from "../audit/append";
import { actorRef, authorize, type Actor } from "../authz";
import { DomainError, isDomainError, notFound, validationError } from "../errors";
import { findSecrets, redactJson } from "../events/redact";
import { readGateFacts } from "../gate/ask";
import { evaluateGate, writePermission } from "../gate/evaluate";
import {
  IDEMPOTENCY_KEY,
  IDEMPOTENCY_KEY_RULE,
  identifierName,
  plainName,
  SIDE_EFFECT_NAME,
  SIDE_EFFECT_NAME_RULE,
} from "../names";
import { ATTEMPT_MAX, LIMITS } from "../limits";
import type { SigningKey } from "../crypto/signing";
import { normalDigest, toolCallDigest } from "../crypto/canonical";
import { checkTaskId } from "../tasks/read";
import { withRetry } from "../tx";
import { approvalForIntent, consumeApproval } from "../approvals/for-intent";
import { observeAttempt } from "./attempts";
import { recordSpend, spendStanding } from "./spending";
import { takePendingReceipt } from "./receipts";
import { duplicateVerdict, parseDuplicateFacts, WRITTEN_STATUSES } from "./duplicates";
import { LEASE_AUDIT_UPTO, leaseExpiryCtes } from "./lifecycle/lease";
import { flushMoves, mover } from "./lifecycle/moves";
import { completeFromPendingReceipt, startIntent, startNewIntent } from "./lifecycle/statements";
import { ABSENT, mayLeave } from "./lifecycle/transitions";
import type { SigningContext } from "../context";
import { effectSeal, leavesNothingToSeal, nothingLeftToSeal, sealHolds, sealMovedEffects } from "./lifecycle/seal";

export { IDEMPOTENCY_KEY };

/** Default lease of an intent: how long the holder may take before the effect counts as `unknown`. */
export const DEFAULT_LEASE_SECONDS = 300;

/** The attempt field of intents and receipts: the sandbox attempt that makes the request. */
export const attemptField = z
  .number({ error: "attempt is required: the sandbox attempt (1, 2, …) making this request" })
  .int("attempt must be a whole number")
  .min(1, "attempt starts at 1")
  .max(ATTEMPT_MAX, `attempt is at most ${ATTEMPT_MAX}`);

export const intentBodySchema = z.strictObject({
  idempotency_key: z.string(),
  payload_digest: plainName("payload_digest", LIMITS.digest),
  action: identifierName("action", LIMITS.actionName),
  mutation: z.boolean({ error: "mutation must be true or false" }),
  tool: identifierName("tool", LIMITS.toolName).optional(),
  lease_seconds: z.number().int().min(5).max(86_400).optional(),
  attempt: attemptField,
  /** The runtime says this write needs an approver's decision (docs/concepts.md#approvals). */
  requires_approval: z.boolean({ error: "requires_approval must be true or false" }).optional(),
  /** The tool arguments, for the approver to read (credential values are refused). */
  payload: z.json().optional(),
  /** The hosts the write reaches (an approval is bound to them: another destination makes it stale; decision 0033). */
  destination_hosts: z
    .array(
      z
        .string()
        .max(LIMITS.host.max)
        .regex(
          /^[A-Za-z0-9][A-Za-z0-9.-]*(:[0-9]{1,5})?\.?$/,
          "must be a host name (letters, digits, '.', '-', an optional :port)",
        ),
    )
    .max(20, "at most 20 destination hosts")
    .optional(),
  /**
   * What the write spends, with its ISO 4217 currency (both or neither): checked against the active policy's spending
   * limit for the action; an approval for an amount never covers a larger one (decision 0033).
   */
  amount: z.number().positive("amount must be more than 0").max(1e12).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "currency must be an ISO 4217 code such as EUR")
    .optional(),
  /** The agent making the write and its version: an approval is bound to them. */
  agent: plainName("agent", LIMITS.agentName).optional(),
  agent_version: plainName("agent_version", LIMITS.agentName).optional(),
  /**
   * The earlier effect of the task this write deliberately repeats (same action and payload digest): without it, a
   * second write of a payload another effect wrote, is writing or may have written is refused (`duplicate_payload`).
   */
  repeats: z.string().regex(SIDE_EFFECT_NAME, `repeats: ${SIDE_EFFECT_NAME_RULE}`).optional(),
});

export type IntentOutcome = { decision: "go"; lease_expires_at: string } | { decision: "replay"; receipt: Receipt };

/**
 * Checks the idempotency key first, so a missing or malformed key is a 400 whatever else is wrong; then the schema, then
 * refuses credentials anywhere in what is kept. `clean` runs before that check, for text that is cleaned rather than
 * refused (a tool's error message).
 * @throws DomainError bad_request (key), validation_failed (other fields).
 */
export function parseKeyed<T extends { idempotency_key: string }>(
  schema: z.ZodType<T>,
  body: unknown,
  clean: (v: T) => T = (v) => v,
): T {
  const key = body && typeof body === "object" ? (body as { idempotency_key?: unknown }).idempotency_key : undefined;
  if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) {
    throw new DomainError(
      "bad_request",
      key === undefined ? "idempotency_key is required." : `${IDEMPOTENCY_KEY_RULE}.`,
      {
        fields: [{ path: "idempotency_key", message: "missing or malformed" }],
      },
    );
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const data = clean(parsed.data);
  const secrets = findSecrets(data);
  if (secrets.length) {
    throw validationError(
      secrets.map((s) => ({
        path: s.path.split("."),
        message: `looks like a credential value (${s.kind}); send references, never secrets`,
      })),
    );
  }
  return data;
}

/** Validates a side-effect name from the URL. @throws DomainError not_found */
export function checkEffectName(name: string): void {
  if (!SIDE_EFFECT_NAME.test(name)) throw notFound(`Side effect ${name}`);
}

/**
 * Observes the request's attempt in its own committed transaction (an intent or receipt from attempt n proves attempt
 * n exists, whatever is then answered), and refuses a stale one. Effects that end with older attempts are audited
 * with `actor` as the mover, sealed before this returns.
 * @returns the task's current attempt.
 * @throws DomainError not_found (task), stale_attempt.
 */
export async function fenceAttempt(
  db: Db,
  actor: Actor,
  taskId: string,
  attempt: number,
  cause: string,
): Promise<number> {
  const current = await withAuditSealed(db, actor.tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const by = mover(actor, "request");
        const seen = await observeAttempt(tx, by, taskId, attempt, cause);
        if (seen.current === null) throw notFound(`Task ${taskId}`);
        await flushMoves(tx, by);
        return seen.current;
      }),
    ),
  );
  if (attempt < current) throw staleAttempt(attempt, current);
  return current;
}

/** The refusal of a write from an older attempt. */
export function staleAttempt(attempt: number, current: number): DomainError {
  return new DomainError(
    "stale_attempt",
    `This request comes from attempt ${attempt}, but attempt ${current} has started since: a stale sandbox may not write. Stop this sandbox; the current attempt continues the task.`,
    { attempt, current_attempt: current },
  );
}

/**
 * Checks a sent `payload` against the `payload_digest` it comes with: the digest of `{tool, arguments: payload}`
 * (lib/domain/crypto/canonical.ts `toolCallDigest`, the client's formula; `tool` defaults to the effect's name),
 * compared without case or a `sha256:` prefix. An approver reads the payload beside the digest, so the two must agree.
 * @throws DomainError payload_digest_mismatch (422, details {payload_digest, computed_payload_digest}), validation_failed
 *   (a payload with no canonical JSON form).
 */
export function checkPayloadDigest(
  name: string,
  input: { payload?: unknown; payload_digest: string; tool?: string },
): void {
  if (input.payload === undefined) return;
  let computed: string;
  try {
    computed = toolCallDigest(input.tool ?? name, input.payload);
  } catch (err) {
    throw validationError([{ path: ["payload"], message: `has no canonical JSON form (${(err as Error).message})` }]);
  }
  if (normalDigest(input.payload_digest) === computed) return;
  throw new DomainError(
    "payload_digest_mismatch",
    `payload_digest ${input.payload_digest} is not the digest of the payload sent (${computed}: sha256 of the RFC 8785 JSON of {"tool": "${input.tool ?? name}", "arguments": <payload>}). An approver reads the payload beside the digest, so they must agree.`,
    { payload_digest: input.payload_digest, computed_payload_digest: computed, tool: input.tool ?? name },
  );
}

/** Refusals that are decisions about authority or custody (audited); bad input is not. */
const AUDITED_REFUSALS = new Set([
  "duplicate_payload",
  "repeats_mismatch",
  "stale_attempt",
  "principal_revoked",
  "gate_stop",
  "gate_replay",
  "reconcile_required",
  "in_flight",
  "approval_required",
  "approval_mismatch",
  "approval_rejected",
  "idempotency_key_mismatch",
]);

/**
 * Registers an intent.
 * @param body `{idempotency_key, payload_digest, action, mutation, attempt, tool?, lease_seconds?, requires_approval?,
 *   payload?, agent?, agent_version?, repeats?}`.
 * @returns `go` with the lease expiry (ISO), or `replay` with the stored receipt (also when a receipt for this key
 *   arrived before its intent: the write already happened).
 * @throws DomainError not_found (task), bad_request (key), validation_failed, stale_attempt (409),
 *   idempotency_key_mismatch (422), in_flight (409, another holder's lease is live), reconcile_required (409, effect
 *   unknown), approval_required (403, details {approval_id, status}: the write needs a fresh approval; the request is
 *   created on first ask and the same one returned after), approval_mismatch (403, another digest under the approval,
 *   details {approval_id, bound_payload_digest, offered_payload_digest}), approval_rejected (403), principal_revoked (403, any intent of a revoked principal's
 *   task), gate_stop / gate_replay (409, a mutation the gate does not permit; `details.reasons` as the gate gives them),
 *   duplicate_payload (409, another effect of the task wrote, is writing or may have written the same action and payload;
 *   details {side_effect, idempotency_key, status, receipt?, same_writes}), repeats_mismatch (422), payload_digest_mismatch
 *   (422, details {payload_digest, computed_payload_digest}). Rules: docs/concepts.md#intent, decision 0029.
 */
export async function registerIntent(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, name, body }: { taskId: string; name: string; body: unknown },
): Promise<IntentOutcome> {
  authorize(actor, "side_effects.intent");
  checkTaskId(taskId);
  checkEffectName(name);
  const input = parseKeyed(intentBodySchema, body);
  checkPayloadDigest(name, input);
  if ((input.amount === undefined) !== (input.currency === undefined)) {
    throw validationError([
      { path: [input.amount === undefined ? "amount" : "currency"], message: "amount and currency go together" },
    ]);
  }
  // Whatever is answered, the audit entries its transactions committed join the chain before the answer goes out.
  return withAuditSealed(db, actor.tenantId, () => registerParsed(db, { actor, taskId, name, input, key }));
}

/** One intent being decided: who asks, for which task and effect, with what (validated), and the server's key. */
type IntentCall = {
  actor: Actor;
  taskId: string;
  name: string;
  input: z.infer<typeof intentBodySchema>;
  key: SigningKey;
};

async function registerParsed(db: Db, call: IntentCall): Promise<IntentOutcome> {
  const { actor, taskId, name, input } = call;
  let decided: Decided;
  try {
    // Most intents fall under no approval: the deciding transaction's facts say so, and it decides at once.
    decided = await decideWithApproval(db, call, { recheckAttempt: true });
    if (decided === "raise") {
      // A new attempt: raised and the older attempts ended in a transaction of their own (committed whatever is then
      // answered), then decided like any other intent.
      await fenceAttempt(db, actor, taskId, input.attempt, "An intent from a new attempt");
      decided = await decideWithApproval(db, call, { recheckAttempt: false });
    }
  } catch (err) {
    // Refused outside the deciding transaction (a stale attempt found while raising): audited in a transaction of its own.
    if (isDomainError(err) && AUDITED_REFUSALS.has(err.code)) {
      await db
        .transaction(async (tx) => void (await auditIntent(tx, actor, taskId, name, refusalDetails(input, err))))
        .catch(() => {});
    }
    throw err;
  }
  if (decided === "raise" || "askApproval" in decided) {
    throw new DomainError("in_flight", `Another intent for ${name} is being registered right now; try again shortly.`);
  }
  if ("refused" in decided) throw decided.refused;
  return decided;
}

/**
 * Decides an intent, asking the approval path first when the decision says one may apply: the deciding transaction then
 * answers "approval" without deciding (a request under the key, a rule for the action, `requires_approval`, an effect
 * awaiting approval), the approval path runs (lib/domain/approvals/for-intent.ts) — committed on its own, so a request
 * it creates stands when the intent is refused — and the intent is decided again with the fresh approval it found.
 * @param opts.recheckAttempt re-read the task's current attempt before the approval path and refuse a writer from an
 *   older one: a stale sandbox may neither ask for approvals nor offer digests. Set for the first decision; after a
 *   raise the fence has just established the attempt.
 * @returns the decision ("raise" when the intent names a newer attempt than the task's current one).
 * @throws DomainError stale_attempt (the re-read attempt), and whatever the approval path refuses.
 */
async function decideWithApproval(db: Db, call: IntentCall, opts: { recheckAttempt: boolean }): Promise<Decided> {
  const { actor, taskId, name, input } = call;
  const decided = await decideIntent(db, call, { checked: false });
  if (decided === "raise" || !("askApproval" in decided)) return decided;
  if (opts.recheckAttempt) {
    const [task] = await queryRows<{ current_attempt: number }>(
      db,
      sql`select current_attempt from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId}`,
    );
    if (task && input.attempt < task.current_attempt) throw staleAttempt(input.attempt, task.current_attempt);
  }
  // A repeat of a write that went under an approval needs one of its own, whatever the intent says; so does a write
  // over what remains of its spending limit.
  const asked =
    decided.askApproval.repeatOfApproved || decided.askApproval.overLimit
      ? { ...input, requires_approval: true }
      : input;
  const found = await approvalForIntent(db, call.key, actor, taskId, name, asked);
  return decideIntent(db, call, {
    checked: true,
    approvalId: found?.approval_id ?? null,
    reused: found?.reused === true,
  });
}

/**
 * Where the approval path stands for a decision: not yet asked (`checked: false`: answer "approval" when one may
 * apply), or asked, with the fresh approval it found (consumed by a go).
 */
type ApprovalStep =
  | { checked: false }
  /** `reused`: the approval was used by the write's first go, and the workspace lets a retry after not_applied reuse it. */
  | { checked: true; approvalId: string | null; reused: boolean };

/**
 * What an intent's decision comes to: an answer, a refusal (already audited), "raise the task's attempt first", or
 * "ask the approval path first" (`repeatOfApproved`: the write repeats one that went under an approval).
 */
type Decided =
  | IntentOutcome
  | { refused: DomainError }
  | "raise"
  | { askApproval: { repeatOfApproved: boolean; overLimit: boolean } };

/** The audit details of a refused intent. */
function refusalDetails(input: z.infer<typeof intentBodySchema>, err: DomainError): Record<string, unknown> {
  return {
    idempotency_key: input.idempotency_key,
    mutation: input.mutation,
    attempt: input.attempt,
    refused: err.code,
    ...(input.repeats ? { repeats: input.repeats } : {}),
    ...(err.code === "duplicate_payload"
      ? { duplicate_of: (err.details as { side_effect?: string } | undefined)?.side_effect ?? null }
      : {}),
    ...(err.code === "gate_stop" || err.code === "gate_replay"
      ? { reasons: ((err.details as { reasons?: Array<{ code: string }> })?.reasons ?? []).map((r) => r.code) }
      : {}),
  };
}

/**
 * Decides an intent in one transaction: lazy lease expiry and the task row FOR SHARE (one statement), then the gate's
 * facts and the effect (one statement), then the insert or guarded update and its audit row. A refusal about authority
 * or custody is audited in the same transaction, which then commits (it wrote nothing else but the lease expiry, which
 * stands whatever is answered); other errors roll back.
 * @returns "raise" when the intent names a newer attempt than the task's current one (nothing decided).
 */
async function decideIntent(db: Db, call: IntentCall, approval: ApprovalStep): Promise<Decided> {
  return withRetry(() =>
    db.transaction(async (tx) => {
      try {
        const decided = await decideIn(tx, call, approval);
        // The moves this intent made carry the server's seal, committed with them (decision 0035). A replay made none,
        // and a new effect's insert wrote its own: skipping the read-back saves them two round trips.
        if (leavesNothingToSeal(decided)) return decided;
        await sealMovedEffects(tx, call.key, call.actor.tenantId, [call.taskId], [call.name]);
        return decided;
      } catch (err) {
        if (!isDomainError(err) || !AUDITED_REFUSALS.has(err.code)) throw err;
        await auditIntent(tx, call.actor, call.taskId, call.name, refusalDetails(call.input, err));
        return { refused: err };
      }
    }),
  );
}

async function decideIn(tx: Db, call: IntentCall, approval: ApprovalStep): Promise<Decided> {
  const { actor, taskId, name, input, key } = call;
  const tenantId = actor.tenantId;
  const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;
  // The lock comes first, in a statement of its own, so the facts statement's snapshot sees every transition that
  // held the task row FOR UPDATE before this one got it. Expired leases become unknown on the way. A mutation also
  // takes a transaction lock on its task, action and payload digest: two intents for the same payload under different
  // names or keys hold the task row side by side (FOR SHARE), so this lock decides which goes first, and the second
  // one's facts statement sees the first one's write (decision 0029).
  const [task] = await queryRows<{ current_attempt: number; audit_upto: string | null }>(
    tx,
    sql`with ${leaseExpiryCtes(tenantId, taskId)}
        select current_attempt, ${LEASE_AUDIT_UPTO} as audit_upto${
          input.mutation ? sql`, ${samePayloadLock(tenantId, taskId, input)} as payload_locked` : sql``
        }
        from tasks where tenant_id = ${tenantId} and task_id = ${taskId} for share`,
  );
  notePendingAudit(task?.audit_upto);
  if (!task) throw notFound(`Task ${taskId}`);
  if (input.attempt < task.current_attempt) throw staleAttempt(input.attempt, task.current_attempt);
  if (input.attempt > task.current_attempt) return "raise";

  const read = await readGateFacts(tx, tenantId, taskId, key, {
    now: new Date(),
    askingAttempt: input.attempt,
    forWrite: true,
    effectName: name,
    pendingReceiptKey: input.idempotency_key,
    ...(input.mutation && !approval.checked
      ? { approvalProbe: { idempotencyKey: input.idempotency_key, action: input.action, tool: input.tool ?? name } }
      : {}),
    ...(input.mutation
      ? {
          duplicateProbe: {
            name,
            idempotencyKey: input.idempotency_key,
            action: input.action,
            payloadDigest: input.payload_digest,
            repeats: input.repeats ?? null,
          },
        }
      : {}),
  });
  if (!read) throw notFound(`Task ${taskId}`);
  const existing = read.effect;
  // A row whose state is not what the server sealed answers nothing from that state: no replay of its receipt, no go.
  if (existing && !sealHolds(key, tenantId, { ...existing, task_id: taskId })) {
    const reasons = evaluateGate(read.facts).reasons.filter((r) => r.code === "evidence_mismatch");
    throw new DomainError(
      "gate_stop",
      `The resume gate says stop (evidence_mismatch): ${name}'s stored state is not what the server sealed, so its receipt is not replayed and no write may start. Ask POST /resume for the details.`,
      { reasons },
    );
  }
  // A write this intent would start (its own effect has not written): not a second write of another effect's payload.
  let repeatOfApproved = false;
  if (input.mutation && !(existing && (WRITTEN_STATUSES as readonly string[]).includes(existing.status))) {
    const verdict = duplicateVerdict({ name, repeats: input.repeats ?? null }, parseDuplicateFacts(read.duplicates));
    if ("refused" in verdict) throw verdict.refused;
    repeatOfApproved = verdict.needsApproval;
  }
  const spendWrite = {
    name,
    idempotencyKey: input.idempotency_key,
    action: input.action,
    amount: input.amount,
    currency: input.currency,
  };
  // A write over what remains of its spending limit needs an approval (decision 0033).
  const overLimit =
    input.mutation && !approval.checked && (await spendStanding(tx, tenantId, taskId, spendWrite))?.over === true;
  if (
    input.mutation &&
    !approval.checked &&
    (input.requires_approval === true ||
      repeatOfApproved ||
      overLimit ||
      read.approvalMayApply ||
      existing?.status === "awaiting_approval")
  ) {
    return { askApproval: { repeatOfApproved, overLimit } };
  }
  const approvalId = approval.checked ? approval.approvalId : null;
  const own = existing ? decideExisting(existing, input) : "try_go";
  const permission = writePermission(evaluateGate(read.facts), input.mutation);
  if (!permission.allowed && permission.code === "principal_revoked") {
    throw new DomainError("principal_revoked", `${permission.message} No intent may be registered on its authority.`, {
      reasons: permission.reasons,
    });
  }
  if (own !== "try_go") return nothingLeftToSeal(own);
  // A receipt for this key that arrived before its intent: the write already happened; replay it.
  const pending = read.pendingReceipt
    ? await takePendingReceipt(tx, tenantId, taskId, name, input.idempotency_key)
    : null;
  if (pending) return completeFromPending(tx, actor, taskId, name, input, existing, pending);
  if (!permission.allowed) throw new DomainError(permission.code, permission.message, { reasons: permission.reasons });
  // A fresh approval authorizes exactly one go: used here, in the deciding transaction (unless the workspace lets a retry
  // after not_applied go under the approval its first go used; then it is named as reused).
  const reused = approval.checked && approval.reused;
  if (approvalId && !reused) await consumeApproval(tx, tenantId, approvalId, input.attempt);
  const approvalNote = approvalId ? { approval_id: approvalId, ...(reused ? { approval_reused: true } : {}) } : {};
  const repeats = input.repeats ?? null;
  const repeatNote = repeats ? { repeats } : {};

  // What the write sends, for the person who may have to reconcile it (decision 0045); commits with the go or not at all.
  await keepPayload(tx, tenantId, taskId, name, input);

  const effect = {
    tenantId,
    taskId,
    name,
    idempotencyKey: input.idempotency_key,
    action: input.action,
    mutation: input.mutation,
    payloadDigest: input.payload_digest,
    attempt: input.attempt,
    leaseSeconds,
    repeats,
  };
  // An effect the facts statement found is moved below, not inserted: its insert could only conflict.
  if (!existing) {
    // The row's seal over the facts the insert stores, and its audit entry, travel with the insert (decision 0055).
    const seal = effectSeal(key, tenantId, {
      task_id: taskId,
      name,
      idempotency_key: input.idempotency_key,
      status: "in_flight",
      receipt: null,
    });
    const entry = (from: SQL) =>
      auditPendingRowsSql(
        actor,
        {
          action: INTENT_RECORDED,
          target: intentTarget(taskId, name),
          details: {
            idempotency_key: input.idempotency_key,
            from: "created",
            mutation: input.mutation,
            attempt: input.attempt,
            ...approvalNote,
            ...repeatNote,
          },
        },
        from,
      );
    const created = await startNewIntent(tx, { ...effect, tool: input.tool ?? name }, seal, entry);
    if (created) {
      notePendingAudit(created.auditId);
      if (input.mutation) await recordSpend(tx, tenantId, taskId, spendWrite);
      if (repeats) await markRepeat(tx, actor, taskId, name, input.idempotency_key, repeats);
      return nothingLeftToSeal({ decision: "go" as const, lease_expires_at: created.leaseExpiresAt });
    }
  }

  for (let round = 0; round < 3; round++) {
    // First the row the facts statement read under the task's lock; a row moved since then loses the guarded update
    // below, and the next round reads it again.
    const current = round === 0 && existing ? existing : await findSideEffect(tx, tenantId, taskId, name);
    if (!current) {
      throw new DomainError(
        "idempotency_key_mismatch",
        `idempotency_key "${input.idempotency_key}" already belongs to another side effect of this tenant; each effect needs its own key.`,
      );
    }
    const decided = decideExisting(current, input);
    if (decided !== "try_go") return decided;
    // decideExisting answers every status the go may not leave; the table says which it may.
    if (!mayLeave("intent_go", current.status)) throw new Error(`intent_go cannot leave ${current.status}`);
    const moved = await startIntent(tx, current.status, { ...effect, tool: input.tool ?? null });
    if (moved) {
      if (input.mutation) await recordSpend(tx, tenantId, taskId, spendWrite);
      await auditIntent(tx, actor, taskId, name, {
        idempotency_key: input.idempotency_key,
        from: current.status,
        mutation: input.mutation,
        attempt: input.attempt,
        ...approvalNote,
        ...repeatNote,
      });
      if (repeats) await markRepeat(tx, actor, taskId, name, input.idempotency_key, repeats);
      return { decision: "go" as const, lease_expires_at: moved };
    }
  }
  throw new DomainError("in_flight", `Another intent for ${name} is being registered right now; try again shortly.`);
}

/**
 * Keeps the payload an intent sent (checked against its digest before; secrets redacted) beside its effect, once per
 * effect and digest, for the reconcile dialog (decision 0045). Nothing when the intent sent only a digest.
 */
async function keepPayload(
  tx: Db,
  tenantId: string,
  taskId: string,
  name: string,
  input: { payload?: unknown; payload_digest: string },
): Promise<void> {
  if (input.payload === undefined || input.payload === null) return;
  await queryRows(
    tx,
    sql`insert into side_effect_payloads (tenant_id, task_id, name, payload_digest, payload)
        values (${tenantId}, ${taskId}, ${name}, ${normalDigest(input.payload_digest)},
                ${JSON.stringify(redactJson(input.payload).value)}::jsonb)
        on conflict do nothing`,
  );
}

/** Completes the effect with a receipt that arrived before its intent, and answers a replay. */
async function completeFromPending(
  tx: Db,
  actor: Actor,
  taskId: string,
  name: string,
  input: z.infer<typeof intentBodySchema>,
  existing: SideEffectRow | undefined,
  receipt: Receipt,
): Promise<IntentOutcome> {
  const tenantId = actor.tenantId;
  const reason =
    "Its receipt arrived before its intent; the intent completed it with that receipt instead of starting a second write.";
  const observed = existing?.status ?? ABSENT;
  // Only called when decideExisting answered try_go (or there is no effect): the table says which statuses that is.
  if (!mayLeave("intent_replays_pending_receipt", observed))
    throw new Error(`intent_replays_pending_receipt cannot leave ${observed}`);
  const done = await completeFromPendingReceipt(tx, observed, {
    tenantId,
    taskId,
    name,
    idempotencyKey: input.idempotency_key,
    tool: input.tool ?? name,
    action: input.action,
    mutation: input.mutation,
    payloadDigest: input.payload_digest,
    attempt: input.attempt,
    receiptJson: JSON.stringify(receipt),
    reason,
    repeats: input.repeats ?? null,
  });
  if (!done)
    throw new DomainError("in_flight", `Another intent for ${name} is being registered right now; try again shortly.`);
  await auditIntent(tx, actor, taskId, name, {
    idempotency_key: input.idempotency_key,
    from: existing?.status ?? "created",
    mutation: input.mutation,
    attempt: input.attempt,
    completed_by_pending_receipt: receipt.external_operation_id,
  });
  return { decision: "replay", receipt };
}

/**
 * The answer for an existing effect, or `try_go` when it may move to in_flight.
 * Source of each rule: docs/concepts.md#intent (replay, mismatch, reconcile_required, approval_required).
 */
export function decideExisting(
  effect: Pick<SideEffectRow, "idempotency_key" | "payload_digest" | "status" | "receipt" | "lease_expires_at">,
  input: { idempotency_key: string; payload_digest: string },
): IntentOutcome | "try_go" {
  if (effect.idempotency_key !== input.idempotency_key) {
    throw new DomainError(
      "idempotency_key_mismatch",
      `This side effect is bound to idempotency key "${effect.idempotency_key}"; retry with that key.`,
    );
  }
  if (effect.payload_digest && effect.payload_digest !== input.payload_digest) {
    throw new DomainError(
      "idempotency_key_mismatch",
      "The same idempotency key was used with a different payload_digest. A changed payload needs a new side effect and key.",
      { stored_payload_digest: effect.payload_digest },
    );
  }
  switch (effect.status) {
    case "completed":
      return { decision: "replay", receipt: publicReceipt(effect.receipt!) };
    case "unknown":
      throw new DomainError(
        "reconcile_required",
        "The outcome of the earlier attempt is unknown (request sent, no receipt). A responder must reconcile it before any retry.",
      );
    case "in_flight":
      throw new DomainError(
        "in_flight",
        `Another holder's intent is live until ${effect.lease_expires_at ?? "its receipt arrives"}; wait for its receipt.`,
      );
    case "awaiting_approval":
      throw new DomainError("approval_required", "This write needs a fresh approval before it may run.");
    default:
      return "try_go";
  }
}

/** A stored receipt as the API returns it (warnings stay on the server's view of the effect). */
function publicReceipt(r: Receipt & { warnings?: string[] }): Receipt {
  return {
    external_operation_id: r.external_operation_id,
    result_digest: r.result_digest ?? null,
    completed_at: r.completed_at,
  };
}

/**
 * SQL: takes the transaction's lock on one task's writes of one action and payload digest (digest compared without
 * case or a `sha256:` prefix), released at commit. Only intents take it (the events path holds the task row FOR UPDATE,
 * which no intent decides beside).
 */
function samePayloadLock(tenantId: string, taskId: string, input: { action: string; payload_digest: string }) {
  const lockKey = [tenantId, taskId, input.action.toLowerCase(), normalDigest(input.payload_digest)].join("\u001f");
  return sql`pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`;
}

/**
 * Puts a deliberate repeat on the task's session lane (a `decision.recorded` event with `kind: "repeat"`), so the
 * timeline shows that the runtime meant to write the same payload again. Written once per effect and key.
 */
export async function markRepeat(
  tx: Db,
  actor: Actor,
  taskId: string,
  name: string,
  idempotencyKey: string,
  repeats: string,
  eventId?: string,
): Promise<void> {
  const attrs = {
    kind: "repeat",
    side_effect: name,
    repeats,
    idempotency_key: idempotencyKey,
    ...(eventId ? { event_id: eventId } : {}),
  };
  await insertServerEvent(tx, {
    tenantId: actor.tenantId,
    eventId: `custody:repeat:${taskId}:${name}:${idempotencyKey}`.slice(0, 200),
    taskId,
    plane: "session",
    type: "decision.recorded",
    occurredAt: sql`now()`,
    actor: actorRef(actor).label,
    attrs,
  });
}

/**
 * The intent's audit entry, in the caller's transaction (the deciding one, for a go and for a refusal alike); sealed
 * into the chain after the commit by {@link registerIntent}.
 */
async function auditIntent(tx: Db, actor: Actor, taskId: string, name: string, details: Record<string, unknown>) {
  await appendAuditPending(tx, actor, { action: INTENT_RECORDED, target: intentTarget(taskId, name), details });
}

/** The action of every intent's audit entry: a go, a replay's note, a refusal. */
const INTENT_RECORDED = "side_effect.intent_recorded";

/** The audit target of an effect's intent entries. */
function intentTarget(taskId: string, name: string): string {
  return `side_effect:${taskId}/${name}`;
}
