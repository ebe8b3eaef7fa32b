import { exportMap, versionParam } from "@/lib/domain/maps/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/maps/{id}/export?format=md|json&version= → the map as a download (`Content-Disposition:
 * attachment`): `json` is exactly `{id, workflow, title, version, status, layers}` (what POST /api/v1/maps/import
 * takes back), `md` a Markdown document with the adoption summary and the eight layers. Any signed-in role.
 * Errors: 400 (format, version), 401, 403, 404.
 */
export const GET = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const url = new URL(req.url);
  const out = await exportMap(ctx, {
    mapId: params.mapId,
    format: url.searchParams.get("format"),
    version: versionParam(url.searchParams.get("version")),
  });
  return new Response(out.body, {
    headers: {
      "content-type": out.contentType,
      "content-disposition": `attachment; filename="${out.filename}"`,
      "cache-control": "no-store",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
