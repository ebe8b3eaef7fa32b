"use client";

/**
 * Approve / Re-approve / Reject with a confirmation that names the action and the task (UX.md "Forms and actions"),
 * in the app's one confirmation dialog (components/ui/ConfirmDialog.tsx): focus moves into it, Escape closes it, everything works from the keyboard. After a
 * decision the page shows the stored state; a conflict says who decided first.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { apiFetch, ApiError } from "@/lib/client/api";

type Decision = "approve" | "reject";

export function DecisionPanel({
  id,
  action,
  taskId,
  stale,
  payloadShown,
}: {
  id: string;
  action: string;
  taskId: string;
  stale: boolean;
  /** The runtime sent the payload (checked against its digest); false when only a digest came. */
  payloadShown: boolean;
}) {
  const router = useRouter();
  const [choice, setChoice] = useState<Decision>("approve");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);

  const open = (d: Decision) => {
    setChoice(d);
    setError(null);
    setConfirming(true);
  };
  const verb = choice === "approve" ? (stale ? "Re-approve" : "Approve") : "Reject";

  const submit = async () => {
    if (choice === "reject" && !reason.trim()) {
      setError("A reason is required to reject.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const stored = await apiFetch<{ id: string; status: string }>(
        `/api/v1/approvals/${encodeURIComponent(id)}/decision`,
        {
          method: "POST",
          body: { decision: choice, ...(reason.trim() ? { reason: reason.trim() } : {}) },
        },
      );
      setConfirming(false);
      setDone(`${choice === "approve" ? "Approved" : "Rejected"}; the decision and its audit entry are recorded.`);
      if (stored.id !== id) router.push(`/approvals/${stored.id}`);
      else router.refresh();
    } catch (err) {
      if (err instanceof ApiError && err.code === "already_decided") {
        const d = err.details as { decision?: string; decided_by?: string; decided_at?: string } | undefined;
        setConfirming(false);
        setError(
          `Someone else decided first: ${d?.decision ?? "decided"} by ${d?.decided_by ?? "another approver"}${d?.decided_at ? ` at ${d.decided_at}` : ""}. The page now shows the current state.`,
        );
        router.refresh();
      } else {
        setError(err instanceof Error ? err.message : "The decision failed.");
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      aria-labelledby="decide-h"
      className="rounded-lg border border-neutral-200 bg-white p-4"
      data-testid="decision-panel"
    >
      <h2 id="decide-h" className="text-base font-semibold">
        Decide
      </h2>
      <p className="text-sm text-neutral-600">
        {stale
          ? "Re-approving binds a fresh approval to the values shown as “Now”. It authorizes exactly one write."
          : payloadShown
            ? "Approving authorizes exactly one write of exactly this payload, until it expires or anything bound changes."
            : "Approving authorizes exactly one write of whatever payload has the bound digest — nothing on this page shows what that is — until it expires or anything bound changes."}
      </p>
      <div className="mt-3 flex flex-wrap gap-2">
        <button
          type="button"
          onClick={() => open("approve")}
          className="rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-emerald-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600"
          data-testid="approve-button"
        >
          {stale ? "Re-approve" : "Approve"}
        </button>
        <button
          type="button"
          onClick={() => open("reject")}
          className="rounded-md border border-red-300 px-3 py-1.5 text-sm font-semibold text-red-800 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600"
          data-testid="reject-button"
        >
          Reject
        </button>
      </div>
      {done ? (
        <p role="status" className="mt-2 text-sm text-emerald-800">
          {done}
        </p>
      ) : null}
      {error && !confirming ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {error}
        </p>
      ) : null}
      <ConfirmDialog
        open={confirming}
        onClose={() => setConfirming(false)}
        title={
          <>
            {verb} <code className="font-mono">{action}</code> for task{" "}
            <code className="font-mono break-all">{taskId}</code>?
          </>
        }
        tone={choice === "approve" ? "approve" : "danger"}
        confirmLabel={`${verb} ${action}`}
        busy={busy}
        busyLabel="Recording…"
        error={error}
        onConfirm={() => void submit()}
        confirmTestId="confirm-decision"
        focusField
      >
        <p>
          {choice === "approve"
            ? "The runtime may then make this write once. The decision is recorded in the audit log with your name."
            : "The runtime must not make this write. The decision and your reason are recorded in the audit log."}
        </p>
        <label className="flex flex-col text-sm font-medium text-neutral-900">
          Reason{choice === "reject" ? " (required)" : " (optional)"}
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            required={choice === "reject"}
            maxLength={2000}
            rows={3}
            className="mt-1 rounded-md border border-neutral-300 px-2 py-1.5 text-sm font-normal"
            data-testid="decision-reason"
          />
        </label>
      </ConfirmDialog>
    </section>
  );
}
