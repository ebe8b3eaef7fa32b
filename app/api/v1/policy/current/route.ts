import { authorize } from "@/lib/domain/authz";
import { currentPolicyVersion } from "@/lib/domain/approvals/policy";
import { setPolicyVersion } from "@/lib/domain/approvals/settings";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** GET /api/v1/policy/current → `{"version"}`: the tenant's current policy version. Runtime keys and every role. */
export const GET = apiRoute(async ({ ctx }) => {
  authorize(ctx.actor, "approvals.read");
  return { version: await currentPolicyVersion(ctx.db, ctx.actor.tenantId) };
});

/**
 * PUT /api/v1/policy/current body `{"version"}` → `{"version", "previous", "invalidated": [{id, task_id, side_effect}]}`.
 * Owners and admins. Approvals bound to another version become stale at once (audited, marked on their tasks'
 * timelines). Errors: 401, 403 (other roles, runtime keys), 422.
 */
export const PUT = apiRoute(async ({ req, ctx }) => {
  return setPolicyVersion(ctx, { body: await readJson(req) });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
