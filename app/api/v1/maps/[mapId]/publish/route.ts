import { publishMap } from "@/lib/domain/maps/publish";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/publish (no body, or `{}`) → the map, now `published`, with the frozen version listed in
 * `versions`. The next row change starts a new draft at version + 1. Owners and admins.
 * Errors: 401, 403, 404, 409 (already published and unchanged since), 422 (a body with fields).
 */
export const POST = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return publishMap(ctx, { mapId: params.mapId });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
