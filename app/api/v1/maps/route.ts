import { createMap } from "@/lib/domain/maps/create";
import { listMapsForActor } from "@/lib/domain/maps/read";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * GET /api/v1/maps?q=&status=&attention=&workflow=&archived= → `{"maps": [{id, workflow, title, version, status,
 * updated_at, progress: {total, custodians_named, verified, failed, decided}, recommendation, exercises,
 * archived_at}]}` — the tenant's custody maps by workflow. `q`: part of the workflow or title; `status`: draft |
 * published; `attention`: failed | undecided | evidence_requested | unverified; `workflow`: one workflow exactly;
 * `archived`: exclude (default: archived maps are hidden) | include | only. Any signed-in role.
 * Errors: 400 (status, attention, archived), 401, 403 (runtime key).
 *
 * POST /api/v1/maps `{"workflow", "title"}` → the new draft `{id, workflow, title, version: 1, status: "draft",
 * layers: [eight rows], summary, progress, versions: []}`. Owners and admins. Errors: 401, 403, 422 (field named).
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const url = new URL(req.url);
  return listMapsForActor(ctx, {
    q: url.searchParams.get("q"),
    status: url.searchParams.get("status"),
    attention: url.searchParams.get("attention"),
    workflow: url.searchParams.get("workflow"),
    archived: url.searchParams.get("archived"),
  });
});

export const POST = apiRoute(async ({ req, ctx }) => {
  const body = await readJson(req);
  return createMap(ctx, { body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
