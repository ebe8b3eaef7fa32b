"use client";

/**
 * Fence the task to a new attempt (decision 0032): the way out of a stuck attempt. A native button (keyboard: Tab,
 * Enter or Space) opens a confirmation dialog naming the task and the attempt, with an optional reason kept in the
 * audit entry; the answer is announced in a live region.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { apiFetch } from "@/lib/client/api";
import { keys } from "@/lib/client/queries";

type FenceAnswer = { previous_attempt: number; current_attempt: number; ended: string[] };

/** The button beside the task's attempt, for owners, responders and admins. */
export function FenceButton({ taskId, currentAttempt }: { taskId: string; currentAttempt: number }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const next = currentAttempt + 1;
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <button
        type="button"
        className="rounded border border-neutral-300 px-2 py-0.5 text-xs text-neutral-800 hover:bg-neutral-50 focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600"
        data-testid="fence-task"
        onClick={() => {
          setDone(null);
          setOpen(true);
        }}
      >
        Fence to attempt {next}
      </button>
      <span role="status" aria-live="polite" className="text-xs text-emerald-800">
        {done}
      </span>
      <ConfirmDialog
        open={open}
        onClose={() => setOpen(false)}
        testId="fence-dialog"
        title={
          <>
            Fence task <code className="font-mono break-all">{taskId}</code> to attempt {next}?
          </>
        }
        confirmLabel={`Fence to attempt ${next}`}
        reason="optional"
        onConfirm={async (reason) => {
          const a = await apiFetch<FenceAnswer>(`/api/v1/tasks/${encodeURIComponent(taskId)}/fence`, {
            method: "POST",
            body: reason ? { reason } : {},
          });
          setDone(
            `Fenced to attempt ${a.current_attempt}.${a.ended.length ? ` Now unknown: ${a.ended.join(", ")}.` : ""} Only a sandbox naming attempt ${a.current_attempt} may write.`,
          );
          void qc.invalidateQueries({ queryKey: keys.task(taskId) });
        }}
      >
        <p>
          Every older attempt ends: its writes in flight become unknown and its sandbox may no longer checkpoint or
          write. The runtime must continue as attempt {next}. Recorded in the audit log with your name.
        </p>
      </ConfirmDialog>
    </span>
  );
}
