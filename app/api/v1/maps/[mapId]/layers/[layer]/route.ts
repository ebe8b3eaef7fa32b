import { updateLayer } from "@/lib/domain/maps/update-layer";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * PATCH /api/v1/maps/{id}/layers/{layer} — body: any of the row's fields (`custodians`, `handoff`, `evidence`,
 * `recovery_path`, `acceptance_question`, `verification`, `verification_evidence`, `decision`, `decision_note`)
 * and the `revision` it was based on → `{row, map: {id, version, status, new_draft}, summary, progress, changed}`.
 * Owners and admins. Errors: 401, 403, 404 (map, layer), 409 conflict (stale revision: `details.current` and
 * `details.yours` hold both versions), 422 (field path in `details.fields[].path`, e.g. `custodians.0.name`).
 */
export const PATCH = apiRoute<{ mapId: string; layer: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return updateLayer(ctx, { mapId: params.mapId, layerName: params.layer, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, DELETE, OPTIONS } = otherMethods("PATCH");
