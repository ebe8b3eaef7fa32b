import { addLayerComment } from "@/lib/domain/maps/layer-work";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/layers/{layer}/comments `{text}` (1–2000 characters) → the comment `{id, layer, author,
 * body, created_at}`; audited. Owners, admins, approvers and responders; viewers read (decision 0046).
 * Errors: 400, 401, 403, 404 (map or layer), 422 (empty, too long, a credential, or too many comments).
 */
export const POST = apiRoute<{ mapId: string; layer: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return addLayerComment(ctx, { mapId: params.mapId, layerName: params.layer, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
