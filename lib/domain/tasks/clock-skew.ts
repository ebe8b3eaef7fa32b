/**
 * Clock skew shown on a task (docs/concepts.md#receive-order): decisions follow the order the server received facts
 * in, never the runtime's clock, but a runtime clock found ahead of the server's or behind it is shown on the task
 * either way, with a sentence saying how it was found.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db";

/** Runtime clocks more than this far ahead of the server's, or behind it, are reported on the task. */
export const SKEW_TOLERANCE_MS = 60_000;

/**
 * Keeps the largest clock difference detected on a task (ms, positive = runtime ahead, negative = behind), with a
 * sentence saying how it was detected. Shown on the task page.
 */
export async function noteClockSkew(
  tx: Db,
  tenantId: string,
  taskId: string,
  skewMs: number,
  note: string,
): Promise<void> {
  await tx.execute(sql`
    update tasks set clock_skew_ms = ${Math.round(skewMs)}, clock_skew_at = now(), clock_skew_note = ${note}
    where tenant_id = ${tenantId} and task_id = ${taskId}
      and (clock_skew_ms is null or abs(clock_skew_ms) <= ${Math.abs(Math.round(skewMs))})`);
}
