/**
 * A deleted task's id is dead on every path (decision 0054): reads and writes answer 410 `task_deleted`, with who
 * deleted it and when. The checks here are the one place that says so; a trigger of migration 0035 also refuses any
 * row written under a deleted task's id (SQLSTATE `RC410`), which {@link taskDeletedFromDbError} turns into the same
 * answer.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import * as q from "@/db/queries/tasks";
import { DomainError } from "../errors";

/** The SQLSTATE the migration 0035 triggers raise for a row written under a deleted task's id. */
const TASK_DELETED_SQLSTATE = "RC410";

/** The 410 answer for a deleted task. */
export function taskDeletedError(
  taskId: string,
  tomb: { deleted_at: string | null; deleted_by?: string | null } | null = null,
): DomainError {
  const when = tomb?.deleted_at ? ` by ${tomb.deleted_by ?? "someone"} at ${tomb.deleted_at}` : "";
  return new DomainError(
    "task_deleted",
    `Task ${taskId} was deleted${when}; it takes no more writes and has nothing to read. Stop this run; start a new task to go on.`,
    tomb ? { deleted_at: tomb.deleted_at, deleted_by: tomb.deleted_by ?? null } : undefined,
  );
}

/**
 * One task of a tenant as {@link q.findTask} reads it, or undefined when there is none.
 * @throws DomainError task_deleted when the task is a tombstone.
 */
export async function findLiveTask(db: Db, tenantId: string, taskId: string): Promise<q.TaskRow | undefined> {
  const task = await q.findTask(db, tenantId, taskId);
  if (task?.deleted_at) throw taskDeletedError(taskId, task);
  return task;
}

/**
 * Of `taskIds`, those that are deleted tasks of the tenant (one indexed query; none asked, none read).
 */
export async function deletedTaskIds(db: Db, tenantId: string, taskIds: readonly string[]): Promise<Set<string>> {
  if (!taskIds.length) return new Set();
  const rows = await queryRows<{ task_id: string }>(
    db,
    sql`select task_id from tasks where tenant_id = ${tenantId} and task_id in (${sql.join(
      taskIds.map((id) => sql`${id}`),
      sql`, `,
    )}) and deleted_at is not null`,
  );
  return new Set(rows.map((r) => r.task_id));
}

/**
 * The 410 answer for a database error raised by the migration 0035 triggers (also wrapped as `cause`, as Drizzle's
 * query errors are), else null.
 */
export function taskDeletedFromDbError(err: unknown): DomainError | null {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === "object" && !seen.has(e)) {
    seen.add(e);
    if ((e as { code?: unknown }).code === TASK_DELETED_SQLSTATE) {
      const id = /task (.+) was deleted/.exec(String((e as { message?: unknown }).message ?? ""))?.[1];
      return taskDeletedError(id ?? "this", null);
    }
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
