/**
 * The approval side of `POST …/side-effects/{name}/intent` (docs/concepts.md#approvals, #intent).
 *
 * Runs in its own committed transaction before the intent is decided, because what it records must stand when the
 * intent is then refused: the request it creates (answered `403 approval_required` with its id), the payload or agent
 * a later intent offered that differs from the binding (the approval goes stale, and the approver sees the diff).
 *
 * - Needs approval: the intent says `requires_approval`, the tenant marks the action approval-required, the effect is
 *   `awaiting_approval`, or a live request exists for its key. Nothing here applies once the effect has run (in flight,
 *   completed, unknown): then the effect's own rules answer (replay, 409, 422 idempotency_key_mismatch).
 * - Same key + digest → the same request, never a second one ({@link requestApproval}).
 * - Another digest under a live approval or pending request → `403 approval_mismatch` naming the bound and offered
 *   digests (in place of `422 idempotency_key_mismatch` while the effect has not run).
 * - The request's standing comes from {@link approvalStanding}, the function the gate's approval reasons come from.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { findSideEffect } from "@/db/queries/side-effects";
import type { Actor } from "../authz";
import { DomainError } from "../errors";
import { withRetry } from "../tx";
import { destinationOf, STALE_REASON_TEXT, type CurrentApprovalFacts } from "./freshness";
import type { SigningKey } from "../crypto/signing";
import { approvalStanding, forgedDecisionReason, type ApprovalStanding } from "./gate";
import { approvalRuleFor, retryReusesApproval } from "./policy";
import { APPROVAL_COLUMNS, approvalContext, findApprovalRow, loadCurrentFacts, type ApprovalRow } from "./read";
import { requestApproval } from "./requests";

export type IntentApprovalInput = {
  idempotency_key: string;
  payload_digest: string;
  action: string;
  tool?: string;
  requires_approval?: boolean;
  payload?: unknown;
  agent?: string;
  agent_version?: string;
  /** The hosts the write reaches, as the intent declared them (decision 0033). */
  destination_hosts?: string[];
  /** What the write spends, and its currency (decision 0033). */
  amount?: number;
  currency?: string;
};

type Outcome =
  | null
  | { kind: "mismatch"; row: ApprovalRow }
  | { kind: "standing"; row: ApprovalRow; standing: ApprovalStanding }
  | { kind: "reused"; row: ApprovalRow };

/**
 * Finds or creates the approval request an intent falls under, and answers for it. An approval its write's first go
 * used (the write was then found not applied, so the effect may start again) authorizes no second go: a fresh request
 * replaces it (superseding it; answered `approval_required`), unless the workspace lets a retry after not_applied reuse
 * it (Settings → Approvals) and it still stands.
 * @returns null when no approval applies, `{approval_id}` when a fresh approval lets this intent go (the caller consumes
 *   it in the deciding transaction), or `{approval_id, reused: true}` for a used one the workspace lets a retry reuse.
 * @param key the server's signing key, to check the decision's seal (decision 0036).
 * @throws DomainError gate_stop (409, details {reasons: [evidence_mismatch]}) when the request's decision is not what the
 *   server sealed; approval_required (403, details {approval_id, status, stale_reasons?}), approval_mismatch (403,
 *   details {approval_id, bound_payload_digest, offered_payload_digest}), approval_rejected (403).
 */
export async function approvalForIntent(
  db: Db,
  key: SigningKey,
  actor: Actor,
  taskId: string,
  name: string,
  input: IntentApprovalInput,
): Promise<{ approval_id: string; reused?: true } | null> {
  const tenantId = actor.tenantId;
  const outcome: Outcome = await withRetry(() =>
    db.transaction(async (tx): Promise<Outcome> => {
      const effect = await findSideEffect(tx, tenantId, taskId, name);
      if (effect && effect.idempotency_key !== input.idempotency_key) return null;
      if (effect && (effect.status === "in_flight" || effect.status === "completed" || effect.status === "unknown"))
        return null;
      // It went once (retry after a reconcile found it not applied): the stored digest rules, as before approvals.
      if (effect?.payload_digest && effect.payload_digest !== input.payload_digest) return null;
      const live = await queryRows<ApprovalRow>(
        tx,
        sql`select ${APPROVAL_COLUMNS} from approval_requests
            where tenant_id = ${tenantId} and task_id = ${taskId} and idempotency_key = ${input.idempotency_key}
              and superseded_by is null
            order by requested_at desc, id
            for update`,
      );
      const rule = input.requires_approval
        ? null
        : await approvalRuleFor(tx, tenantId, { action: input.action, tool: input.tool ?? name });
      const needs =
        input.requires_approval === true ||
        rule?.requires_approval === true ||
        effect?.status === "awaiting_approval" ||
        live.length > 0;
      if (!needs) return null;

      let row = live.find((r) => r.payload_digest === input.payload_digest);
      if (!row) {
        // A request a checkpoint made without a digest: this intent says what will be sent (and its action), so it binds
        // now; nothing was decided on it yet.
        const unbound = live.find((r) => r.payload_digest === null && r.decision === null);
        if (unbound) {
          const payload = input.payload === undefined ? null : JSON.stringify(input.payload);
          await tx.execute(sql`
            update approval_requests set payload_digest = ${input.payload_digest}, payload = coalesce(${payload}::jsonb, payload),
                   action = ${input.action}, tool = coalesce(${input.tool ?? null}::text, tool),
                   destination_hosts = coalesce(destination_hosts,
                     array(select json_array_elements_text(${JSON.stringify(destinationOf(input.destination_hosts))}::json))),
                   agent = coalesce(agent, ${input.agent ?? null}), agent_version = coalesce(agent_version, ${input.agent_version ?? null})
            where tenant_id = ${tenantId} and id = ${unbound.id}::uuid and payload_digest is null and decision is null`);
          row = await findApprovalRow(tx, tenantId, unbound.id);
        }
      }
      if (!row) {
        const other = live.find((r) => r.decision !== "reject" && !r.consumed_at);
        if (other) {
          await tx.execute(sql`
            update approval_requests
            set offered_payload_digest = ${input.payload_digest},
                offered_amount = case when amount is not null and ${input.amount ?? null}::float8 > amount
                                      then ${input.amount ?? null}::float8 else offered_amount end,
                offered_currency = case when amount is not null and ${input.amount ?? null}::float8 > amount
                                        then ${input.currency ?? null} else offered_currency end,
                offered_payload = ${input.payload === undefined ? null : JSON.stringify(input.payload)}::jsonb, offered_at = now()
            where tenant_id = ${tenantId} and id = ${other.id}::uuid`);
          return { kind: "mismatch", row: other };
        }
        const ctx = await approvalContext(tx, tenantId, taskId);
        const { id } = await requestApproval(tx, {
          tenantId,
          taskId,
          sideEffect: name,
          idempotencyKey: input.idempotency_key,
          principal: ctx.principal,
          action: input.action,
          tool: input.tool ?? name,
          payload: input.payload ?? null,
          payloadDigest: input.payload_digest,
          inputDigest: ctx.input_digest,
          inputClassification: ctx.input_classification,
          destinationHosts: destinationOf(input.destination_hosts),
          amount: input.amount ?? null,
          currency: input.currency ?? null,
          policyVersion: ctx.policy_version,
          agent: input.agent ?? null,
          agentVersion: input.agent_version ?? null,
          requestedBy: actor,
          origin: "intent",
        });
        row = (await findApprovalRow(tx, tenantId, id))!;
      }
      const destination = destinationOf(input.destination_hosts);
      const offered: NonNullable<CurrentApprovalFacts["offered"]> = {
        action: input.action,
        payload_digest: input.payload_digest,
        destination_hosts: destination,
        ...(input.amount !== undefined ? { amount: input.amount, currency: input.currency } : {}),
      };
      if (
        row.amount !== null &&
        input.amount !== undefined &&
        (input.amount > row.amount || input.currency !== row.currency)
      ) {
        // More than the approved amount: kept, so the approval shows stale with both (decision 0033).
        await tx.execute(sql`
          update approval_requests set offered_amount = ${input.amount}::float8, offered_currency = ${input.currency ?? null},
                 offered_at = now()
          where tenant_id = ${tenantId} and id = ${row.id}::uuid and consumed_at is null`);
      } else if (row.offered_amount !== null && input.amount !== undefined) {
        await tx.execute(sql`
          update approval_requests set offered_amount = null, offered_currency = null
          where tenant_id = ${tenantId} and id = ${row.id}::uuid and consumed_at is null`);
        row = { ...row, offered_amount: null, offered_currency: null };
      }
      if (destination.join(",") !== (row.destination_hosts ?? []).join(",")) {
        // Another destination than the approval's: kept, so the approval shows stale with both (decision 0033).
        await tx.execute(sql`
          update approval_requests
          set offered_destination_hosts = array(select json_array_elements_text(${JSON.stringify(destination)}::json)),
              offered_at = now()
          where tenant_id = ${tenantId} and id = ${row.id}::uuid and consumed_at is null`);
      } else if (row.offered_destination_hosts !== null) {
        // The destination is the approval's again: an earlier intent's other destination no longer stands for it.
        await tx.execute(sql`
          update approval_requests set offered_destination_hosts = null
          where tenant_id = ${tenantId} and id = ${row.id}::uuid and consumed_at is null`);
        row = { ...row, offered_destination_hosts: null };
      }
      if (input.agent !== undefined) offered.agent = input.agent;
      if (input.agent_version !== undefined) offered.agent_version = input.agent_version;
      if (
        (input.agent !== undefined && input.agent !== row.agent) ||
        (input.agent_version !== undefined && input.agent_version !== row.agent_version)
      ) {
        // Resumed under another agent or version: kept, so the approval shows stale with the change.
        await tx.execute(sql`
          update approval_requests set offered_agent = ${input.agent ?? row.agent}, offered_agent_version = ${input.agent_version ?? row.agent_version},
                 offered_at = now()
          where tenant_id = ${tenantId} and id = ${row.id}::uuid and consumed_at is null`);
      }
      const facts = { ...(await loadCurrentFacts(tx, tenantId, [row]))(row), offered };
      const standing = approvalStanding(row, facts, { key, tenantId });
      if (standing.kind !== "used") return { kind: "standing", row, standing };
      // Used: by a concurrent intent that has just gone (the effect read above predates its commit; this statement,
      // after the lock on the request, sees it) — then the effect's own state answers — or by the write's first go,
      // which was then found not applied: a retry.
      const now = await findSideEffect(tx, tenantId, taskId, name);
      if (now && (now.status === "in_flight" || now.status === "completed" || now.status === "unknown")) return null;
      if (
        (await retryReusesApproval(tx, tenantId)) &&
        approvalStanding({ ...row, consumed_at: null }, facts, { key, tenantId }).kind === "go"
      )
        return { kind: "reused", row };
      const fresh = await freshRequestFor(tx, actor, row, input);
      return { kind: "standing", row: fresh, standing: { kind: "missing", approval_id: fresh.id } };
    }),
  );
  if (!outcome) return null;
  if (outcome.kind === "reused") return { approval_id: outcome.row.id, reused: true };
  if (outcome.kind === "mismatch") {
    const r = outcome.row;
    throw new DomainError(
      "approval_mismatch",
      `The ${r.decision === "approve" ? "approval" : "pending approval request"} for ${name} is bound to payload digest ${r.payload_digest}, but this intent offers ${input.payload_digest}. An approval authorizes exactly what was approved; an approver must re-approve the new payload.`,
      { approval_id: r.id, bound_payload_digest: r.payload_digest, offered_payload_digest: input.payload_digest },
    );
  }
  const s = outcome.standing;
  switch (s.kind) {
    case "go":
      return { approval_id: s.approval_id };
    case "used":
      // Handled in the transaction above (a fresh request replaced it, or the retry reuses it).
      return null;
    case "forged":
      // The gate's answer for the same request (one rule): stop with evidence_mismatch.
      throw new DomainError(
        "gate_stop",
        `The resume gate says stop (evidence_mismatch): the decision stored on ${name}'s approval is not what the server sealed, so no write may start under it. Ask POST /resume for the details.`,
        { reasons: [forgedDecisionReason(outcome.row)] },
      );
    case "missing":
      throw new DomainError(
        "approval_required",
        `${name} needs an approver's decision before it may run; the request is in the approvals queue.`,
        {
          approval_id: s.approval_id,
          status: "pending",
        },
      );
    case "stale":
      throw new DomainError(
        "approval_required",
        `The approval of ${name} is stale (${s.stale_reasons.map((r) => STALE_REASON_TEXT[r]).join("; ")}); an approver must re-approve it.`,
        { approval_id: s.approval_id, status: "stale", stale_reasons: s.stale_reasons },
      );
    case "rejected":
      throw new DomainError(
        "approval_rejected",
        `${s.decided_by ?? "An approver"} rejected ${name}${s.reason ? `: ${s.reason}` : ""}. The run must not make this write.`,
        { approval_id: s.approval_id, status: "rejected", reason: s.reason, decided_by: s.decided_by },
      );
  }
}

/**
 * A fresh request for a retry whose write's approval was used: supersedes the used one (one guarded UPDATE; the unique
 * index on live requests then admits the new one) and asks an approver again for the same binding's current values.
 * @throws DomainError in_flight when another intent replaced it first.
 */
async function freshRequestFor(
  tx: Db,
  actor: Actor,
  used: ApprovalRow,
  input: IntentApprovalInput,
): Promise<ApprovalRow> {
  const tenantId = actor.tenantId;
  const id = randomUUID();
  const marked = await queryRows<{ id: string }>(
    tx,
    sql`update approval_requests set superseded_by = ${id}::uuid
        where tenant_id = ${tenantId} and id = ${used.id}::uuid and superseded_by is null and consumed_at is not null
        returning id`,
  );
  if (!marked.length)
    throw new DomainError(
      "in_flight",
      "Another intent is asking for a fresh approval of this write right now; try again.",
    );
  const ctx = await approvalContext(tx, tenantId, used.task_id);
  await requestApproval(tx, {
    tenantId,
    taskId: used.task_id,
    sideEffect: used.side_effect,
    idempotencyKey: used.idempotency_key,
    principal: ctx.principal,
    action: input.action,
    tool: input.tool ?? used.tool,
    payload: input.payload ?? used.payload ?? null,
    payloadDigest: input.payload_digest,
    inputDigest: ctx.input_digest,
    policyVersion: ctx.policy_version,
    agent: input.agent ?? used.agent,
    agentVersion: input.agent_version ?? used.agent_version,
    requestedBy: actor,
    origin: "intent",
    callId: used.call_id,
    supersedes: { id, supersedes: used.id },
  });
  return (await findApprovalRow(tx, tenantId, id))!;
}

/**
 * Uses a fresh approval for one go (single use): one guarded UPDATE inside the intent's deciding transaction.
 * @throws DomainError in_flight when another intent used it first.
 */
export async function consumeApproval(tx: Db, tenantId: string, approvalId: string, attempt: number): Promise<void> {
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`update approval_requests set consumed_at = now(), consumed_attempt = ${attempt}
        where tenant_id = ${tenantId} and id = ${approvalId}::uuid and consumed_at is null and superseded_by is null
          and decision = 'approve'
        returning id`,
  );
  if (!rows[0])
    throw new DomainError(
      "in_flight",
      "The approval was used by another intent just now (an approval authorizes one go); wait for its receipt.",
    );
}

/**
 * The approval rule for a write the runtime reports as a `side_effect.intent` event on an effect that may start
 * (`approved`, `not_started`, `failed`; lib/domain/side-effects/from-events.ts): the same standing as the intent route.
 * A fresh approval for the reported digest is used (single use); another digest, or a stale one, is a refusal (the event
 * path then marks the effect unknown for a person to reconcile). An approval the write's first go used authorizes no
 * retry after not_applied, unless the workspace lets a retry reuse it and it still stands.
 * A write with no approval recorded needs one as on the route: when it repeats a write that had one, when the runtime
 * says `requires_approval`, or when the approval rule for its action or tool (Settings or the active policy) requires one.
 * @param key the server's signing key, to check the decision's seal (decision 0036): a forged decision refuses
 *   (`evidence_mismatch`).
 * @param opts.required the write needs an approval even when none is recorded (it repeats a write that had one).
 * @param opts.requiresApproval the runtime says the write requires approval.
 * @returns null when the write may proceed (approval used now or reused, or none recorded and none required), else the
 *   refusal's code and message.
 */
export async function approvalForReportedIntent(
  tx: Db,
  key: SigningKey,
  tenantId: string,
  taskId: string,
  idempotencyKey: string,
  offered: { payload_digest?: string; action?: string; tool: string },
  attempt: number,
  opts: { required?: boolean; requiresApproval?: boolean } = {},
): Promise<{ code: string; message: string } | null> {
  const rows = await queryRows<ApprovalRow>(
    tx,
    sql`select ${APPROVAL_COLUMNS} from approval_requests
        where tenant_id = ${tenantId} and task_id = ${taskId} and idempotency_key = ${idempotencyKey} and superseded_by is null
          and decision = 'approve'
        order by decided_at desc
        for update`,
  );
  if (!rows.length) {
    if (opts.required)
      return {
        code: "approval_required",
        message: "it repeats a write that went under an approval, and a repeat needs an approval of its own",
      };
    if (opts.requiresApproval)
      return { code: "approval_required", message: "it requires approval (requires_approval) and none was given" };
    // The same rule the intent route applies: Settings' action rule and the active policy's tool list.
    const rule = offered.action
      ? await approvalRuleFor(tx, tenantId, { action: offered.action, tool: offered.tool })
      : null;
    return rule?.requires_approval
      ? {
          code: "approval_required",
          message: `the rule for action ${offered.action} (${rule.source}) requires an approval and none was given`,
        }
      : null;
  }
  // An approval binds the payload digest and action (docs/concepts.md#payload-digest): a write under one must say both,
  // as the intent route requires; one that leaves them out could send anything under it.
  if (!offered.payload_digest || !offered.action)
    return {
      code: "approval_mismatch",
      message:
        "it does not name its payload_digest and action, which its approval binds: an approved write says exactly what it sends",
    };
  const unused = rows.filter((r) => !r.consumed_at);
  const row = unused.find((r) => r.payload_digest === offered.payload_digest) ?? unused[0];
  if (!row) {
    const used = rows.find((r) => r.payload_digest === offered.payload_digest);
    if (used && (await retryReusesApproval(tx, tenantId))) {
      const facts = { ...(await loadCurrentFacts(tx, tenantId, [used]))(used), offered: { ...offered } };
      if (approvalStanding({ ...used, consumed_at: null }, facts, { key, tenantId }).kind === "go") return null;
    }
    return {
      code: "approval_required",
      message:
        "its approval was already used (an approval authorizes one go; a retry after not_applied needs a fresh one)",
    };
  }
  const facts = { ...(await loadCurrentFacts(tx, tenantId, [row]))(row), offered: { ...offered } };
  const standing = approvalStanding(row, facts, { key, tenantId });
  if (standing.kind === "forged")
    return {
      code: "evidence_mismatch",
      message: "the decision stored on its approval is not what the server sealed (changed outside the server)",
    };
  if (standing.kind !== "go") {
    const why =
      standing.kind === "stale" ? standing.stale_reasons.map((r) => STALE_REASON_TEXT[r]).join("; ") : standing.kind;
    return {
      code:
        standing.kind === "stale" && standing.stale_reasons.includes("payload_changed")
          ? "approval_mismatch"
          : "approval_required",
      message: `its approval does not stand for this write (${why})`,
    };
  }
  await consumeApproval(tx, tenantId, row.id, attempt);
  return null;
}
