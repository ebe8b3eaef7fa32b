import { removeEvidenceItem } from "@/lib/domain/maps/layer-work";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * DELETE /api/v1/maps/{id}/layers/{layer}/evidence/{evidenceId} → `{removed: item}`; audited. Owners and admins
 * (decision 0046). Errors: 401, 403, 404 (map, layer or item), 422 (a body with fields).
 */
export const DELETE = apiRoute<{ mapId: string; layer: string; evidenceId: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return removeEvidenceItem(ctx, { mapId: params.mapId, layerName: params.layer, evidenceId: params.evidenceId });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods("DELETE");
