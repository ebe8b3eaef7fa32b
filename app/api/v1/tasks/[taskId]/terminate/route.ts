import { terminateTask } from "@/lib/domain/tasks/terminate";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/terminate — a signed-in owner, responder or admin ends the task for good (decision
 * 0043): body `{"reason"}` → 200 `{"task_id", "previous_phase", "terminated_at", "terminated_by", "reason"}`, audited
 * `task.terminated`. From then on the gate answers stop (`task_terminated`) and checkpoints are refused (409
 * `task_terminated`); events and receipts are still recorded.
 * Errors: 400 (body) · 401 · 403 (runtime API key, or a role that may not) · 404 (also another tenant's task) · 409
 * conflict (already ended) · 422 (reason).
 */
export const POST = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req, 4 * 1024);
  return terminateTask(ctx, { taskId: params.taskId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
