/**
 * `POST /api/v1/approvals/{id}/decision` (docs/concepts.md#approvals;
 * docs/decisions/0012-approval-binding-and-freshness.md).
 *
 * - Only a signed-in person with a deciding role (approver, admin; the owner counts as admin) decides; a viewer, a
 *   responder and a runtime API key are refused (lib/domain/authz.ts `approvals.decide`).
 * - Separation of duties: the requester may not decide their own request, unless the tenant relaxed it
 *   (`allow_self_approval`; the decision then records `self_approved`).
 * - A fresh pending request is decided by one guarded `UPDATE … WHERE decision IS NULL AND superseded_by IS NULL`:
 *   of many concurrent deciders exactly one row comes back; every other gets `409 already_decided` naming the stored
 *   decision and who made it. A second decision of a decided request is the same 409.
 * - A stale request (pending or approved; lib/domain/approvals/freshness.ts) is decided by re-binding: one guarded
 *   `UPDATE` marks it superseded, and a new request carrying the current values (policy version, input digest, the
 *   payload and agent a later intent offered) takes the decision. The old binding stays on record.
 * - `expires_at` = now + the action's TTL (tenant setting; default 24 h).
 * - The decision, its audit entry, its session-lane event and its side effect's move to `approved` are one transaction.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { appendAudit } from "../audit/append";
import { authorize, type UserActor } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { LIMITS } from "../limits";
import { refuseSecrets } from "../secrets/redact";
import { unsafeTextReason } from "../typed-text";
import { withRetry } from "../tx";
import { approvalChanges, approvalStatus } from "./freshness";
import { approvalRuleFor, approvalSettingsOf } from "./policy";
import { approvalEvent } from "./requests";
import { applyApprovalDecision } from "../side-effects/lifecycle/statements";
import { approvalView, boundOf, findApprovalRow, loadCurrentFacts, type ApprovalRow, type ApprovalView } from "./read";
import type { SigningContext } from "../context";
import type { SigningKey } from "../crypto/signing";
import { sealMovedEffects } from "../side-effects/lifecycle/seal";
import { sealDecisions } from "./seal";

export const decisionBodySchema = z
  .strictObject({
    decision: z.enum(["approve", "reject"], { error: 'decision must be "approve" or "reject"' }),
    reason: z
      .string()
      .trim()
      .max(LIMITS.decisionReason.max, `reason is at most ${LIMITS.decisionReason.max} characters`)
      .check((ctx) => {
        // Free text of several lines: tab and line breaks are kept; what could disguise it is refused.
        const unsafe = unsafeTextReason(ctx.value, { multiline: true });
        if (unsafe) ctx.issues.push({ code: "custom", input: ctx.value, message: `reason ${unsafe}` });
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (v.decision === "reject" && !v.reason)
      ctx.addIssue({ code: "custom", path: ["reason"], message: "a reason is required to reject" });
  });

export type DecisionInput = z.infer<typeof decisionBodySchema>;

/** The 409 for a request someone already decided. */
export function alreadyDecided(
  row: Pick<ApprovalRow, "decision" | "decided_by" | "decided_at">,
  extra: Record<string, unknown> = {},
): DomainError {
  return new DomainError(
    "already_decided",
    `This approval was already decided (${row.decision ?? "superseded"}) by ${row.decided_by ?? "someone else"}${row.decided_at ? ` at ${row.decided_at}` : ""}; read it again to see its current state.`,
    { decision: row.decision, decided_by: row.decided_by, decided_at: row.decided_at, ...extra },
  );
}

/**
 * Pure rule of separation of duties: may this person decide this request?
 * @returns `{allowed, self}` — `self` when the decider is the requester (allowed only when the tenant relaxed the rule).
 */
export function separationOfDuties(
  request: Pick<ApprovalRow, "requested_by_kind" | "requested_by_id">,
  decider: Pick<UserActor, "userId">,
  allowSelfApproval: boolean,
): { allowed: boolean; self: boolean } {
  const self = request.requested_by_kind === "user" && request.requested_by_id === decider.userId;
  return { allowed: !self || allowSelfApproval, self };
}

/**
 * Records a decision.
 * @param body `{decision: "approve"|"reject", reason?}` (reason required to reject).
 * @returns the approval as stored now (for a re-approval, the new request that carries the decision).
 * @throws DomainError forbidden (role, runtime key, or the requester deciding their own), not_found, validation_failed,
 *   already_decided (409, details {decision, decided_by}), conflict (409: already used, or the payload is not known yet).
 */
export async function decideApproval(
  { db, actor, signingKey }: SigningContext,
  { approvalId: id, body }: { approvalId: string; body: unknown },
): Promise<ApprovalView> {
  authorize(actor, "approvals.decide");
  if (actor.kind !== "user") throw new DomainError("forbidden", "Only a signed-in person decides approvals.");
  const parsed = decisionBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const input = parsed.data;
  refuseSecrets(input, "The decision", "describe the reason without the credential");
  const tenantId = actor.tenantId;
  const first = await findApprovalRow(db, tenantId, id);
  if (!first) throw notFound(`Approval ${id}`);
  const settings = await approvalSettingsOf(db, tenantId);
  const sod = separationOfDuties(first, actor, settings.allow_self_approval);
  if (!sod.allowed) {
    throw new DomainError(
      "forbidden",
      "You requested this approval, so you may not decide it: another approver must (separation of duties).",
      { rule: "separation_of_duties" },
    );
  }

  return withRetry(() =>
    db.transaction(async (tx) => {
      const row = await findApprovalRow(tx, tenantId, id);
      if (!row) throw notFound(`Approval ${id}`);
      if (row.superseded_by) {
        const next = await findApprovalRow(tx, tenantId, row.superseded_by);
        throw alreadyDecided(next ?? row, { superseded_by: row.superseded_by });
      }
      if (row.consumed_at) throw alreadyDecided(row, { used_at: row.consumed_at });
      const factsOf = await loadCurrentFacts(tx, tenantId, [row]);
      const facts = factsOf(row);
      const { status, stale_reasons } = approvalStatus(boundOf(row), facts);
      if (status === "approved" || status === "rejected") throw alreadyDecided(row);
      const rule = await approvalRuleFor(tx, tenantId, { action: row.action, tool: row.tool });
      const ttl = rule?.ttl_seconds ?? settings.default_ttl_seconds;

      if (status === "pending") {
        if (input.decision === "approve" && row.payload_digest === null) throw payloadUnknown();
        const [stored] = await queryRows<{ id: string }>(
          tx,
          sql`update approval_requests
              set decision = ${input.decision}, reason = ${input.reason ?? null}, decided_by_id = ${actor.userId},
                  decided_by = ${actor.email}, decided_at = now(), self_approved = ${sod.self},
                  expires_at = case when ${input.decision} = 'approve' then now() + make_interval(secs => ${ttl}) else null end
              where tenant_id = ${tenantId} and id = ${id}::uuid and decision is null and superseded_by is null
              returning id`,
        );
        if (!stored) {
          const now = await findApprovalRow(tx, tenantId, id);
          throw alreadyDecided(now ?? row);
        }
        return finish(tx, actor, signingKey, id, row, input, { reapproved: false });
      }

      // Stale: re-bind to the current values under a new request, and decide that one.
      const newId = randomUUID();
      const [marked] = await queryRows<{ id: string }>(
        tx,
        sql`update approval_requests set superseded_by = ${newId}::uuid
            where tenant_id = ${tenantId} and id = ${id}::uuid and superseded_by is null and consumed_at is null
              and decision is not distinct from ${row.decision}::text
              and decided_at is not distinct from ${row.decided_at}::timestamptz
            returning id`,
      );
      if (!marked) {
        const now = await findApprovalRow(tx, tenantId, id);
        throw alreadyDecided(now ?? row);
      }
      const payloadDigest = row.offered_payload_digest ?? row.payload_digest;
      if (input.decision === "approve" && payloadDigest === null) throw payloadUnknown();
      const payload = row.offered_payload_digest ? row.offered_payload : row.payload;
      await tx.execute(sql`
        insert into approval_requests (tenant_id, id, task_id, side_effect, idempotency_key, principal, action, tool, tool_definition_digest, destination_hosts, input_classification, amount, currency, payload_digest,
                                       payload, input_digest, policy_version, agent, agent_version, requested_by_kind,
                                       requested_by_id, requested_by, requested_at, origin, provider_request_id, call_id,
                                       decision, reason, decided_by_id, decided_by, decided_at, self_approved, expires_at, supersedes)
        select tenant_id, ${newId}::uuid, task_id, side_effect, idempotency_key, ${facts.principal ?? row.principal}, action, tool,
               coalesce(${facts.tool_definition_digest ?? null}::text, tool_definition_digest),
               coalesce(offered_destination_hosts, destination_hosts), ${facts.input_classification ?? null}::text,
               coalesce(offered_amount, amount), case when offered_amount is null then currency else offered_currency end,
               ${payloadDigest}, ${payload === null || payload === undefined ? null : JSON.stringify(payload)}::jsonb,
               ${facts.input_digest}, ${facts.policy_version},
               coalesce(offered_agent, agent), coalesce(offered_agent_version, agent_version), requested_by_kind, requested_by_id,
               requested_by, requested_at, origin, provider_request_id, call_id,
               ${input.decision}, ${input.reason ?? null}, ${actor.userId}, ${actor.email}, now(), ${sod.self},
               case when ${input.decision} = 'approve' then now() + make_interval(secs => ${ttl}) else null end, id
        from approval_requests where tenant_id = ${tenantId} and id = ${id}::uuid`);
      return finish(tx, actor, signingKey, newId, row, input, {
        reapproved: true,
        stale_reasons,
        changes: approvalChanges(boundOf(row), facts),
      });
    }),
  );
}

function payloadUnknown(): DomainError {
  return new DomainError(
    "conflict",
    "The runtime has not said what this write will send (no payload digest yet), so there is nothing exact to approve. It is bound when the runtime posts its intent; reject it, or approve after the intent arrives.",
  );
}

/** Audit, session-lane event and the side effect's move, then the stored view. */
async function finish(
  tx: Db,
  actor: UserActor,
  signingKey: SigningKey,
  storedId: string,
  old: ApprovalRow,
  input: DecisionInput,
  extra: { reapproved: boolean; stale_reasons?: string[]; changes?: unknown[] },
): Promise<ApprovalView> {
  const tenantId = actor.tenantId;
  // The decision carries the server's seal, committed with it (decision 0036).
  await sealDecisions(tx, signingKey, tenantId, [storedId]);
  const stored = (await findApprovalRow(tx, tenantId, storedId))!;
  const audit = await appendAudit(tx, actor, {
    action: "approval.decided",
    target: `approval:${storedId}`,
    details: {
      task_id: stored.task_id,
      side_effect: stored.side_effect,
      decision: input.decision,
      reason: input.reason ?? null,
      payload_digest: stored.payload_digest,
      policy_version: stored.policy_version,
      expires_at: stored.expires_at,
      self_approved: stored.self_approved,
      ...(extra.reapproved ? { supersedes: old.id, stale_reasons: extra.stale_reasons, changes: extra.changes } : {}),
    },
  });
  await approvalEvent(tx, tenantId, stored.task_id, storedId, "approval.decided", actor.email, {
    side_effect: stored.side_effect,
    decision: input.decision,
    reason: input.reason ?? null,
    reapproval: extra.reapproved,
    audit_seq: audit.seq,
  });
  await applyApprovalDecision(tx, {
    tenantId,
    taskId: stored.task_id,
    name: stored.side_effect,
    idempotencyKey: stored.idempotency_key,
    decision: input.decision,
    reason:
      input.decision === "approve"
        ? `Approved by ${actor.email}.`
        : `Rejected by ${actor.email}: ${input.reason ?? ""}`,
  });
  // The effect's new state carries the server's seal, committed with the decision (decision 0035).
  await sealMovedEffects(tx, signingKey, tenantId, [stored.task_id], [stored.side_effect]);
  const facts = (await loadCurrentFacts(tx, tenantId, [stored]))(stored);
  return approvalView(stored, facts);
}
