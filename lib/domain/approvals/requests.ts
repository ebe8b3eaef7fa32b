/**
 * Approval requests (docs/concepts.md#approvals: where requests come from, what a request is bound to).
 *
 * {@link requestApproval} is the one verb that creates a request, for every source: the intent route (the runtime says
 * `requires_approval`, or the tenant marks the action approval-required), a checkpoint that declares an effect awaiting
 * approval (or claims it approved), and imported agent run states. It is idempotent by tenant + task + idempotency key
 * + payload digest: asking again returns the same request and creates nothing (a unique index on the live requests
 * holds this under concurrency, `INSERT … ON CONFLICT DO NOTHING`). A new request is audited (`approval.requested`),
 * shows on the task's session lane (an `approval.requested` event), and its side effect waits for it
 * (`awaiting_approval`): only an approver's recorded decision approves.
 */
import { sql } from "drizzle-orm";
import { insertServerEvent } from "../events/server-events";
import { queryRows, type Db } from "@/db";
import type { ApprovalOrigin } from "@/db/schema/approvals";
import { appendAudit } from "../audit/append";
import { approvalRequested } from "../notifications/facts";
import { enqueueNotifications } from "../notifications/outbox";
import { actorRef, type Actor } from "../authz";
import { redactJson, unstorableJson } from "../events/redact";
import { LIMITS } from "../limits";
import { DomainError } from "../errors";
import { awaitApproval } from "../side-effects/lifecycle/statements";
import { canonicalName } from "../names";

export type RequestApprovalInput = {
  tenantId: string;
  taskId: string;
  /** The side effect's name in the task. */
  sideEffect: string;
  idempotencyKey: string;
  principal: string | null;
  action: string;
  tool: string;
  /** The tool arguments for the approver to read; secrets are redacted before storage. Null when not sent. */
  payload: unknown;
  /** sha256 hex of RFC 8785 JSON of tool name + canonical arguments; null when the source did not say. */
  payloadDigest: string | null;
  /** The hosts the write reaches (normalized by the caller); null or absent when not said. */
  destinationHosts?: readonly string[] | null;
  /** The amount the write spends and its currency, when the intent declared them. */
  amount?: number | null;
  currency?: string | null;
  /** The highest classification of the task's inputs now; null or absent when none. */
  inputClassification?: string | null;
  /** Digest of the task's input set (lib/domain/approvals/freshness.ts `inputDigestOf`). */
  inputDigest: string;
  /** The policy version the request is bound to (lib/domain/policies/current.ts `currentPolicyVersion`). */
  policyVersion: string;
  agent: string | null;
  agentVersion: string | null;
  /** Who asks (a runtime API key, a person, or a system actor); audited as the actor of `approval.requested`. */
  requestedBy: Actor;
  /** A hosted or MCP approval request's own id. */
  providerRequestId?: string | null;
  /** Where the request came from (default `intent`). */
  origin?: ApprovalOrigin;
  /** The tool call id it came from, when known. */
  callId?: string | null;
  /**
   * The request this one replaces (its `superseded_by` set by the caller to `id` first): a used approval whose write was
   * found not applied, when the retry needs a fresh one.
   */
  supersedes?: { id: string; supersedes: string };
};

/**
 * Refuses a new pending request on a task that already holds `LIMITS.pendingApprovals` of them, unless the same request
 * (key and digest) is live and will be found again. Reads at most the limit's index entries
 * (`approval_requests_pending_idx`), whatever the task holds. Takes the task's pending-approvals lock (held to commit),
 * so the bound holds under concurrent asks: the count and the insert that follows are one asker's at a time.
 */
async function checkPendingBound(tx: Db, input: RequestApprovalInput): Promise<void> {
  const max = LIMITS.pendingApprovals.max;
  // One asker per task at a time counts and inserts (decision 0036): the lock is held to commit, and the count below is
  // a statement of its own, so under READ COMMITTED it sees every request an earlier holder committed. Without it, asks
  // racing at 99 pending all counted 99 and all inserted.
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${["pending-approvals", input.tenantId, input.taskId].join("\u001f")}, 0))`,
  );
  const [row] = await queryRows<{ pending: number; same: boolean }>(
    tx,
    sql`select (select count(*)::int from (select 1 from approval_requests
                  where tenant_id = ${input.tenantId} and task_id = ${input.taskId}
                    and decision is null and superseded_by is null and consumed_at is null
                  limit ${max}) p) as pending,
               exists (select 1 from approval_requests
                  where tenant_id = ${input.tenantId} and task_id = ${input.taskId}
                    and idempotency_key = ${input.idempotencyKey}
                    and coalesce(payload_digest, '') = ${input.payloadDigest ?? ""} and superseded_by is null) as same`,
  );
  if (row && row.pending >= max && !row.same)
    throw new DomainError(
      "too_many_pending_approvals",
      `Task ${input.taskId} already holds ${max.toLocaleString("en-US")} pending approval requests, the most one task may hold; an approver must decide some before the run asks for more.`,
      { limit: max, value: row.pending },
    );
}

/**
 * Creates the approval request for one side effect, or returns the live one for the same key and digest.
 * Call inside a transaction (the audit row and the event go in it).
 * @returns `{id, created}` — `created` false when the same request already existed.
 * A task holds at most `LIMITS.pendingApprovals` pending requests (decision 0034): a new one past it is refused, so what
 * the gate and the approvals queue read for a task stays bounded. A request that supersedes another, or that is found
 * again by key and digest, adds none.
 * @throws DomainError validation_failed when the payload cannot be stored (too deep, unstorable text);
 *   too_many_pending_approvals (409, `details: {limit, value}`) when the task already holds the most pending requests.
 */
export async function requestApproval(tx: Db, input: RequestApprovalInput): Promise<{ id: string; created: boolean }> {
  const { tenantId, taskId } = input;
  const unstorable = input.payload === undefined || input.payload === null ? null : unstorableJson(input.payload);
  if (unstorable) throw new DomainError("validation_failed", `The payload ${unstorable}.`);
  if (!input.supersedes) await checkPendingBound(tx, input);
  const payload = input.payload === undefined || input.payload === null ? null : redactJson(input.payload).value;
  const by = actorRef(input.requestedBy);
  const origin = input.origin ?? "intent";
  const inserted = await queryRows<{ id: string; requested_at: string }>(
    tx,
    sql`insert into approval_requests (tenant_id, id, task_id, side_effect, idempotency_key, principal, action, tool, tool_definition_digest, destination_hosts, input_classification,
                                       amount, currency, payload_digest, payload, input_digest, policy_version, agent, agent_version, requested_by_kind,
                                       requested_by_id, requested_by, origin, provider_request_id, call_id, supersedes)
        values (${tenantId}, coalesce(${input.supersedes?.id ?? null}::uuid, gen_random_uuid()), ${taskId}, ${input.sideEffect},
                ${input.idempotencyKey}, ${input.principal}, ${input.action},
                ${input.tool},
                (select d.digest from task_tool_definitions d
                  where d.tenant_id = ${tenantId} and d.task_id = ${taskId} and d.tool = ${canonicalName(input.tool)}),
                ${
                  input.destinationHosts?.length
                    ? sql`array(select json_array_elements_text(${JSON.stringify(input.destinationHosts)}::json))`
                    : sql`null::text[]`
                },
                ${input.inputClassification ?? null},
                ${input.amount ?? null}::float8, ${input.currency ?? null},
                ${input.payloadDigest}, ${payload === null ? null : JSON.stringify(payload)}::jsonb,
                ${input.inputDigest}, ${input.policyVersion}, ${input.agent}, ${input.agentVersion}, ${by.kind}, ${by.id},
                ${by.label}, ${origin}, ${input.providerRequestId ?? null}, ${input.callId ?? null},
                ${input.supersedes?.supersedes ?? null}::uuid)
        on conflict (tenant_id, task_id, idempotency_key, (coalesce(payload_digest, ''))) where superseded_by is null do nothing
        returning id, to_char(requested_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as requested_at`,
  );
  if (!inserted[0]) {
    const [live] = await queryRows<{ id: string }>(
      tx,
      sql`select id from approval_requests
          where tenant_id = ${tenantId} and task_id = ${taskId} and idempotency_key = ${input.idempotencyKey}
            and coalesce(payload_digest, '') = ${input.payloadDigest ?? ""} and superseded_by is null`,
    );
    if (!live)
      throw new DomainError("conflict", "Another approval request for this key is being created right now; try again.");
    return { id: live.id, created: false };
  }
  const id = inserted[0].id;
  // Its side effect waits for the decision (created when the server did not know it yet).
  const effectOrigin = origin === "import" ? "import" : origin;
  await awaitApproval(tx, {
    tenantId,
    taskId,
    name: input.sideEffect,
    idempotencyKey: input.idempotencyKey,
    tool: input.tool,
    action: input.action,
    origin: effectOrigin,
    callId: input.callId ?? null,
  });
  const audit = await appendAudit(tx, input.requestedBy, {
    action: "approval.requested",
    target: `approval:${id}`,
    details: {
      task_id: taskId,
      side_effect: input.sideEffect,
      idempotency_key: input.idempotencyKey,
      action: input.action,
      tool: input.tool,
      payload_digest: input.payloadDigest,
      input_digest: input.inputDigest,
      policy_version: input.policyVersion,
      agent: input.agent,
      agent_version: input.agentVersion,
      origin,
      ...(input.providerRequestId ? { provider_request_id: input.providerRequestId } : {}),
      ...(input.supersedes ? { supersedes: input.supersedes.supersedes } : {}),
    },
  });
  await approvalEvent(tx, tenantId, taskId, id, "approval.requested", by.label, {
    side_effect: input.sideEffect,
    action: input.action,
    payload_digest: input.payloadDigest,
    policy_version: input.policyVersion,
    origin,
    audit_seq: audit.seq,
  });
  await enqueueNotifications(tx, tenantId, [
    approvalRequested({ id, taskId, sideEffect: input.sideEffect, action: input.action, tool: input.tool }),
  ]);
  return { id, created: true };
}

/**
 * Puts an approval mark on the task's session lane (`approval.requested` / `approval.decided` /
 * `approval.invalidated`), with a server-made event id so it is written once.
 */
export async function approvalEvent(
  tx: Db,
  tenantId: string,
  taskId: string,
  approvalId: string,
  type: "approval.requested" | "approval.decided" | "approval.invalidated",
  actorLabel: string,
  attrs: Record<string, unknown>,
  suffix = "",
): Promise<void> {
  await insertServerEvent(tx, {
    tenantId,
    eventId: `custody:${type}:${approvalId}${suffix}`,
    taskId,
    plane: "session",
    type,
    occurredAt: sql`now()`,
    actor: actorLabel,
    attrs: { approval_id: approvalId, ...attrs },
  });
}
