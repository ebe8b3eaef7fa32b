import { authorize } from "@/lib/domain/authz";
import { actionRules, approvalSettingsOf } from "@/lib/domain/approvals/policy";
import { updateApprovalSettings } from "@/lib/domain/approvals/settings";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/settings/approvals → `{"policy_version", "default_ttl_seconds", "allow_self_approval", "updated_at",
 * "updated_by", "action_rules": [{action, requires_approval, ttl_seconds}]}`. Signed-in people of any role.
 */
export const GET = apiRoute(async ({ ctx }) => {
  authorize(ctx.actor, "settings.read");
  const { db, actor } = ctx;
  return { ...(await approvalSettingsOf(db, actor.tenantId)), action_rules: await actionRules(db, actor.tenantId) };
});

/**
 * PUT /api/v1/settings/approvals body `{"default_ttl_seconds"?, "allow_self_approval"?}` → `{"updated": true}`.
 * Owners and admins. Errors: 401, 403, 422.
 */
export const PUT = apiRoute(async ({ req, ctx }) => {
  await updateApprovalSettings(ctx, { body: await readJson(req) });
  return { updated: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
