/**
 * `POST /api/v1/tasks/{task_id}/fence`: an owner or responder moves a task on to a new attempt
 * (docs/concepts.md#attempts-and-fencing, decision 0032) — the way out of a stuck attempt: a sandbox that hangs, one
 * that named an attempt nobody else can follow, or one a person no longer trusts. The task's current attempt rises by
 * one in one guarded statement beside its audit entry (`task.fenced`); every older attempt ends by the one rule of
 * {@link endAttempts} (in-flight writes and open mutating calls become `unknown`), and from then on only the new
 * attempt may checkpoint or write.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound, validationError } from "../errors";
import { ATTEMPT_MAX } from "../limits";
import { refuseSecrets } from "../secrets/redact";
import { endAttempts } from "../side-effects/attempts";
import { flushMoves, mover } from "../side-effects/lifecycle/moves";
import { withRetry } from "../tx";
import { checkTaskId } from "./read";

export const fenceBodySchema = z.strictObject({
  /** Why the task is fenced: kept in the audit entry and the reason of every write that ends with it. */
  reason: z.string().trim().max(500, "reason is at most 500 characters").optional(),
});

/** What fencing answers. */
export type FenceResult = { task_id: string; previous_attempt: number; current_attempt: number; ended: string[] };

/**
 * Fences a task to a new attempt: `current_attempt + 1`.
 * @param body `{reason?}`.
 * @returns the attempt before and after, and the effects that became `unknown` with the older attempts.
 * @throws DomainError forbidden (a runtime key, or a role other than owner, responder, admin); not_found (no such task
 *   in the tenant); validation_failed; conflict (the task is at the highest attempt there is).
 */
export async function fenceTask(
  { db, actor }: VerbContext,
  { taskId, body }: { taskId: string; body: unknown },
): Promise<FenceResult> {
  authorize(actor, "tasks.fence");
  checkTaskId(taskId);
  const parsed = fenceBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  refuseSecrets(parsed.data, "The fence reason", "describe why without the credential");
  const reason = parsed.data.reason || null;
  return withAuditSealed(db, actor.tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const [row] = await queryRows<{ current_attempt: number }>(
          tx,
          sql`update tasks set current_attempt = current_attempt + 1, updated_at = now()
              where tenant_id = ${actor.tenantId} and task_id = ${taskId} and current_attempt < ${ATTEMPT_MAX}
              returning current_attempt`,
        );
        if (!row) {
          const [exists] = await queryRows<{ current_attempt: number }>(
            tx,
            sql`select current_attempt from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId}`,
          );
          if (!exists) throw notFound(`Task ${taskId}`);
          throw new DomainError(
            "conflict",
            `Task ${taskId} is at attempt ${exists.current_attempt}, the highest there is; start a new task.`,
          );
        }
        const current = row.current_attempt;
        const by = mover(actor, "request");
        const ended = await endAttempts(
          tx,
          by,
          taskId,
          { before: current },
          `A person fenced the task to attempt ${current}${reason ? ` (${reason.replace(/\.$/, "")})` : ""} before a receipt was recorded.`,
        );
        await flushMoves(tx, by);
        await appendAuditPending(tx, actor, {
          action: "task.fenced",
          target: `task:${taskId}`,
          details: { previous_attempt: current - 1, current_attempt: current, reason, ended },
        });
        return { task_id: taskId, previous_attempt: current - 1, current_attempt: current, ended };
      }),
    ),
  );
}
