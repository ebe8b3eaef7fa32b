/** Skeleton while the task loads. */
export default function Loading() {
  return (
    <div className="animate-pulse space-y-4" aria-busy="true" aria-label="Loading task">
      <div className="h-16 rounded-lg bg-neutral-200" />
      <div className="h-64 rounded-lg bg-neutral-200" />
      <div className="h-40 rounded-lg bg-neutral-200" />
    </div>
  );
}
