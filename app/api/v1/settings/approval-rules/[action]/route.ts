import { deleteActionRule, setActionRule } from "@/lib/domain/approvals/settings";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * PUT /api/v1/settings/approval-rules/{action} body `{"requires_approval", "ttl_seconds"?}` → `{"action", "saved": true}`:
 * the tenant marks an action approval-required (intents for it then need a fresh approval) and may give it its own
 * approval TTL. Owners and admins. Errors: 401, 403, 422.
 */
export const PUT = apiRoute<{ action: string }>(async ({ req, ctx, params }) => {
  await setActionRule(ctx, { action: params.action, body: await readJson(req) });
  return { action: params.action, saved: true };
});

/** DELETE /api/v1/settings/approval-rules/{action} → `{"action", "removed": true}`. Owners and admins. */
export const DELETE = apiRoute<{ action: string }>(async ({ ctx, params }) => {
  await deleteActionRule(ctx, { action: params.action });
  return { action: params.action, removed: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PATCH, OPTIONS } = otherMethods("PUT", "DELETE");
