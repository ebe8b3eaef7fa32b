import { getDb } from "@/db";
import { listMembersForActor } from "@/lib/domain/tenancy/members";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/settings/members → `{"members": [{user_id, email, name, role, revoked, locked}]}`; `locked` is
 * `{failures, locked_until}` while failed sign-ins lock the member out, else null. Signed-in people only.
 */
export const GET = apiRoute(async ({ actor }) => ({ members: await listMembersForActor(await getDb(), actor) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
