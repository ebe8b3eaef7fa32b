import Link from "next/link";

/** Shown, with status 404, for a task id this workspace does not have (also for other tenants' tasks). */
export default function TaskNotFound() {
  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-8 text-sm" data-testid="task-not-found">
      <h1 className="text-lg font-semibold">Task not found</h1>
      <p className="mt-2 text-neutral-700">
        This workspace has no task with that id. Check the id in the address (ids are case-sensitive), or find the task
        in the list. A task appears once its runtime has reported an event or a checkpoint with this workspace&apos;s
        API key.
      </p>
      <Link
        href="/tasks"
        className="mt-4 inline-block rounded-md bg-neutral-900 px-3 py-1.5 font-medium text-white hover:bg-neutral-700"
      >
        Back to tasks
      </Link>
    </div>
  );
}
