import { exportExerciseStep } from "@/lib/domain/exercises/export-step";
import { apiRoute, otherMethods } from "@/lib/server/route";
import { withSigningKey } from "@/lib/server/verb-context";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/maps/{id}/exercises/{exerciseId}/export (no body) → `{exercise, first_failure}`: the server builds the
 * evidence bundle of the task linked to the exercise's "retrieve the result and export" step, verifies it offline-style,
 * records it (its sha256 can then be linked on the map's Export or Artifacts layer) and writes `bundle_digest` and
 * `bundle_verified` into the step (decision 0038). Owners and admins.
 * Errors: 401, 403, 404 (map, exercise; another tenant's), 409 (completed, or changed meanwhile), 422 (the step links
 * no task, `details.fields[0].path` `steps.<n>.task_id`).
 */
export const POST = apiRoute<{ mapId: string; exerciseId: string }>(async ({ ctx, params }) =>
  exportExerciseStep(withSigningKey(ctx), { mapId: params.mapId, exerciseId: params.exerciseId }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
