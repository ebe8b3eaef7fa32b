import { importMap } from "@/lib/domain/maps/import";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/import — body: a map's JSON export `{"id"?, "workflow", "title", "version"?, "status"?,
 * "layers": [eight rows in order]}` → a new draft map of this tenant with the document's workflow, title and rows.
 * Owners and admins. Errors: 400 (not JSON), 401, 403, 413, 422 (every problem with its field path, e.g.
 * `layers.2.custodians.0.name`; nothing is written).
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  const body = await readJson(req);
  return importMap(ctx, { body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
