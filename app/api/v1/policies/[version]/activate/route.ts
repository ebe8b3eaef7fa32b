import { activatePolicyVersion } from "@/lib/domain/policies/current";
import { policyVersionParam } from "@/lib/domain/policies/version-param";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * POST /api/v1/policies/{version}/activate (no body) → 200 `{"version", "digest", "previous", "changed",
 * "invalidated": [{id, task_id, side_effect}]}`: the version becomes the tenant's current policy, the one approvals
 * bind to; live approvals bound to another version become stale at once (audited, marked on their tasks' timelines).
 * The one way to change the current policy version. Owners and admins. Errors: 400, 401, 403, 404,
 * 422 `policy_invalid` with `details.findings` (the version has lint errors).
 */
export const POST = apiRoute<{ version: string }>(async ({ req, ctx, params }) => {
  const version = policyVersionParam(params.version);
  await readNoBody(req);
  return activatePolicyVersion(ctx, { version });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
