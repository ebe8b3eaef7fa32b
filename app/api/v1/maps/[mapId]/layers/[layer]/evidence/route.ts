import { addEvidenceItem } from "@/lib/domain/maps/layer-work";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/layers/{layer}/evidence `{kind: exercise|task|bundle|document, ref, note?}` → the evidence
 * item as stored `{id, layer, kind, ref, note, added_by, added_at}`; audited. Owners and admins (decision 0046).
 * Errors: 400, 401, 403, 404 (map or layer), 422 (naming `ref`: an id not found in this workspace, a link that is not
 * http(s), or too many items).
 */
export const POST = apiRoute<{ mapId: string; layer: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return addEvidenceItem(ctx, { mapId: params.mapId, layerName: params.layer, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
