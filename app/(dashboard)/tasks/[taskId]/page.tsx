import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { askGate } from "@/lib/domain/gate/ask";
import { getTaskView } from "@/lib/domain/tasks/read";
import { getRetentionSettings } from "@/lib/domain/settings/retention";
import { getTimelineOverview } from "@/lib/domain/tasks/timeline";
import { packOverview } from "@/lib/contract/overview-pack";
import { eventSummary } from "@/lib/domain/events/summary";
import { requirePageContext } from "@/lib/server/page-actor";
import { withSigningKey } from "@/lib/server/verb-context";
import { TaskPageClient } from "./_components/TaskPageClient";
import { TaskDeleted } from "./_components/TaskDeleted";

type Props = { params: Promise<{ taskId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { taskId } = await params;
  return { title: `Task ${decodeURIComponent(taskId)}` };
}

/**
 * One task: header with signature status and gate verdict, four-lane timeline, side effects, artifacts, checkpoints.
 *
 * The task view, the timeline overview and the gate verdict are read at the same time. The page waits for the first
 * two before anything is streamed, outside any Suspense boundary (so there is no loading.tsx here): an unknown id
 * then answers a real 404 with not-found.tsx (a `notFound()` thrown after the shell was sent would render the same
 * page under status 200), and the timeline is part of the first HTML. Streaming it into a boundary of its own would
 * cost more than it saves: React reveals streamed boundaries at most every 300 ms after the shell's first frame, and
 * the timeline cannot hydrate before it is revealed. The verdict is handed to the client part as a promise and
 * streams in when the gate has answered, so the page never waits for it. The page never ships event bodies in bulk:
 * an event with large `attrs` travels as a summary (decision 0034).
 */
export default async function TaskPage({ params }: Props) {
  const { taskId: raw } = await params;
  const taskId = decodeURIComponent(raw);
  const ctx = await requirePageContext();
  const { actor } = ctx;
  // Summary columns: a large event body is cut in the database, never read whole in bulk (decision 0036).
  const overview = getTimelineOverview(ctx, { taskId, columns: "summary" });
  // The overview counts every event (its bins, kept per server): the task view takes its count from there rather than
  // counting the task's events again (a pass over all of them on a long run).
  const eventCount = overview.then((o) => o.total);
  const gate = askGate(withSigningKey(ctx), { taskId, body: {} });
  let task, timeline;
  try {
    [task, timeline] = await Promise.all([
      getTaskView(withSigningKey(ctx), { taskId, eventCount }),
      // Large event bodies travel as summaries; the drawer fetches one event's detail on demand (decision 0034).
      overview.then((o) => packOverview({ ...o, events: o.events.map(eventSummary) })),
    ]);
  } catch (err) {
    // Not rendered, so nothing else observes them: their failures (the same not_found) are expected here.
    for (const p of [overview, eventCount, gate]) p.catch(() => {});
    if (err instanceof DomainError && err.code === "not_found") notFound();
    // A deleted task (decision 0054): what remains is its tombstone, listed under Settings → Retention.
    if (err instanceof DomainError && err.code === "task_deleted") {
      return (
        <TaskDeleted
          taskId={taskId}
          details={err.details as { deleted_at?: string; deleted_by?: string } | undefined}
        />
      );
    }
    throw err;
  }
  const canDelete = can(actor, "tasks.delete");
  const deleteNeedsExport = canDelete && (await getRetentionSettings(ctx)).export_before_delete;
  return (
    <TaskPageClient
      taskId={taskId}
      initialTask={task}
      initialTimeline={timeline}
      gate={gate}
      canReconcile={can(actor, "side_effects.reconcile")}
      canFence={can(actor, "tasks.fence")}
      canTerminate={can(actor, "tasks.terminate")}
      canDelete={canDelete}
      deleteNeedsExport={deleteNeedsExport}
      canDecideApprovals={can(actor, "approvals.decide")}
      role={actor.role}
    />
  );
}
