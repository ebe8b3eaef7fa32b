import { getOwnerDb } from "@/db";
import { acceptInvitation } from "@/lib/domain/tenancy/invitations";
import { clientAddress } from "@/lib/server/client-address";
import { otherMethods, publicRoute, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/invitations/{token}/accept body `{"password", "name"?}` → `{user_id, email, role, workspace: {id, slug,
 * name}, account_created}`. No session needed: the token is the credential. For a new email `password` becomes the
 * account's password (12–256 characters); for an email that already has an account it must be that account's
 * password (403 otherwise; a link never changes it). 404 for an unknown token; 410 `gone` for a used, expired or
 * withdrawn one (`details.reason`); 409 `already_member`; 422 naming the field; 429 when the sign-in throttle refuses.
 * The invitation is found by its token's hash before any tenant is known, so this runs on the owner's database
 * (docs/decisions/0016-tenant-walls.md).
 */
export const POST = publicRoute<{ token: string }>(async ({ req, params }) =>
  acceptInvitation(await getOwnerDb(), params.token, await readJson(req), { source: clientAddress(req.headers) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
