import { setLayerAssignee } from "@/lib/domain/maps/layer-work";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * PUT /api/v1/maps/{id}/layers/{layer}/assignee `{assignee: email | null}` → `{assignee}`: the member of this
 * workspace who carries the layer, or nobody; audited. Owners and admins (decision 0046).
 * Errors: 400, 401, 403, 404 (map or layer), 422 (not a member of this workspace).
 */
export const PUT = apiRoute<{ mapId: string; layer: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return setLayerAssignee(ctx, { mapId: params.mapId, layerName: params.layer, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PATCH, DELETE, OPTIONS } = otherMethods("PUT");
