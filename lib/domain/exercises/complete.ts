/**
 * `POST /api/v1/maps/{id}/exercises/{exerciseId}/complete` — records the outcome of an exercise and writes its
 * result into the map, layer by layer as {@link layerResults} decides: a covered layer turns `verified` only when the
 * steps that exercise it passed with evidence of their own ("Test revocation": the revocation check it links answered
 * revoked), `failed` when one of them was not as expected (or all passed and the outcome is `unsafe`), and is left as
 * it was when a step could not be done or carries no evidence. A layer it sets links the exercise as evidence
 * (`{kind: "exercise", ref: <id>}`, a link back, the note naming the steps). Those rows get a
 * new revision, so anyone editing them meanwhile meets a 409 rather than losing the result. Decisions are left to
 * people; the worksheet suggests `constrain` on a failed layer. A published map starts a new draft. One
 * transaction: map row locked, guarded exercise update (`WHERE status = 'in_progress' AND revision = $n`), row
 * writes, audit row.
 */
import * as q from "@/db/queries/maps";
import type { ExerciseJson, ExerciseOutcome, LayerRow } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { checkExerciseId, checkMapId, fieldsOf, layerRow, looksLikeSecret, SECRET_MESSAGE } from "../maps/shape";
import { exerciseJson } from "./read";
import { completeExerciseSchema, completionIssues, OUTCOME_GUIDE } from "./rules";
import { layerResults, type LayerResult } from "./guide";
import { revocationChecks } from "../policies/revocation";
import type { VerbContext } from "../context";

export type CompleteResult = {
  exercise: ExerciseJson;
  /** The rows the exercise set, as stored now. */
  layers: LayerRow[];
  /** What the exercise did to each covered layer, and why (a layer with `verification: null` was left as it was). */
  results: LayerResult[];
  map: { id: string; version: number; status: "draft" | "published"; new_draft: boolean };
};

/** The note kept with the link back: the outcome in words, what the layer's steps showed, and the finding (shortened to fit). */
export function evidenceNote(outcome: ExerciseOutcome, finding: string, why?: string): string {
  const text = `${OUTCOME_GUIDE[outcome].word}: ${finding.trim()}${why ? ` (${why})` : ""}`;
  return [...text].length > 1000 ? `${[...text].slice(0, 999).join("")}…` : text;
}

/**
 * Completes an exercise. body `{"outcome", "finding", "revision"}`.
 * @throws DomainError forbidden, not_found, validation_failed (422 naming what is missing: a step still not done
 *   (`steps.3.status`), no task or digest linked (`steps`), the finding), conflict (409: already completed, or the
 *   revision moved on).
 */
export async function completeExercise(
  { db, actor }: VerbContext,
  { mapId, exerciseId, body }: { mapId: string; exerciseId: string; body: unknown },
): Promise<CompleteResult> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  checkExerciseId(exerciseId);
  const parsed = completeExerciseSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { outcome, finding, revision } = parsed.data;
  if (looksLikeSecret(finding)) throw validationError([{ path: ["finding"], message: SECRET_MESSAGE }]);
  const by = actorRef(actor).label;

  return db.transaction(async (tx) => {
    const map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    const row = await q.findExercise(tx, actor.tenantId, mapId, exerciseId);
    if (!row) throw notFound("Exercise");
    const current = exerciseJson(row);
    if (current.status === "completed") {
      throw new DomainError(
        "conflict",
        `This exercise was already completed at ${current.completed_at} (${current.outcome}); start a new exercise to test again.`,
        { current },
      );
    }
    if (current.revision !== revision) {
      throw new DomainError(
        "conflict",
        `${current.updated_by} saved this exercise at ${current.updated_at} (revision ${current.revision}); you completed revision ${revision}. Check the steps and complete again.`,
        { current },
      );
    }
    const issues = completionIssues({ layers: current.layers, steps: current.steps, outcome, finding });
    if (issues.length) throw validationError(issues);

    const touched = await q.touchMapDraft(tx, actor.tenantId, mapId, actorRef(actor).label);
    const done = await q.completeExerciseGuarded(
      tx,
      actor.tenantId,
      mapId,
      exerciseId,
      { outcome, finding, mapVersion: touched.version },
      revision,
      by,
    );
    if (!done)
      throw new DomainError("conflict", "Someone completed or changed this exercise at the same moment; reload it.");

    // The "Test revocation" step counts only with the revocation check it links (its answer, as the server recorded it).
    const revocation = current.steps.find((s) => s.step === "test_revocation");
    const checks =
      revocation?.task_id && revocation.event_id
        ? await revocationChecks(tx, actor.tenantId, revocation.task_id, 1, revocation.event_id)
        : [];
    const results = layerResults(
      { layers: current.layers, steps: current.steps, outcome },
      (id) => checks.find((c) => c.event_id === id)?.outcome,
    );
    const written: LayerRow[] = [];
    for (const { layer, verification, why } of results) {
      if (verification === null) continue;
      const stored = await q.findLayer(tx, actor.tenantId, mapId, layer);
      if (!stored) continue;
      const evidence = { kind: "exercise" as const, ref: exerciseId, note: evidenceNote(outcome, finding, why) };
      const next = { ...fieldsOf(layerRow(stored)), verification, verification_evidence: evidence };
      const w = await q.updateLayerGuarded(tx, actor.tenantId, mapId, layer, next, stored.revision, by);
      if (!w)
        throw new DomainError(
          "conflict",
          `The ${layer} row changed while the exercise was being completed; complete it again.`,
        );
      written.push(layerRow(w));
    }
    await appendAudit(tx, actor, {
      action: "exercise.completed",
      target: `exercise:${exerciseId}`,
      details: {
        map_id: mapId,
        outcome,
        finding,
        layers: current.layers,
        results: results.map((r) => ({ layer: r.layer, verification: r.verification, why: r.why })),
        map_version: touched.version,
        ...(touched.new_draft ? { new_draft: true } : {}),
      },
    });
    return {
      exercise: exerciseJson(done),
      layers: written,
      results,
      map: { id: mapId, version: touched.version, status: touched.status, new_draft: touched.new_draft },
    };
  });
}
