/**
 * Reading interruption exercises: a map's list, and one exercise with what the product knows about each task
 * linked from its steps — checkpoints (with signature checks), side effects whose outcome is unknown, artifacts,
 * the resume gate's verdict, and the "Test revocation" checks — offered on the page as suggested evidence. The task
 * facts come from the same read verbs the task page uses and from the gate itself ({@link gatherGateFacts} +
 * {@link evaluateGate}).
 */
import type { Db } from "@/db";
import * as q from "@/db/queries/maps";
import type { ExerciseJson, ExerciseListItem, ExerciseView, LinkedTaskFacts } from "@/lib/contract/maps";
import { authorize, type Actor } from "../authz";
import type { SigningKey } from "../crypto/signing";
import { DomainError, notFound } from "../errors";
import { evaluateGate } from "../gate/evaluate";
import { gatherGateFacts } from "../gate/ask";
import { checkExerciseId, checkMapId } from "../maps/shape";
import { revocationChecks } from "../policies/revocation";
import { getArtifacts, getCheckpointHistory, getTaskView } from "../tasks/read";
import type { SigningContext, VerbContext } from "../context";

/** A stored exercise in the API's shape. */
export function exerciseJson(r: q.ExerciseRow): ExerciseJson {
  return {
    id: r.id,
    map_id: r.map_id,
    interruption_point: r.interruption_point,
    layers: r.layers,
    steps: r.steps.map((s) => ({
      step: s.step,
      status: s.status,
      task_id: s.task_id,
      artifact_digest: s.artifact_digest,
      event_id: s.event_id ?? null,
      ...(s.bundle_digest ? { bundle_digest: s.bundle_digest, bundle_verified: s.bundle_verified ?? null } : {}),
      note: s.note,
    })),
    status: r.status,
    outcome: r.outcome,
    finding: r.finding,
    revision: r.revision,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_by: r.updated_by,
    updated_at: r.updated_at,
    completed_at: r.completed_at,
    completed_map_version: r.completed_map_version,
  };
}

/** A map's exercises, newest first. @throws DomainError forbidden, not_found */
export async function listExercisesForActor(
  { db, actor }: VerbContext,
  { mapId }: { mapId: string },
): Promise<{ exercises: ExerciseListItem[] }> {
  authorize(actor, "maps.read");
  checkMapId(mapId);
  if (!(await q.findMap(db, actor.tenantId, mapId))) throw notFound("Custody map");
  const rows = await q.listExercises(db, actor.tenantId, mapId);
  return {
    exercises: rows.map((r) => ({
      id: r.id,
      interruption_point: r.interruption_point,
      layers: r.layers,
      status: r.status,
      outcome: r.outcome,
      finding: r.finding,
      created_at: r.created_at,
      completed_at: r.completed_at,
      updated_at: r.updated_at,
    })),
  };
}

/**
 * What the product knows about one task, or null when the tenant has no such task (any more).
 * @throws DomainError forbidden when the actor may not read tasks or ask the gate.
 */
export async function linkedTaskFacts(
  db: Db,
  actor: Actor,
  taskId: string,
  key: SigningKey,
): Promise<LinkedTaskFacts | null> {
  authorize(actor, "tasks.read");
  authorize(actor, "gate.ask");
  try {
    const view = await getTaskView({ db, actor, signingKey: key }, { taskId });
    const [history, artifacts, facts, checks] = await Promise.all([
      getCheckpointHistory({ db, actor, signingKey: key }, { taskId }),
      getArtifacts({ db, actor }, { taskId }),
      gatherGateFacts(db, actor.tenantId, taskId, key),
      revocationChecks(db, actor.tenantId, taskId),
    ]);
    const gate = evaluateGate(facts);
    const effects = Object.entries(view.side_effects);
    return {
      task_id: view.task_id,
      phase: view.phase,
      current_attempt: view.current_attempt,
      checkpoints: history.checkpoints.map((c) => ({
        version: c.version,
        phase: c.phase,
        digest: c.digest,
        signature_valid: c.signature_valid,
        created_at: c.created_at,
        attempt: c.attempt,
      })),
      unknown_side_effects: effects
        .filter(([, e]) => e.status === "unknown")
        .map(([name, e]) => ({ name, status_reason: e.status_reason })),
      side_effects: effects.map(([name, e]) => ({ name, status: e.status })),
      artifacts: artifacts.map((a) => ({ ref: a.ref, sha256: a.sha256 })),
      gate: { verdict: gate.verdict, reasons: gate.reasons },
      revocation_checks: checks,
    };
  } catch (err) {
    if (err instanceof DomainError && err.code === "not_found") return null;
    throw err;
  }
}

/**
 * One exercise with its map and the facts of every task its steps link (in the order first linked).
 * @throws DomainError forbidden, not_found (no such map or exercise in this tenant, or the exercise is of another map).
 */
export async function getExerciseView(
  { db, actor, signingKey: key }: SigningContext,
  { mapId, exerciseId }: { mapId: string; exerciseId: string },
): Promise<ExerciseView> {
  authorize(actor, "maps.read");
  checkMapId(mapId);
  checkExerciseId(exerciseId);
  const map = await q.findMap(db, actor.tenantId, mapId);
  if (!map) throw notFound("Custody map");
  const row = await q.findExercise(db, actor.tenantId, mapId, exerciseId);
  if (!row) throw notFound("Exercise");
  const ex = exerciseJson(row);
  const taskIds = [...new Set(ex.steps.map((s) => s.task_id).filter((t): t is string => !!t))];
  const linked = (await Promise.all(taskIds.map((t) => linkedTaskFacts(db, actor, t, key)))).filter(
    (f): f is LinkedTaskFacts => f !== null,
  );
  return {
    ...ex,
    map: { id: map.id, workflow: map.workflow, title: map.title, version: map.version, status: map.status },
    linked_tasks: linked,
  };
}
