import { createExercise } from "@/lib/domain/exercises/create";
import { listExercisesForActor } from "@/lib/domain/exercises/read";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * GET /api/v1/maps/{id}/exercises → `{"exercises": [{id, interruption_point, layers, status, outcome, finding,
 * created_at, completed_at, updated_at}]}`, newest first. Any signed-in role. Errors: 401, 403, 404.
 *
 * POST /api/v1/maps/{id}/exercises `{"interruption_point", "layers"?}` → the new exercise (in progress, six steps
 * not done). Owners and admins. Errors: 401, 403, 404, 422 (field named).
 */
export const GET = apiRoute<{ mapId: string }>(async ({ ctx, params }) =>
  listExercisesForActor(ctx, { mapId: params.mapId }),
);

export const POST = apiRoute<{ mapId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return createExercise(ctx, { mapId: params.mapId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
