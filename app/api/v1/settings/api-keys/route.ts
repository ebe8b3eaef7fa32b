import { createApiKey, listApiKeys } from "@/lib/domain/tenancy/api-keys";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** GET /api/v1/settings/api-keys → `{"keys": [{id, name, display_prefix, created_at, last_used_at, revoked_at}]}` (never the key). */
export const GET = apiRoute(async ({ ctx }) => ({ keys: await listApiKeys(ctx) }));

/**
 * POST /api/v1/settings/api-keys body `{"name"}` (1–100 characters, nothing else) → 200 `{"id", "name", "key"}`:
 * the key is shown this once. Owners and admins only (403 otherwise); 422 naming the field when the name is
 * missing, empty, too long or holds control or bidi override characters, or when the body has unknown fields.
 */
export const POST = apiRoute(async ({ req, ctx }) => createApiKey(ctx, { body: await readJson(req) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
