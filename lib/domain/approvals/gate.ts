/**
 * Approvals as the resume gate and the intent route read them (docs/concepts.md#resume-gate: the gate
 * and the intent route answer from one function). {@link approvalStanding} is that function for one request:
 * the gate turns every standing into reasons ({@link approvalGateReasons}), and the intent route answers its own
 * effect's standing (lib/domain/side-effects/intent.ts).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { GateReason } from "@/lib/contract/api";
import type { SigningKey } from "../crypto/signing";
import { approvalStatus, STALE_REASON_TEXT, type CurrentApprovalFacts, type StaleReason } from "./freshness";
import { APPROVAL_COLUMNS, boundOf, loadCurrentFacts, type ApprovalRow } from "./read";
import { decisionSealHolds, type DecisionSealCheck } from "./seal";
import { policyVersionName } from "../policies/version-name";

/** Where one request stands for a write under it. */
export type ApprovalStanding =
  | { kind: "go"; approval_id: string }
  | { kind: "missing"; approval_id: string }
  | { kind: "stale"; approval_id: string; stale_reasons: StaleReason[] }
  | { kind: "rejected"; approval_id: string; reason: string | null; decided_by: string | null }
  /** Already used by an intent (single use): the effect's own state answers. */
  | { kind: "used"; approval_id: string }
  /**
   * Its stored decision is not what the server sealed (decision 0036): written outside the server. Nothing goes under
   * it; the gate stops with `evidence_mismatch` and the intent route refuses with the same reason.
   */
  | { kind: "forged"; approval_id: string };

/**
 * The one rule: what a live request means for a write under it, now. Pure (the seal is a keyed digest of the row).
 * @param seal the server's key and the tenant the row was read in, to check the decision's seal (decision 0036).
 */
export function approvalStanding(
  row: ApprovalRow,
  facts: CurrentApprovalFacts,
  seal: DecisionSealCheck,
): ApprovalStanding {
  if (!decisionSealHolds(seal, row)) return { kind: "forged", approval_id: row.id };
  if (row.consumed_at) return { kind: "used", approval_id: row.id };
  const { status, stale_reasons } = approvalStatus(boundOf(row), facts);
  switch (status) {
    case "approved":
      return { kind: "go", approval_id: row.id };
    case "pending":
      return { kind: "missing", approval_id: row.id };
    case "stale":
      return { kind: "stale", approval_id: row.id, stale_reasons };
    case "rejected":
      return { kind: "rejected", approval_id: row.id, reason: row.reason, decided_by: row.decided_by };
  }
}

const enc = encodeURIComponent;

/** The `evidence_mismatch` reason of a request whose decision is not what the server sealed (decision 0036). */
export function forgedDecisionReason(row: Pick<ApprovalRow, "id" | "side_effect" | "action">): GateReason {
  return {
    code: "evidence_mismatch",
    message: `The decision recorded on the approval of ${row.side_effect} (${row.action}) is not what the server sealed when an approver decided it (its decision, decider, times or what it is bound to changed outside the server, e.g. directly in the database). Nothing goes under it: find who changed it, and have an approver decide the request again.`,
    target: `/approvals/${enc(row.id)}`,
  };
}

/**
 * Gate reasons from the standings of a task's live requests (pure): `evidence_mismatch` for a request whose decision is
 * not what the server sealed, `approval_missing` for a pending request (and for
 * an effect awaiting approval that has none), `approval_stale` for a stale one, `policy_changed` once per task when
 * any is stale because the policy version changed, and `approval_rejected` (a notice: it changes no verdict) for a
 * rejected one — the run must not make that write and the intent route refuses it, but it blocks nothing else. A used
 * request is the effect's own business.
 */
export function approvalGateReasons(
  taskId: string,
  requests: Array<{ row: ApprovalRow; standing: ApprovalStanding }>,
  awaitingWithoutRequest: string[],
  currentPolicy: string,
): { approvals: GateReason[]; policy: GateReason[] } {
  const approvals: GateReason[] = [];
  const policyStale: ApprovalRow[] = [];
  for (const { row, standing } of requests) {
    const target = `/approvals/${enc(row.id)}`;
    if (standing.kind === "forged") {
      approvals.push(forgedDecisionReason(row));
    } else if (standing.kind === "missing") {
      approvals.push({
        code: "approval_missing",
        message: `${row.side_effect} (${row.action}) waits for an approver's decision; the write may not start until an approver approves it.`,
        target,
      });
    } else if (standing.kind === "stale") {
      approvals.push({
        code: "approval_stale",
        message: `The approval of ${row.side_effect} (${row.action}) is stale: ${standing.stale_reasons.map((r) => STALE_REASON_TEXT[r]).join("; ")}. An approver must re-approve it against the current values.`,
        target,
      });
      if (standing.stale_reasons.includes("policy_changed")) policyStale.push(row);
    } else if (standing.kind === "rejected") {
      approvals.push({
        code: "approval_rejected",
        message: `${standing.decided_by ?? "An approver"} rejected ${row.side_effect} (${row.action})${standing.reason ? `: “${standing.reason}”` : ""}. The run must not make this write (the intent route refuses it); end the task, or let the runtime go on without it.`,
        target,
      });
    }
  }
  for (const name of awaitingWithoutRequest) {
    approvals.push({
      code: "approval_missing",
      message: `${name} waits for an approver's decision and none is recorded; the write may not start until an approver approves it.`,
      target: `/tasks/${enc(taskId)}?tab=side-effects&effect=${enc(name)}`,
    });
  }
  const policy: GateReason[] = policyStale.length
    ? [
        {
          code: "policy_changed",
          message: `The policy version is now ${policyVersionName(currentPolicy)}; ${policyStale.length === 1 ? "the approval" : `${policyStale.length} approvals`} of ${policyStale
            .map((r) => r.side_effect)
            .join(
              ", ",
            )} ${policyStale.length === 1 ? "was" : "were"} given under ${[...new Set(policyStale.map((r) => policyVersionName(r.policy_version)))].join(", ")}. Re-approve under the current policy.`,
          target:
            policyStale.length === 1 ? `/approvals/${enc(policyStale[0]!.id)}` : `/tasks/${enc(taskId)}?tab=approvals`,
        },
      ]
    : [];
  return { approvals, policy };
}

/**
 * The one reading of live requests: each row's {@link approvalStanding} under the current facts, read once. The gate
 * ({@link approvalFactsOf}), the task page's side effects and the attention queue all take their approval state from
 * here, so a write never reads "approved" on one page and "stale" on another.
 * @param key the server's signing key, to check each decision's seal (decision 0036).
 */
export async function standingsOf(
  db: Db,
  key: SigningKey,
  tenantId: string,
  rows: ApprovalRow[],
  now = new Date(),
): Promise<Array<{ row: ApprovalRow; standing: ApprovalStanding }>> {
  if (!rows.length) return [];
  const factsOf = await loadCurrentFacts(db, tenantId, rows, now);
  return rows.map((row) => ({ row, standing: approvalStanding(row, factsOf(row), { key, tenantId }) }));
}

/**
 * Live requests, as the gate reads them (lib/domain/gate/ask.ts `live_requests`): not superseded, not used, and whose
 * write has not started (its effect is not in flight, completed or unknown); of one task, or of every task of the
 * tenant whose effect waits for approval or was approved (`taskId` null, at most `limit`, oldest first).
 */
export async function liveRequests(
  db: Db,
  tenantId: string,
  taskId: string | null,
  limit = 1000,
): Promise<ApprovalRow[]> {
  return queryRows<ApprovalRow>(
    db,
    sql`select ${APPROVAL_COLUMNS} from approval_requests r
        where r.tenant_id = ${tenantId} ${taskId === null ? sql`` : sql`and r.task_id = ${taskId}`}
          and r.superseded_by is null and r.consumed_at is null
          and not exists (select 1 from side_effects s where s.tenant_id = r.tenant_id and s.task_id = r.task_id
                          and s.name = r.side_effect and s.idempotency_key = r.idempotency_key
                          and s.status in ('in_flight', 'completed', 'unknown'))
        order by r.requested_at, r.id limit ${limit}`,
  );
}

/**
 * The gate's approval and policy facts for a task (GateFacts.approvals / GateFacts.policy), over its live requests
 * already read (the gate's facts statement reads them). Reads the current facts only when a request is live.
 * @param awaiting names of the task's effects in `awaiting_approval` (from the gate's side-effect read).
 * @param key the server's signing key, to check each decision's seal (decision 0036).
 */
export async function approvalFactsOf(
  db: Db,
  key: SigningKey,
  tenantId: string,
  taskId: string,
  rows: ApprovalRow[],
  awaiting: string[],
  now = new Date(),
): Promise<{ approvals: GateReason[]; policy: GateReason[] }> {
  if (!rows.length && !awaiting.length) return { approvals: [], policy: [] };
  const factsOf = rows.length ? await loadCurrentFacts(db, tenantId, rows, now) : null;
  const covered = new Set(rows.map((r) => r.side_effect));
  const policy = rows[0] && factsOf ? factsOf(rows[0]).policy_version : "";
  return approvalGateReasons(
    taskId,
    rows.map((row) => ({ row, standing: approvalStanding(row, factsOf!(row), { key, tenantId }) })),
    awaiting.filter((n) => !covered.has(n)),
    policy,
  );
}
