import { secretsSealKey } from "@/lib/config/webhook-key";
import { createNotificationEndpoint, listNotificationEndpoints } from "@/lib/domain/notifications/endpoints";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/** GET /api/v1/settings/notification-endpoints → `{"endpoints": [{id, url, events, format, created_by, created_at}]}` (never a secret). Any role. */
export const GET = apiRoute(async ({ ctx }) => ({ endpoints: await listNotificationEndpoints(ctx) }));

/**
 * POST /api/v1/settings/notification-endpoints body `{"url", "events": [event], "format"?: "standard" | "slack"}` →
 * `{id, secret, url, events, format, created_by, created_at, warnings}`: the `whsec_…` secret that signs deliveries is
 * shown this once. Owners and admins. 422 naming the field, and for the url the reason it is refused: not https, a
 * link-local, metadata, loopback or private address (the last two unless the workspace allows them), or an answer
 * that redirects (decision 0040).
 */
export const POST = apiRoute(async ({ req, ctx }) =>
  createNotificationEndpoint(ctx, { body: await readJson(req, 16 * 1024), sealKey: secretsSealKey() }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
