"use client";

/**
 * Fence the task to a new attempt (decision 0032): the way out of a stuck attempt. A native button (keyboard: Tab,
 * Enter or Space), confirmed in the app's confirmation dialog before anything is sent; the answer is announced in a live region.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useConfirm } from "@/components/ui/ConfirmDialog";
import { apiFetch } from "@/lib/client/api";
import { keys } from "@/lib/client/queries";

type FenceAnswer = { previous_attempt: number; current_attempt: number; ended: string[] };

/** The button beside the task's attempt, for owners, responders and admins. */
export function FenceButton({ taskId, currentAttempt }: { taskId: string; currentAttempt: number }) {
  const qc = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  const fence = useMutation({
    mutationFn: () =>
      apiFetch<FenceAnswer>(`/api/v1/tasks/${encodeURIComponent(taskId)}/fence`, { method: "POST", body: {} }),
    onSuccess: (a) => {
      setDone(
        `Fenced to attempt ${a.current_attempt}.${a.ended.length ? ` Now unknown: ${a.ended.join(", ")}.` : ""} Only a sandbox naming attempt ${a.current_attempt} may write.`,
      );
      void qc.invalidateQueries({ queryKey: keys.task(taskId) });
    },
  });
  const { confirm, dialog } = useConfirm();
  const next = currentAttempt + 1;
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      {dialog}
      <button
        type="button"
        className="rounded border border-neutral-300 px-2 py-0.5 text-xs text-neutral-800 hover:bg-neutral-50 focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600 disabled:opacity-50"
        data-testid="fence-task"
        disabled={fence.isPending}
        onClick={() => {
          setDone(null);
          void confirm({
            title: `Fence this task to attempt ${next}?`,
            body: `Every older attempt ends: its writes in flight become unknown and its sandbox may no longer checkpoint or write. The runtime must continue as attempt ${next}.`,
            confirmLabel: `Fence to attempt ${next}`,
          }).then((yes) => yes && fence.mutate());
        }}
      >
        Fence to attempt {next}
      </button>
      <span role="status" aria-live="polite" className="text-xs text-emerald-800">
        {done}
      </span>
      {fence.error ? (
        <span role="alert" className="text-xs text-red-700">
          {fence.error.message}
        </span>
      ) : null}
    </span>
  );
}
