import { getDb } from "@/db";
import { revokeApiKey } from "@/lib/domain/tenancy/api-keys";
import { apiRoute } from "@/lib/server/route";

/** POST /api/v1/settings/api-keys/{id}/revoke → `{"revoked": true}`. Owners and admins; 404 unknown; 409 already revoked. */
export const POST = apiRoute<{ keyId: string }>(async ({ actor, params }) => {
  await revokeApiKey(await getDb(), actor, params.keyId);
  return { revoked: true };
});
