"use client";

/**
 * End the task for good (decision 0043): for owners, responders and admins while the task has not been ended by a
 * person. Confirmed in the modal dialog with a required reason; the page then shows who ended it, when and why, and the
 * gate answers stop (`task_terminated`).
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { apiFetch } from "@/lib/client/api";
import { keys } from "@/lib/client/queries";

/** The "End task…" button and its confirmation. */
export function TerminateButton({ taskId }: { taskId: string }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const end = async () => {
    setBusy(true);
    setError(null);
    try {
      await apiFetch(`/api/v1/tasks/${encodeURIComponent(taskId)}/terminate`, {
        method: "POST",
        body: { reason: reason.trim() },
      });
      await Promise.all([
        qc.invalidateQueries({ queryKey: keys.task(taskId) }),
        qc.invalidateQueries({ queryKey: keys.gate(taskId) }),
      ]);
      setOpen(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="rounded-md border border-red-300 bg-white px-2.5 py-1 text-sm font-medium text-red-800 hover:bg-red-50 focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600"
        data-testid="terminate-task"
        onClick={() => setOpen(true)}
      >
        End task…
      </button>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        testId="terminate-dialog"
        confirmTestId="terminate-dialog-confirm"
        focusField
        busy={busy}
        busyLabel="Ending…"
        error={error}
        tone="danger"
        title={
          <>
            End task <code className="font-mono break-all">{taskId}</code> for good?
          </>
        }
        confirmLabel="End task"
        onConfirm={() => void end()}
      >
        <p>
          The resume gate will answer <strong>stop</strong> for this task from now on: the runtime may not write or
          checkpoint again. Events and receipts it still sends are recorded, so a write already in flight can be
          settled. This cannot be undone; start a new task to go on.
        </p>
        <p>Your name and reason are recorded in the audit log.</p>
        <label className="flex flex-col text-sm font-medium">
          Reason (required)
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            required
            maxLength={500}
            rows={3}
            className="mt-1 rounded-md border border-neutral-300 px-2 py-1.5 text-sm font-normal"
            data-testid="terminate-dialog-reason"
          />
        </label>
      </ConfirmDialog>
    </>
  );
}
