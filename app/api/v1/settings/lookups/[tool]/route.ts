import { deleteLookup, upsertLookup } from "@/lib/domain/settings/lookups";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/** PUT /api/v1/settings/lookups/{tool} body `{"url", "timeout_ms"?}` → the lookup. Owners and admins; 422 on a bad url. */
export const PUT = apiRoute<{ tool: string }>(async ({ req, ctx, params }) =>
  upsertLookup(ctx, { tool: params.tool, body: await readJson(req) }),
);

/** DELETE /api/v1/settings/lookups/{tool} → `{"deleted": true}`. Owners and admins; 404 when none. */
export const DELETE = apiRoute<{ tool: string }>(async ({ ctx, params }) => {
  await deleteLookup(ctx, { tool: params.tool });
  return { deleted: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PATCH, OPTIONS } = otherMethods("PUT", "DELETE");
