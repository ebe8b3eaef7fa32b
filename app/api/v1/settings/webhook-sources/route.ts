import { secretsSealKey } from "@/lib/config/webhook-key";
import { createWebhookSource, listWebhookSources } from "@/lib/domain/webhooks/sources";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/** GET /api/v1/settings/webhook-sources → `{"sources": [{name, trusted_actions, secrets: [{id, created_at}], created_by, created_at}]}` (never a secret). Any role. */
export const GET = apiRoute(async ({ ctx }) => ({ sources: await listWebhookSources(ctx) }));

/**
 * POST /api/v1/settings/webhook-sources body `{"name", "trusted_actions"?: [action]}` → `{name, secret, secret_id,
 * trusted_actions, url_path}`: the `whsec_…` secret is shown this once. Owners and admins (403 otherwise); 422 naming
 * the field; 409 when the name is taken (decision 0040).
 */
export const POST = apiRoute(async ({ req, ctx }) =>
  createWebhookSource(ctx, { body: await readJson(req, 16 * 1024), sealKey: secretsSealKey() }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
