import { getDb } from "@/db";
import { unlockMember } from "@/lib/domain/tenancy/members";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/settings/members/{user_id}/unlock → `{"unlocked": true, user_id, email, failures, audit_seq}`:
 * forgets the member's failed sign-ins so the right password works again. Owners and admins (403 otherwise);
 * 404 when the tenant has no such active member; 409 when the member is not locked.
 */
export const POST = apiRoute<{ userId: string }>(async ({ actor, params }) => unlockMember(await getDb(), actor, params.userId));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
