import { switchWorkspace } from "@/lib/domain/tenancy/account";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * PUT /api/v1/me/workspace body `{"workspace": "<slug>"}` → `{tenant_id, slug, name, role, current: true}`: the session
 * works in that workspace from the next request on. Sessions only (403 for a runtime key); 404 when the person is
 * not an active member of a workspace with that slug; 422 naming the field.
 */
export const PUT = apiRoute(async ({ req, ctx }) => switchWorkspace(ctx, { body: await readJson(req) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PATCH, DELETE, OPTIONS } = otherMethods("PUT");
