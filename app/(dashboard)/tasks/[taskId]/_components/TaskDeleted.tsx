import Link from "next/link";
import { Time } from "@/components/ui/time";

/** Shown for a deleted task's id (decision 0054): who deleted it and when, and where the tombstone is listed. */
export function TaskDeleted({
  taskId,
  details,
}: {
  taskId: string;
  details?: { deleted_at?: string | null; deleted_by?: string | null };
}) {
  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-8 text-sm" data-testid="task-deleted">
      <h1 className="text-lg font-semibold">Task deleted</h1>
      <p className="mt-2 break-words text-neutral-700">
        Task <code className="font-mono break-all">{taskId}</code> was deleted
        {details?.deleted_by ? <> by {details.deleted_by}</> : null}
        {details?.deleted_at ? (
          <>
            {" "}
            at <Time iso={details.deleted_at} />
          </>
        ) : null}
        . Its events, checkpoints, side effects, artifacts and approvals are gone; the audit log keeps the entry that
        says what was deleted and why.
      </p>
      <div className="mt-4 flex flex-wrap gap-2">
        <Link
          href="/settings/retention"
          className="inline-block rounded-md bg-neutral-900 px-3 py-1.5 font-medium text-white hover:bg-neutral-700"
        >
          Deleted tasks (Settings → Retention)
        </Link>
        <Link href="/tasks" className="inline-block rounded-md border border-neutral-300 px-3 py-1.5 font-medium">
          Back to tasks
        </Link>
      </div>
    </div>
  );
}
