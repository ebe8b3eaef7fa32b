import { getNotificationSettings, setNotificationSettings } from "@/lib/domain/notifications/endpoints";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/** GET /api/v1/settings/notifications → `{"allow_private_addresses"}`. Any role. */
export const GET = apiRoute(async ({ ctx }) => getNotificationSettings(ctx));

/** PUT /api/v1/settings/notifications body `{"allow_private_addresses": boolean}` → the settings. Owners and admins. */
export const PUT = apiRoute(async ({ req, ctx }) =>
  setNotificationSettings(ctx, { body: await readJson(req, 4 * 1024) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
