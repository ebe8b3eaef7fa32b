"use client";

/**
 * Delete the task (decision 0054): for owners and admins. Confirmed in the modal dialog with a required reason; it
 * says what goes (events, checkpoints, side effects, artifacts and their bytes, approvals) and that the audit entry
 * stays. When the workspace requires an export first and there is none after the task's last change, the server
 * refuses (409 `export_required`) and the dialog links Settings → Export. After the deletion the page moves to
 * Settings → Retention, where the deleted task is listed.
 */
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { ApiError, apiFetch } from "@/lib/client/api";

/** The "Delete task…" button and its confirmation. */
export function DeleteTaskButton({ taskId, exportRequired }: { taskId: string; exportRequired: boolean }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [needsExport, setNeedsExport] = useState(false);
  const remove = async () => {
    setBusy(true);
    setError(null);
    setNeedsExport(false);
    try {
      await apiFetch(`/api/v1/tasks/${encodeURIComponent(taskId)}`, {
        method: "DELETE",
        body: { reason: reason.trim() },
      });
      setOpen(false);
      router.push("/settings/retention");
    } catch (err) {
      setNeedsExport(err instanceof ApiError && err.code === "export_required");
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
        data-testid="delete-task"
        onClick={() => setOpen(true)}
      >
        Delete task…
      </button>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        testId="delete-task-dialog"
        confirmTestId="delete-task-dialog-confirm"
        focusField
        busy={busy}
        busyLabel="Deleting…"
        error={error}
        tone="danger"
        title={
          <>
            Delete task <code className="font-mono break-all">{taskId}</code>?
          </>
        }
        confirmLabel="Delete task"
        onConfirm={() => void remove()}
      >
        <p>
          This deletes the task&apos;s events, checkpoints, side effects with their receipts, artifacts and their stored
          bytes, and its approvals. It cannot be undone: the task id answers <strong>410 task_deleted</strong> from now
          on, and a runtime still working on it is refused.
        </p>
        <p>
          The audit log keeps one entry naming the task, you, your reason and what was deleted (counts and digests), and
          the chain still verifies. Settings → Retention lists the deleted task.
        </p>
        {exportRequired || needsExport ? (
          <p
            className="rounded-md border border-amber-300 bg-amber-50 px-2 py-1.5"
            data-testid="delete-task-export-note"
          >
            This workspace requires a workspace export taken after the task&apos;s last change before it is deleted.{" "}
            <Link className="font-medium underline" href="/settings/export">
              Settings → Export
            </Link>
          </p>
        ) : null}
        <label className="flex flex-col text-sm font-medium">
          Reason (required, at least 3 characters)
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            required
            minLength={3}
            maxLength={1000}
            rows={3}
            className="mt-1 rounded-md border border-neutral-300 px-2 py-1.5 text-sm font-normal"
            data-testid="delete-task-dialog-reason"
          />
        </label>
      </ConfirmDialog>
    </>
  );
}
