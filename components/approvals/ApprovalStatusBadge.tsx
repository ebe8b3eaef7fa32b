/**
 * Approval status in the one vocabulary (UX.md "Status language"): pending · approved · rejected · stale (with the
 * reason). Every status has a word and an icon, never colour alone.
 */
import type { ApprovalStatus, StaleReason } from "@/lib/domain/approvals/freshness";

const STATUS: Record<ApprovalStatus, { label: string; icon: string; cls: string }> = {
  pending: { label: "pending", icon: "◔", cls: "bg-sky-50 text-sky-800 border-sky-200" },
  approved: { label: "approved", icon: "✓", cls: "bg-emerald-50 text-emerald-800 border-emerald-200" },
  rejected: { label: "rejected", icon: "✕", cls: "bg-red-50 text-red-800 border-red-200" },
  stale: { label: "stale", icon: "!", cls: "bg-amber-50 text-amber-900 border-amber-300" },
};

/** Plain words for a stale reason (short form for pills). */
export const STALE_WORD: Record<StaleReason, string> = {
  expired: "expired",
  policy_changed: "policy changed",
  payload_changed: "payload changed",
  tool_definition_changed: "tool changed",
  destination_changed: "destination changed",
  amount_exceeded: "amount exceeded",
  classification_changed: "inputs reclassified",
  inputs_changed: "inputs changed",
  agent_changed: "agent changed",
  approver_revoked: "approver revoked",
  principal_revoked: "principal revoked",
};

/** A status pill; a stale one names its reasons. */
export function ApprovalStatusBadge({
  status,
  reasons = [],
}: {
  status: ApprovalStatus;
  reasons?: readonly StaleReason[];
}) {
  const s = STATUS[status];
  return (
    <span
      className={`inline-flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs font-medium ${s.cls}`}
      data-testid="approval-status"
      data-status={status}
    >
      <span aria-hidden="true">{s.icon}</span>
      {s.label}
      {status === "stale" && reasons.length ? (
        <span className="font-normal">: {reasons.map((r) => STALE_WORD[r]).join(", ")}</span>
      ) : null}
    </span>
  );
}
