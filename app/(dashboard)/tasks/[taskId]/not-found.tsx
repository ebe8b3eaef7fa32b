import Link from "next/link";

/** Shown for a task id this workspace does not have (also for other tenants' tasks). */
export default function TaskNotFound() {
  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-8 text-sm">
      <h1 className="text-lg font-semibold">Task not found</h1>
      <p className="mt-2 text-neutral-700">
        This workspace has no task with that id. Check the id, or find the task in the list.
      </p>
      <Link href="/tasks" className="mt-3 inline-block underline">Back to tasks</Link>
    </div>
  );
}
