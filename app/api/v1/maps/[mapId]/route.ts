import { getMapView, versionParam } from "@/lib/domain/maps/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/maps/{id}?version= → `{id, workflow, title, version, status, layers: [eight rows], summary, progress,
 * versions: [{version, published_at, published_by}], created_by, updated_at}` — the current draft (or latest
 * published version), or with `version` that published version as frozen. Any signed-in role.
 * Errors: 400 (version), 401, 403 (runtime key), 404 (another tenant's map, or a version never published).
 */
export const GET = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const version = versionParam(new URL(req.url).searchParams.get("version"));
  return getMapView(ctx, { mapId: params.mapId, version });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
