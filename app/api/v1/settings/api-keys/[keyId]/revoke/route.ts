import { revokeApiKey } from "@/lib/domain/tenancy/api-keys";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/** POST /api/v1/settings/api-keys/{id}/revoke → `{"revoked": true}`. Owners and admins; 404 unknown; 409 already revoked; no body (or `{}`), else 400/422. */
export const POST = apiRoute<{ keyId: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  await revokeApiKey(ctx, { keyId: params.keyId });
  return { revoked: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
