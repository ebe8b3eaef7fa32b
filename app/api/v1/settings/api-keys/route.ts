import { getDb } from "@/db";
import { createApiKey, listApiKeys } from "@/lib/domain/tenancy/api-keys";
import { DomainError } from "@/lib/domain/errors";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** GET /api/v1/settings/api-keys → `{"keys": [{id, name, display_prefix, created_at, last_used_at, revoked_at}]}` (never the key). */
export const GET = apiRoute(async ({ actor }) => ({ keys: await listApiKeys(await getDb(), actor) }));

/**
 * POST /api/v1/settings/api-keys body `{"name"}` → 200 `{"id", "name", "key"}`: the key is shown this once.
 * Owners and admins only (403 otherwise); 422 when the name is missing.
 */
export const POST = apiRoute(async ({ req, actor }) => {
  const body = (await readJson(req)) as { name?: unknown };
  if (typeof body?.name !== "string") {
    throw new DomainError("validation_failed", "name: give the key a name (e.g. the runtime it is for).", {
      fields: [{ path: "name", message: "required" }],
    });
  }
  return createApiKey(await getDb(), actor, { name: body.name });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
