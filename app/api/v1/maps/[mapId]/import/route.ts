import { importMapVersion } from "@/lib/domain/maps/import";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/import — body: a map's JSON export of the same workflow → this map with the document's
 * eight rows as its next draft (a published map starts version + 1; published versions stay frozen). Owners and
 * admins (decision 0046). Errors: 400, 401, 403, 404, 413, 422 (the document, or another workflow's map; nothing is
 * written).
 */
export const POST = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return importMapVersion(ctx, { mapId: params.mapId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
