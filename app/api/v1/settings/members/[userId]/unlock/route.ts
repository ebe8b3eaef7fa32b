import { unlockMember } from "@/lib/domain/tenancy/members";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * POST /api/v1/settings/members/{user_id}/unlock → `{"unlocked": true, user_id, email, failures, audit_seq}`:
 * forgets the member's failed sign-ins so the right password works again. Owners and admins (403 otherwise);
 * 404 when the tenant has no such active member; 409 when the member is not locked; no body (or `{}`), else 400/422.
 */
export const POST = apiRoute<{ userId: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return unlockMember(ctx, { userId: params.userId });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
