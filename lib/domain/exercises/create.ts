/**
 * `POST /api/v1/maps/{id}/exercises` — an owner or admin starts an interruption exercise on a map: the
 * interruption point, the layers it covers and six steps not done yet. Without `layers`, it covers what its point can
 * test: for a point of the demo runtime, the layers lib/demo/interruption-points.ts `POINT_LAYERS` names (never
 * Compaction, which the demo runtime does not do); for another point, every layer a step exercises.
 * One transaction with its audit row.
 */
import * as q from "@/db/queries/maps";
import type { ExerciseJson } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { notFound, validationError } from "../errors";
import { checkMapId, looksLikeSecret, SECRET_MESSAGE } from "../maps/shape";
import { exerciseJson } from "./read";
import { createExerciseSchema, defaultLayers, emptySteps } from "./rules";
import { isCrashPoint, POINT_LAYERS } from "@/lib/demo/interruption-points";
import type { VerbContext } from "../context";

/**
 * Starts an exercise. body `{"interruption_point", "layers"?: [layer…]}`.
 * @returns the new exercise (status in_progress, revision 1).
 * @throws DomainError forbidden, not_found (map), validation_failed (422 naming the field).
 */
export async function createExercise(
  { db, actor }: VerbContext,
  { mapId, body }: { mapId: string; body: unknown },
): Promise<ExerciseJson> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  const parsed = createExerciseSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  if (looksLikeSecret(parsed.data.interruption_point))
    throw validationError([{ path: ["interruption_point"], message: SECRET_MESSAGE }]);
  const point = parsed.data.interruption_point;
  const layers = parsed.data.layers ?? (isCrashPoint(point) ? [...POINT_LAYERS[point].tests] : defaultLayers());
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    if (!(await q.findMap(tx, actor.tenantId, mapId))) throw notFound("Custody map");
    const row = await q.insertExercise(tx, actor.tenantId, {
      mapId,
      interruptionPoint: parsed.data.interruption_point,
      layers,
      steps: emptySteps(),
      by,
    });
    await appendAudit(tx, actor, {
      action: "exercise.created",
      target: `exercise:${row.id}`,
      details: { map_id: mapId, interruption_point: row.interruption_point, layers },
    });
    return exerciseJson(row);
  });
}
