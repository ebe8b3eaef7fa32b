/**
 * `POST /api/v1/tasks/{task_id}/terminate`: an owner or responder ends a task for good (issue 24, decision 0043) — a run
 * nobody should continue (runaway, wrong inputs, a principal that must not act). One guarded statement marks the task
 * ended (`terminated_at` set only while it is null; the phase becomes `terminated`, which every list reads as ended)
 * beside its audit entry (`task.terminated`, with the reason and the phase before). From then on the resume gate
 * answers stop (`task_terminated`), so intents are refused, and checkpoints are refused (`task_terminated`, 409).
 * Events and receipts are still recorded: they are facts about what the run already did, and a receipt is how a write
 * in flight stops being unknown.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound, validationError } from "../errors";
import { refuseSecrets } from "../secrets/redact";
import { withRetry } from "../tx";
import { checkTaskId } from "./read";
import { TERMINATED_PHASE } from "./phases";

export const terminateBodySchema = z.strictObject({
  /** Why the task is ended: required, kept on the task, in the audit entry and in the gate's reason. */
  reason: z.string().trim().min(1, "say why the task is ended").max(500, "reason is at most 500 characters"),
});

/** What ending a task answers. */
export type TerminateResult = {
  task_id: string;
  previous_phase: string;
  terminated_at: string;
  terminated_by: string;
  reason: string;
};

/**
 * Ends a task for good.
 * @param body `{reason}` (1–500 characters, no credentials).
 * @throws DomainError forbidden (a runtime key, or a role other than owner, responder, admin); not_found (no such task
 *   in the tenant, also another tenant's); validation_failed (reason); conflict (already ended: who and when).
 */
export async function terminateTask(
  { db, actor }: VerbContext,
  { taskId, body }: { taskId: string; body: unknown },
): Promise<TerminateResult> {
  authorize(actor, "tasks.terminate");
  checkTaskId(taskId);
  const parsed = terminateBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  refuseSecrets(parsed.data, "The reason", "describe why without the credential");
  const reason = parsed.data.reason;
  const by = actorRef(actor).label;
  return withAuditSealed(db, actor.tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        const [row] = await queryRows<{ previous_phase: string; terminated_at: string }>(
          tx,
          sql`update tasks t set terminated_at = now(), terminated_by = ${by}, terminated_reason = ${reason},
                phase = ${TERMINATED_PHASE}, updated_at = now()
              from (select phase from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId} for update) old
              where t.tenant_id = ${actor.tenantId} and t.task_id = ${taskId} and t.terminated_at is null
              returning old.phase as previous_phase, ${isoUtc("t.terminated_at")} as terminated_at`,
        );
        if (!row) {
          const [exists] = await queryRows<{ terminated_at: string | null; terminated_by: string | null }>(
            tx,
            sql`select ${isoUtc("terminated_at")} as terminated_at, terminated_by
                from tasks where tenant_id = ${actor.tenantId} and task_id = ${taskId}`,
          );
          if (!exists) throw notFound(`Task ${taskId}`);
          throw new DomainError(
            "conflict",
            `Task ${taskId} was already ended by ${exists.terminated_by ?? "someone"} at ${exists.terminated_at}.`,
            { terminated_at: exists.terminated_at, terminated_by: exists.terminated_by },
          );
        }
        await appendAuditPending(tx, actor, {
          action: "task.terminated",
          target: `task:${taskId}`,
          details: { reason, previous_phase: row.previous_phase },
        });
        return {
          task_id: taskId,
          previous_phase: row.previous_phase,
          terminated_at: row.terminated_at,
          terminated_by: by,
          reason,
        };
      }),
    ),
  );
}
