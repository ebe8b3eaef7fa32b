import { restorePrincipal } from "@/lib/domain/settings/principals";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** POST /api/v1/settings/principals/restore body `{"principal"}` → `{"restored": true}`. Owners/admins; 404 if not revoked. */
export const POST = apiRoute(async ({ req, ctx }) => {
  await restorePrincipal(ctx, { body: await readJson(req) });
  return { restored: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
