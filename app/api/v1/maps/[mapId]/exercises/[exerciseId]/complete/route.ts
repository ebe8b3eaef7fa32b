import { completeExercise } from "@/lib/domain/exercises/complete";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * POST /api/v1/maps/{id}/exercises/{exerciseId}/complete `{"outcome", "finding", "revision"}` → `{exercise, layers,
 * map}`: the exercise completed, and the covered layers as now stored (verification `verified`, or `failed` for an
 * `unsafe` outcome, with the exercise linked as evidence). Owners and admins. Errors: 401, 403, 404, 409 (already
 * completed, stale revision), 422 (what is missing, with its path: a step not done, no task linked, the finding).
 */
export const POST = apiRoute<{ mapId: string; exerciseId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return completeExercise(ctx, { mapId: params.mapId, exerciseId: params.exerciseId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
