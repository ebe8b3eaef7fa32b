/**
 * One state per write (issue 24): the approval state a write shows on every page — the task's Side effects tab, the
 * attention queue — is its live request's standing ({@link ./gate.approvalStanding}, the rule the gate's reasons and
 * the intent route answer from), never the stored effect status alone. Pure and free of server imports: the task page's
 * client part reads it too.
 */
import type { SideEffectStatus, WriteApproval } from "@/lib/contract/api";
import type { ApprovalStanding } from "./gate";

/** A live request's standing as the pages show it, with who decided and why. */
export function writeApprovalOf(
  standing: ApprovalStanding,
  row: { reason: string | null; decided_by: string | null },
): WriteApproval {
  const base = { id: standing.approval_id, reason: row.reason, decided_by: row.decided_by };
  switch (standing.kind) {
    case "go":
      return { ...base, state: "approved", stale_reasons: [] };
    case "missing":
      return { ...base, state: "pending", stale_reasons: [] };
    case "stale":
      return { ...base, state: "stale", stale_reasons: standing.stale_reasons };
    case "rejected":
      return { ...base, state: "rejected", stale_reasons: [] };
    case "used":
      return { ...base, state: "used", stale_reasons: [] };
    case "forged":
      return { ...base, state: "unsealed", stale_reasons: [] };
  }
}

/** What a write shows as its status: the stored status, unless its live request says otherwise. */
export type ShownWriteStatus = SideEffectStatus | "approval_stale" | "approval_rejected" | "approval_unsealed";

/**
 * The status a write shows: while it waits for approval or was approved (its write not started), its live request's
 * state decides — pending → awaiting approval, approved → approved, stale → approval stale, rejected → approval
 * rejected, a decision the server did not seal → approval not sealed. Otherwise the stored status.
 */
export function shownWriteStatus(status: SideEffectStatus, approval: WriteApproval | null): ShownWriteStatus {
  if (!approval || (status !== "awaiting_approval" && status !== "approved")) return status;
  switch (approval.state) {
    case "pending":
      return "awaiting_approval";
    case "approved":
    case "used":
      return "approved";
    case "stale":
      return "approval_stale";
    case "rejected":
      return "approval_rejected";
    case "unsealed":
      return "approval_unsealed";
  }
}
