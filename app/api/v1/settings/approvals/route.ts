import { getApprovalSettings, updateApprovalSettings } from "@/lib/domain/approvals/settings";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/settings/approvals → `{"policy_version", "default_ttl_seconds", "allow_self_approval",
 * "retry_after_not_applied_reuses_approval", "updated_at", "updated_by", "action_rules": [{action, requires_approval,
 * ttl_seconds}]}`: `policy_version` is the version approvals bind to (changed by POST /api/v1/policies/{version}/activate).
 * Signed-in people of any role.
 */
export const GET = apiRoute(async ({ ctx }) => getApprovalSettings(ctx));

/**
 * PUT /api/v1/settings/approvals body `{"default_ttl_seconds"?, "allow_self_approval"?,
 * "retry_after_not_applied_reuses_approval"?}` → `{"updated": true}`. The last one (default false) lets a retry after a
 * write was found not applied go under the approval its first go used (decision 0029). Owners and admins.
 * Errors: 401, 403, 422.
 */
export const PUT = apiRoute(async ({ req, ctx }) => {
  await updateApprovalSettings(ctx, { body: await readJson(req) });
  return { updated: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
