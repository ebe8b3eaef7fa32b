import { withSigningKey } from "@/lib/server/verb-context";
import { getExerciseView } from "@/lib/domain/exercises/read";
import { updateExercise } from "@/lib/domain/exercises/update";
import { apiRoute, otherMethods, readJson } from "@/lib/server/route";

/**
 * GET /api/v1/maps/{id}/exercises/{exerciseId} → the exercise `{id, map_id, interruption_point, layers, steps: [six
 * {step, status, task_id, artifact_digest, event_id, note}], status, outcome, finding, revision, …}` with its `map`
 * and `linked_tasks` (per linked task: checkpoints, unknown side effects, artifacts, gate verdict, revocation checks —
 * suggested evidence). Any signed-in role. Errors: 401, 403, 404.
 *
 * PATCH /api/v1/maps/{id}/exercises/{exerciseId} — any of `interruption_point`, `layers`, `steps` (`event_id`
 * optional: an event of the step's task), `outcome`, `finding`, with the `revision` it was based on → the exercise.
 * Owners and admins. Errors: 401, 403, 404, 409 (completed, or a stale revision: both versions in `details`), 422
 * (field path, e.g. `steps.2.task_id`, `steps.5.event_id`).
 */
export const GET = apiRoute<{ mapId: string; exerciseId: string }>(async ({ ctx, params }) =>
  getExerciseView(withSigningKey(ctx), { mapId: params.mapId, exerciseId: params.exerciseId }),
);

export const PATCH = apiRoute<{ mapId: string; exerciseId: string }>(async ({ req, ctx, params }) => {
  const body = await readJson(req);
  return updateExercise(ctx, { mapId: params.mapId, exerciseId: params.exerciseId, body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, DELETE, OPTIONS } = otherMethods("GET", "PATCH");
