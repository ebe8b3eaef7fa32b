import { secretsSealKey } from "@/lib/config/webhook-key";
import { rotateWebhookSecret } from "@/lib/domain/webhooks/sources";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * POST /api/v1/settings/webhook-sources/{name}/secrets (no body) → `{name, secret, secret_id}`: a rotation. The new
 * secret is shown this once and verifies beside the old one until that is removed. Owners and admins; 404 when no
 * such source; 409 when it already holds two secrets.
 */
export const POST = apiRoute<{ source: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return rotateWebhookSecret(ctx, { name: params.source, sealKey: secretsSealKey() });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
