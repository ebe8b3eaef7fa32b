import { fenceTask } from "@/lib/domain/tasks/fence";
import { apiRoute, otherMethods, readOptionalJson } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/fence — a signed-in owner, responder or admin moves the task on to a new attempt
 * (decision 0032): body `{"reason"?}` (or none) → 200 `{"task_id", "previous_attempt", "current_attempt", "ended"}`;
 * older attempts end (their in-flight writes become `unknown`, listed in `ended`), audited `task.fenced`.
 * Errors: 401 · 403 (runtime API key, or a role that may not) · 404 · 409 conflict (at the highest attempt) · 422.
 */
export const POST = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const body = await readOptionalJson(req, 4 * 1024);
  return fenceTask(ctx, { taskId: params.taskId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
