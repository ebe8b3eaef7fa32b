import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { dbFor } from "@/db";
import { getSigningKey } from "@/lib/config/signing-key";
import { can, type UserActor } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { askGate } from "@/lib/domain/gate/ask";
import { getTaskView } from "@/lib/domain/tasks/read";
import { getTimelineOverview } from "@/lib/domain/tasks/timeline";
import type { TaskView } from "@/lib/client/types";
import { requirePageActor } from "@/lib/server/page-actor";
import { TaskPageClient } from "./_components/TaskPageClient";
import { TaskSkeleton } from "./_components/TaskSkeleton";

type Props = { params: Promise<{ taskId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { taskId } = await params;
  return { title: `Task ${decodeURIComponent(taskId)}` };
}

/**
 * One task: header with signature status and gate verdict, four-lane timeline, side effects, artifacts, checkpoints.
 *
 * The task is looked up before anything is streamed, outside any Suspense boundary (so there is no loading.tsx
 * here): an unknown id then answers a real 404 with not-found.tsx. A `notFound()` thrown after the shell was
 * sent would render the same page under status 200. The timeline and the gate verdict load under Suspense.
 */
export default async function TaskPage({ params }: Props) {
  const { taskId: raw } = await params;
  const taskId = decodeURIComponent(raw);
  const actor = await requirePageActor();
  const db = await dbFor(actor);
  let task;
  try {
    task = await getTaskView(db, actor, taskId, getSigningKey());
  } catch (err) {
    if (err instanceof DomainError && err.code === "not_found") notFound();
    throw err;
  }
  return (
    <Suspense fallback={<TaskSkeleton />}>
      <TaskPageBody actor={actor} taskId={taskId} task={task} />
    </Suspense>
  );
}

/**
 * The timeline overview (the whole timeline of a short run; every marker, the newest events and per-lane bins of a
 * long one) and the gate verdict, then the client part of the page.
 */
async function TaskPageBody({ actor, taskId, task }: { actor: UserActor; taskId: string; task: TaskView }) {
  const db = await dbFor(actor);
  const [overview, gate] = await Promise.all([getTimelineOverview(db, actor, taskId), askGate(db, actor, taskId, {}, getSigningKey())]);

  return (
    <TaskPageClient
      taskId={taskId}
      initialTask={task}
      initialTimeline={overview}
      initialGate={gate}
      canReconcile={can(actor, "side_effects.reconcile")}
      canDecideApprovals={can(actor, "approvals.decide")}
      role={actor.role}
    />
  );
}
