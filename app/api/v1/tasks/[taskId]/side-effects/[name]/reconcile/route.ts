import { withSigningKey } from "@/lib/server/verb-context";
import { reconcileSideEffect } from "@/lib/domain/side-effects/reconcile";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/side-effects/{name}/reconcile — a signed-in responder, owner or admin settles
 * an `unknown` effect. body `{"outcome": "completed"|"not_applied", "external_operation_id"? (required for
 * completed), "result_digest"?, "evidence", "use_lookup"?}` → 200 `{"name", "status", "reconcile", "audit_seq"}`.
 * Errors: 403 (runtime API key, or a role that may not) · 404 · 409 conflict (settled by someone else first:
 * says who and when; or not unknown) · 422 validation_failed naming the field (e.g. evidence).
 */
export const POST = apiRoute<{ taskId: string; name: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return reconcileSideEffect(withSigningKey(ctx), { taskId: params.taskId, name: params.name, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
