/**
 * `POST /api/v1/maps/{id}/exercises/{exerciseId}/export` — the interruption exercise's "retrieve the result and export"
 * step made real (decision 0038): the server builds the evidence bundle of the task that step links, runs the offline
 * verifier on it, records the bundle (sha256, size, result) in `export_bundles` — so the map's Export and Artifacts
 * layers can link it — and writes its digest and result into the step.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import * as q from "@/db/queries/maps";
import type { ExerciseJson } from "@/lib/contract/maps";
import { openTaskExport } from "@/lib/export/task-bundle";
import { verifyBundle } from "@/lib/export/verify";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { SigningContext } from "../context";
import { DomainError, notFound, validationError } from "../errors";
import { recordBundle } from "../export/bundles";
import { checkExerciseId, checkMapId } from "../maps/shape";
import { exerciseJson } from "./read";

const STEP = "retrieve_and_export";

/**
 * Exports and verifies the bundle of the task linked to the exercise's export step.
 * @returns the exercise as stored (the step carries `bundle_digest` and `bundle_verified`) and the verifier's first
 *   failure (null when every check passed).
 * @throws DomainError forbidden (not owner/admin), not_found (map, exercise), validation_failed (422 at
 *   `steps.<n>.task_id`: the step links no task), conflict (409: the exercise is completed, or changed meanwhile).
 */
export async function exportExerciseStep(
  ctx: SigningContext,
  { mapId, exerciseId }: { mapId: string; exerciseId: string },
): Promise<{ exercise: ExerciseJson; first_failure: unknown }> {
  const { db, actor } = ctx;
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  checkExerciseId(exerciseId);
  const row = await q.findExercise(db, actor.tenantId, mapId, exerciseId);
  if (!row) throw notFound("Exercise");
  const current = exerciseJson(row);
  if (current.status === "completed") {
    throw new DomainError("conflict", "This exercise is completed and kept as recorded; start a new exercise.");
  }
  const index = current.steps.findIndex((s) => s.step === STEP);
  const taskId = index >= 0 ? current.steps[index]!.task_id : null;
  if (!taskId) {
    throw validationError([
      {
        path: ["steps", Math.max(index, 0), "task_id"],
        message: "link the task whose result to export to this step first",
      },
    ]);
  }

  const out = await openTaskExport(ctx, { taskId });
  const chunks: Buffer[] = [];
  for await (const c of out.stream) chunks.push(Buffer.from(c as Uint8Array));
  const bytes = new Uint8Array(Buffer.concat(chunks));
  const digest = createHash("sha256").update(bytes).digest("hex");
  const report = await verifyBundle(bytes);
  const by = actorRef(actor).label;
  const failure = report.first_failure ? `${report.first_failure.check}: ${report.first_failure.message}` : null;

  await db.transaction(async (tx) => {
    await recordBundle(tx, actor.tenantId, {
      digest,
      scope: "task",
      task_id: taskId,
      size_bytes: bytes.length,
      verification: { ok: report.ok, checks: report.checks.length, first_failure: failure },
      created_by: by,
    });
    const steps = current.steps.map((s, i) =>
      i === index ? { ...s, bundle_digest: digest, bundle_verified: report.ok } : s,
    );
    const written = await queryRows(
      tx,
      sql`update custody_exercises set steps = ${JSON.stringify(steps)}::jsonb, revision = revision + 1,
                 updated_by = ${by}, updated_at = now()
          where tenant_id = ${actor.tenantId} and map_id = ${mapId}::uuid and id = ${exerciseId}::uuid
            and revision = ${current.revision} and status = 'in_progress'
          returning 1`,
    );
    if (!written.length)
      throw new DomainError("conflict", "The exercise changed meanwhile; reload it and export again.");
    await appendAudit(tx, actor, {
      action: "exercise.updated",
      target: `map:${mapId}/exercise/${exerciseId}`,
      details: { step: STEP, task_id: taskId, bundle_digest: digest, bundle_verified: report.ok },
    });
  });
  const after = await q.findExercise(db, actor.tenantId, mapId, exerciseId);
  return { exercise: exerciseJson(after!), first_failure: report.first_failure };
}
