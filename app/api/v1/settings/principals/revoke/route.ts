import { revokePrincipal } from "@/lib/domain/settings/principals";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** POST /api/v1/settings/principals/revoke body `{"principal", "reason"}` → `{"revoked": true}`. Owners/admins; 409 if already revoked. */
export const POST = apiRoute(async ({ req, ctx }) => {
  await revokePrincipal(ctx, { body: await readJson(req) });
  return { revoked: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
