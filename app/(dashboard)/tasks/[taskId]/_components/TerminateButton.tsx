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
        tone="danger"
        title={
          <>
            End task <code className="font-mono break-all">{taskId}</code> for good?
          </>
        }
        confirmLabel="End task"
        reason="required"
        onConfirm={async (reason) => {
          await apiFetch(`/api/v1/tasks/${encodeURIComponent(taskId)}/terminate`, { method: "POST", body: { reason } });
          await Promise.all([
            qc.invalidateQueries({ queryKey: keys.task(taskId) }),
            qc.invalidateQueries({ queryKey: keys.gate(taskId) }),
          ]);
        }}
      >
        <p>
          The resume gate will answer <strong>stop</strong> for this task from now on: the runtime may not write or
          checkpoint again. Events and receipts it still sends are recorded, so a write already in flight can be
          settled. This cannot be undone; start a new task to go on.
        </p>
        <p>Your name and reason are recorded in the audit log.</p>
      </ConfirmDialog>
    </>
  );
}
