import { changeMemberRole, removeMember } from "@/lib/domain/tenancy/members";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * PATCH /api/v1/settings/members/{user_id} body `{"role"}` → `{user_id, email, role, previous_role, changed, audit_seq}`:
 * gives a member another role, effective on their next request. Owners and admins (403 `forbidden`); only owners
 * grant, change or remove the owner role (403 `not_allowed`); the only owner cannot be demoted (409 `last_owner`);
 * 404 when the workspace has no such active member (also another workspace's); 422 naming the field.
 */
export const PATCH = apiRoute<{ userId: string }>(async ({ req, ctx, params }) =>
  changeMemberRole(ctx, { userId: params.userId, body: await readJson(req) }),
);

/**
 * DELETE /api/v1/settings/members/{user_id} → `{removed: true, user_id, email, role, sessions_ended, audit_seq}`:
 * removes the member; their sessions in this workspace end at once and their past decisions stay in the audit
 * log under their email. Same refusals as PATCH (`forbidden`, `not_allowed`, `last_owner`, 404).
 */
export const DELETE = apiRoute<{ userId: string }>(async ({ ctx, params }) =>
  removeMember(ctx, { userId: params.userId }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, OPTIONS } = otherMethods("PATCH", "DELETE");
