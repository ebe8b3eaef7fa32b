import { getDb } from "@/db";
import { revokeApiKey } from "@/lib/domain/tenancy/api-keys";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** POST /api/v1/settings/api-keys/{id}/revoke → `{"revoked": true}`. Owners and admins; 404 unknown; 409 already revoked. */
export const POST = apiRoute<{ keyId: string }>(async ({ actor, params }) => {
  await revokeApiKey(await getDb(), actor, params.keyId);
  return { revoked: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
