/**
 * One task's files inside a workspace bundle: the task bundle's own producer (lib/export/task-bundle.ts), without the
 * task's audit files — the workspace bundle holds the chain whole at its root (decision 0038).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { writeTaskBundle } from "@/lib/export/task-bundle";
import type { BundleSink } from "./workspace";

/** Writes the files of task `taskId` into `sink` (a view under the task's directory). */
export async function writeTaskFiles(db: Db, sink: BundleSink, tenantId: string, taskId: string): Promise<void> {
  const [row] = await queryRows<{ latest_version: number }>(
    db,
    sql`select latest_version from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  await writeTaskBundle(db, sink, {
    tenantId,
    taskId,
    latestVersion: Number(row?.latest_version ?? 0),
    head: { seq: 0, hash: "" },
    inWorkspace: true,
  });
}
