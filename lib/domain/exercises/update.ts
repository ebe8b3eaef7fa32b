/**
 * `PATCH /api/v1/maps/{id}/exercises/{exerciseId}` — an owner or admin records progress on an exercise in progress
 * (autosave): the interruption point, the layers covered, the six steps with their status and evidence, a draft
 * outcome and finding. Optimistic concurrency like the map rows: the body names the `revision` it was based on;
 * a stale one answers 409 with both versions. A completed exercise is a record and no longer changes.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import * as q from "@/db/queries/maps";
import { findTask } from "@/db/queries/tasks";
import type { ExerciseJson, ExerciseStepRow } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { canonicalJson } from "../crypto/canonical";
import { DomainError, notFound, validationError, type ValidationIssue } from "../errors";
import { checkExerciseId, checkMapId, looksLikeSecret, SECRET_MESSAGE } from "../maps/shape";
import { exerciseJson } from "./read";
import { updateExerciseSchema } from "./rules";
import type { VerbContext } from "../context";

/** The fields an exercise in progress can change. */
type Draft = Pick<ExerciseJson, "interruption_point" | "layers" | "steps" | "outcome" | "finding">;

/**
 * Changes an exercise in progress.
 * @param body any of `interruption_point`, `layers`, `steps` (all six, in order, each `{step, status, task_id,
 *   artifact_digest, event_id?, note}`; `event_id` is an event of the step's task kept as evidence), `outcome` (null or
 *   one of the four), `finding`, and the `revision` they are based on.
 * @returns the exercise as stored.
 * @throws DomainError forbidden, not_found, validation_failed (422 with the path, e.g. `steps.2.task_id` for a task
 *   this tenant does not have, `steps.5.event_id` for an event that is not the step's task's), conflict (409:
 *   completed already, or the revision moved on — `details.current` and `details.yours` hold both versions).
 */
export async function updateExercise(
  { db, actor }: VerbContext,
  { mapId, exerciseId, body }: { mapId: string; exerciseId: string; body: unknown },
): Promise<ExerciseJson> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  checkExerciseId(exerciseId);
  const parsed = updateExerciseSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { revision, ...patch } = parsed.data;
  const by = actorRef(actor).label;

  return db.transaction(async (tx) => {
    if (!(await q.findMap(tx, actor.tenantId, mapId))) throw notFound("Custody map");
    const row = await q.findExercise(tx, actor.tenantId, mapId, exerciseId);
    if (!row) throw notFound("Exercise");
    const current = exerciseJson(row);
    const next: Draft = {
      interruption_point: patch.interruption_point ?? current.interruption_point,
      layers: patch.layers ?? current.layers,
      // A step's bundle is the server's record (decision 0038): whatever the body says, the stored one stays.
      steps: patch.steps
        ? (patch.steps as ExerciseStepRow[]).map((st, i) => {
            const { bundle_digest: _d, bundle_verified: _v, ...rest } = st;
            const kept = current.steps[i];
            return kept?.bundle_digest
              ? { ...rest, bundle_digest: kept.bundle_digest, bundle_verified: kept.bundle_verified ?? null }
              : rest;
          })
        : current.steps,
      outcome: patch.outcome === undefined ? current.outcome : patch.outcome,
      finding: patch.finding ?? current.finding,
    };
    if (current.status === "completed") {
      throw new DomainError(
        "conflict",
        `This exercise was completed at ${current.completed_at} and is kept as recorded; start a new exercise to test again.`,
        {
          current,
        },
      );
    }
    if (current.revision !== revision) throw stale(current, next, revision);

    const issues: ValidationIssue[] = [];
    for (const [i, s] of next.steps.entries()) {
      if (s.task_id && !(await findTask(tx, actor.tenantId, s.task_id))) {
        issues.push({
          path: ["steps", i, "task_id"],
          message: `no task ${s.task_id} in this workspace; pick one from the search`,
        });
      }
      if (s.event_id && !s.task_id) {
        issues.push({
          path: ["steps", i, "event_id"],
          message: "an event is evidence only with its task: link the task whose event it is",
        });
      } else if (s.event_id && s.task_id && !(await eventOfTask(tx, actor.tenantId, s.task_id, s.event_id))) {
        issues.push({
          path: ["steps", i, "event_id"],
          message: `task ${s.task_id} has no event ${s.event_id}; pick one from the suggestions`,
        });
      }
      if (looksLikeSecret(s.note)) issues.push({ path: ["steps", i, "note"], message: SECRET_MESSAGE });
    }
    if (looksLikeSecret(next.finding)) issues.push({ path: ["finding"], message: SECRET_MESSAGE });
    if (looksLikeSecret(next.interruption_point))
      issues.push({ path: ["interruption_point"], message: SECRET_MESSAGE });
    if (issues.length) throw validationError(issues);

    const before: Draft = {
      interruption_point: current.interruption_point,
      layers: current.layers,
      steps: current.steps,
      outcome: current.outcome,
      finding: current.finding,
    };
    if (canonicalJson(next) === canonicalJson(before)) return current;

    const written = await q.updateExerciseGuarded(
      tx,
      actor.tenantId,
      mapId,
      exerciseId,
      {
        interruptionPoint: next.interruption_point,
        layers: next.layers,
        steps: next.steps,
        finding: next.finding,
        outcome: next.outcome,
      },
      revision,
      by,
    );
    if (!written) {
      const now = await q.findExercise(tx, actor.tenantId, mapId, exerciseId);
      throw stale(now ? exerciseJson(now) : current, next, revision);
    }
    await appendAudit(tx, actor, {
      action: "exercise.updated",
      target: `exercise:${exerciseId}`,
      details: {
        map_id: mapId,
        revision: written.revision,
        fields: (Object.keys(next) as Array<keyof Draft>).filter(
          (k) => canonicalJson(next[k]) !== canonicalJson(before[k]),
        ),
        linked_tasks: [...new Set(next.steps.map((s) => s.task_id).filter(Boolean))],
      },
    });
    return exerciseJson(written);
  });
}

/** True when `eventId` is an event of `taskId` in this tenant (the events' primary key). */
async function eventOfTask(db: Db, tenantId: string, taskId: string, eventId: string): Promise<boolean> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`select 1 as one from events where tenant_id = ${tenantId} and event_id = ${eventId} and task_id = ${taskId}`,
  );
  return rows.length > 0;
}

function stale(current: ExerciseJson, yours: Draft, basedOn: number): DomainError {
  return new DomainError(
    "conflict",
    `${current.updated_by} saved this exercise at ${current.updated_at} (revision ${current.revision}); your change was based on revision ${basedOn}. Nothing was overwritten: compare both versions and save again.`,
    {
      current,
      yours: { ...yours, revision: basedOn },
      current_updated_by: current.updated_by,
      current_updated_at: current.updated_at,
    },
  );
}
