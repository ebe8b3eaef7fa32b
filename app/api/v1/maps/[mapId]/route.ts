import { updateMap } from "@/lib/domain/maps/manage";
import { getMapView, versionParam } from "@/lib/domain/maps/read";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * GET /api/v1/maps/{id}?version= → `{id, workflow, title, version, status, signoff?, layers: [eight rows], summary,
 * progress, versions: [{version, published_at, published_by, last_edited_by, signed_off_by, signed_off_at,
 * signoff_note}], created_by, updated_at, last_edited_by, archived_at, archived_by, work: {<layer>: {assignee,
 * evidence_items, comments}}}` — the current draft (or latest published version), or with `version` that published
 * version as frozen. Any signed-in role.
 * Errors: 400 (version), 401, 403 (runtime key), 404 (another tenant's map, or a version never published).
 */
export const GET = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const version = versionParam(new URL(req.url).searchParams.get("version"));
  return getMapView(ctx, { mapId: params.mapId, version });
});

/**
 * PATCH /api/v1/maps/{id} `{title?, archived?}` → the map after renaming and/or archiving (true) or bringing it back
 * (false); audited. Owners and admins (decision 0046).
 * Errors: 400, 401, 403, 404, 409 (already archived / not archived), 422 (empty title, neither field).
 */
export const PATCH = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return updateMap(ctx, { mapId: params.mapId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, DELETE, OPTIONS } = otherMethods("GET", "PATCH");
