import { deleteWebhookSource, setWebhookTrust } from "@/lib/domain/webhooks/sources";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/** PATCH /api/v1/settings/webhook-sources/{name} body `{"trusted_actions": [action]}` → `{name, trusted_actions}`. Owners and admins; 404 when none. */
export const PATCH = apiRoute<{ source: string }>(async ({ req, ctx, params }) =>
  setWebhookTrust(ctx, { name: params.source, body: await readJson(req, 16 * 1024) }),
);

/** DELETE /api/v1/settings/webhook-sources/{name} → `{"deleted": true}`; its secrets go with it. Owners and admins; 404 when none. */
export const DELETE = apiRoute<{ source: string }>(async ({ ctx, params }) => {
  await deleteWebhookSource(ctx, { name: params.source });
  return { deleted: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, OPTIONS } = otherMethods("PATCH", "DELETE");
