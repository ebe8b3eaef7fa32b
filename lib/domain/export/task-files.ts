/**
 * One task's files inside a workspace bundle. Until the task bundle's producer (lib/export/task-bundle.ts) is shared,
 * this writes the task row only (`task.json`).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { BundleSink } from "./workspace";

/** Writes the files of task `taskId` into `sink` (a view under the task's directory). */
export async function writeTaskFiles(db: Db, sink: BundleSink, tenantId: string, taskId: string): Promise<void> {
  const [row] = await queryRows<{ r: Record<string, unknown> }>(
    db,
    sql`select to_jsonb(t) - 'tenant_id' as r from tasks t where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  await sink.addJson("task.json", row?.r ?? null);
}
