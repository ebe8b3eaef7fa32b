import { removeWebhookSecret } from "@/lib/domain/webhooks/sources";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** DELETE /api/v1/settings/webhook-sources/{name}/secrets/{secret_id} → `{"deleted": true}`. Owners and admins; 404; 409 for the only secret. */
export const DELETE = apiRoute<{ source: string; secretId: string }>(async ({ ctx, params }) => {
  await removeWebhookSecret(ctx, { name: params.source, secretId: params.secretId });
  return { deleted: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods("DELETE");
