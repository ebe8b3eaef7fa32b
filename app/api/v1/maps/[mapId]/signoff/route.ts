import { signOffMap } from "@/lib/domain/maps/signoff";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/signoff `{version, note?}` → the map, its latest published version signed off by the caller
 * (recorded with who and when, audited). Owners, admins and approvers who did not make the version's last change
 * (decision 0046).
 * Errors: 400, 401, 403 (`forbidden`: role; `signoff_by_last_editor`: the caller edited it last), 404 (map, or a
 * version never published), 409 (`already_signed_off`; `conflict`: a newer version was published), 422.
 */
export const POST = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return signOffMap(ctx, { mapId: params.mapId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
