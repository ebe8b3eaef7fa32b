import { NextResponse } from "next/server";
import { withGenericPlans } from "@/db";
import { withSigningKey } from "@/lib/server/verb-context";
import { checkpointTask } from "@/lib/domain/tasks/checkpoint";
import { getTaskView } from "@/lib/domain/tasks/read";
import { deleteTask } from "@/lib/domain/tasks/delete";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

type Params = { taskId: string };

/**
 * GET /api/v1/tasks/{task_id} → `{"task_id", "record", "version", "digest", "signature_valid", "side_effects":
 * {"<name>": {"idempotency_key", "status", "receipt"?, …}}, …}`: the latest record and the server's view of
 * each side effect. 404 when the caller's tenant has no such task.
 */
export const GET = apiRoute<Params>(async ({ ctx, params }) => {
  const view = await getTaskView(withSigningKey(ctx), { taskId: params.taskId });
  return NextResponse.json(view, { headers: { etag: `"${view.version}"` } });
});

/**
 * PUT /api/v1/tasks/{task_id} — body: the task record (docs/concepts.md#task-record), with `attempt` (the sandbox
 * attempt writing it) and optionally `base_version`; or the version it is based on as `If-Match: "<version>"`.
 * → 200 `{"task_id", "version", "digest", "signature", "key_id", "attempt"}` and `ETag: "<version>"`; every PUT adds
 * a checkpoint version.
 * Errors: 409 stale_attempt (an older attempt than the task's current one; `details.current_attempt`),
 * 409 version_conflict (based on an older version; `details.current_version`), 409 conflict (principal or
 * side-effect key), 422 validation_failed (field path named; credential-looking values; more than 500 side effects),
 * 400 invalid_json, 413, 401, 403 (people cannot checkpoint).
 */
export const PUT = apiRoute<Params>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  // Generic plans (decision 0022): its statements look rows up by key; each is then one round trip, planned once.
  const out = await withGenericPlans(async () =>
    checkpointTask(withSigningKey(ctx), {
      taskId: params.taskId,
      body,
      ifMatch: req.headers.get("if-match"),
    }),
  );
  return NextResponse.json(out, { headers: { etag: `"${out.version}"` } });
});

/**
 * DELETE /api/v1/tasks/{task_id} — a signed-in owner or admin deletes the task (decision 0054): body `{"reason"}`
 * (3–1000 characters) → 200 `{"task_id", "deleted_at", "deleted_by", "reason", "summary": {"counts", "latest_checkpoint",
 * "artifacts", "artifacts_truncated", "last_change"}}`. Its events, checkpoints, side effects, artifacts (and bytes no
 * other task shares) and approvals go in one transaction; the task row stays as a tombstone and one audit entry
 * `task.deleted` says what went. From then on every path for the id answers 410 `task_deleted`.
 * Errors: 400 (body) · 401 · 403 (runtime API key, or a role other than owner or admin) · 404 (also another tenant's
 * task) · 409 conflict (already deleted) · 409 export_required (the workspace requires an export after the task's last
 * change) · 422 (reason).
 */
export const DELETE = apiRoute<Params>(async ({ req, ctx, params }) => {
  const body = await readJson(req, 8 * 1024);
  return deleteTask(ctx, { taskId: params.taskId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, OPTIONS } = otherMethods("GET", "PUT", "DELETE");
