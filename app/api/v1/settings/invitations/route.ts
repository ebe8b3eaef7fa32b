import { inviteMember } from "@/lib/domain/tenancy/invitations";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";
import { siteUrl } from "@/lib/server/site-url";

/**
 * POST /api/v1/settings/invitations body `{"email", "role"}` → `{"invitation_url", "expires_at", "invitation",
 * "audit_seq"}`: a one-time link (valid 7 days, single use; only its hash is stored) to hand to the person; opening
 * it sets their password and makes them a member with `role`. An earlier open link for the same email here is
 * withdrawn. Owners and admins (403 `forbidden`); an admin cannot invite an owner (403 `not_allowed`); 409
 * `already_member`; 422 naming the field.
 */
export const POST = apiRoute(async ({ req, ctx }) =>
  inviteMember(ctx, { body: await readJson(req), baseUrl: siteUrl(req) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
