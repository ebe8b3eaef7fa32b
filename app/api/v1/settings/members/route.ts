import { inviteMember, listInvitations } from "@/lib/domain/tenancy/invitations";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";
import { siteUrl } from "@/lib/server/site-url";

/**
 * GET /api/v1/settings/members → `{"members": [{user_id, email, name, role, revoked, locked}], "invitations":
 * [{id, email, role, invited_by, created_at, expires_at}]}`: `locked` is `{failures, locked_until}` while failed
 * sign-ins lock the member out from some address, else null; `revoked` marks removed members (kept so past
 * decisions keep a name); `invitations` are the open links. Signed-in people of any role; runtime keys 403.
 */
export const GET = apiRoute(async ({ ctx }) => {
  return { members: await listMembersForActor(ctx), invitations: await listInvitations(ctx) };
});

/**
 * POST /api/v1/settings/members body `{"email", "role"}` → `{"invitation_url", "expires_at", "invitation", "audit_seq"}`:
 * adds a person by sending them a one-time link (shown here once, valid 7 days) that sets their password and makes
 * them a member — the same as POST /api/v1/settings/invitations. Owners and admins (403 `forbidden` otherwise;
 * 403 `not_allowed` when an admin invites an owner); 409 `already_member`; 422 naming the field.
 */
export const POST = apiRoute(async ({ req, ctx }) =>
  inviteMember(ctx, { body: await readJson(req), baseUrl: siteUrl(req) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
