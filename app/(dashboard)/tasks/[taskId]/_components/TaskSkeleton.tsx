/** Skeleton while the task's timeline and gate verdict load (the task itself is known to exist by then). */
export function TaskSkeleton() {
  return (
    <div className="animate-pulse space-y-4" aria-busy="true" aria-label="Loading task">
      <div className="h-16 rounded-lg bg-neutral-200" />
      <div className="h-64 rounded-lg bg-neutral-200" />
      <div className="h-40 rounded-lg bg-neutral-200" />
    </div>
  );
}
