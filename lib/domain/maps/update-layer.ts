/**
 * `PATCH /api/v1/maps/{id}/layers/{layer}` — an owner or admin changes one row of a custody map (autosave sends
 * each change). Optimistic concurrency: the body names the row's `revision` it was based on; the write is one
 * guarded `UPDATE … WHERE revision = $expected RETURNING`, so of two people editing the same row the second
 * gets 409 with both versions and nothing is overwritten. Editing a published map starts a new draft
 * (version + 1). The map row is locked first, so row writes, exercise results and publishing never interleave.
 */
import type { Db } from "@/db";
import { findTask } from "@/db/queries/tasks";
import * as q from "@/db/queries/maps";
import type { AdoptionSummary, LayerConflictDetails, LayerRow, MapProgress, MapStatus } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { canonicalJson } from "../crypto/canonical";
import { DomainError, notFound, validationError } from "../errors";
import { layerPatchSchema, layerRowIssues, type LayerFields } from "./rules";
import { BUNDLE_LAYERS } from "./layers";
import { checkLayer, checkMapId, fieldsOf, layerRow, refuseSecrets } from "./shape";
import { adoptionSummary, mapProgress } from "./summary";
import { findBundle } from "@/lib/domain/export/bundles";
import type { VerbContext } from "../context";

export type LayerUpdateResult = {
  row: LayerRow;
  map: { id: string; version: number; status: MapStatus; new_draft: boolean };
  summary: AdoptionSummary;
  progress: MapProgress;
  /** False when the change equalled the stored row: nothing was written (no new revision, no audit row). */
  changed: boolean;
};

/**
 * Changes a row.
 * @param body any of the row's fields (`custodians`, `handoff`, `evidence`, `recovery_path`, `acceptance_question`,
 *   `verification`, `verification_evidence`, `decision`, `decision_note`) and the `revision` they are based on.
 *   The row as it would be after the change must satisfy every rule of lib/domain/maps/rules.ts.
 * @returns the row as stored (with its new revision), the map's version and status, and the new summary.
 * @throws DomainError forbidden (not owner/admin), not_found (map of another tenant, unknown layer),
 *   validation_failed (422, `details.fields[].path` e.g. `custodians.0.name`), conflict (409: the revision moved
 *   on; `details` = {@link LayerConflictDetails}).
 */
export async function updateLayer(
  { db, actor }: VerbContext,
  { mapId, layerName, body }: { mapId: string; layerName: string; body: unknown },
): Promise<LayerUpdateResult> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  const layer = checkLayer(layerName);
  const parsed = layerPatchSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { revision, layer: named, ...patch } = parsed.data;
  if (named !== undefined && named !== layer) {
    throw validationError([
      {
        path: ["layer"],
        message: `this request changes ${layer}, but the body names ${named}; send it to /layers/${named}`,
      },
    ]);
  }
  const by = actorRef(actor).label;

  return db.transaction(async (tx) => {
    const map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    const stored = await q.findLayer(tx, actor.tenantId, mapId, layer);
    if (!stored) throw notFound(`Layer ${layer}`);
    const current = layerRow(stored);
    const next: LayerFields = { ...fieldsOf(current), ...definedOnly(patch) };

    if (current.revision !== revision) throw staleRevision(layer, stored, next, revision);

    const issues = layerRowIssues(next);
    if (issues.length) throw validationError(issues);
    refuseSecrets(next);
    await checkEvidenceExists(tx, actor.tenantId, mapId, next);
    next.verification_evidence = await withBundleResult(tx, actor.tenantId, layer, next);

    if (canonicalJson(next) === canonicalJson(fieldsOf(current))) {
      const rows = (await q.listLayers(tx, actor.tenantId, mapId)).map(layerRow);
      return {
        row: current,
        map: { id: map.id, version: map.version, status: map.status, new_draft: false },
        summary: adoptionSummary(rows),
        progress: mapProgress(rows),
        changed: false,
      };
    }

    const touched = await q.touchMapDraft(tx, actor.tenantId, mapId, actorRef(actor).label);
    const written = await q.updateLayerGuarded(tx, actor.tenantId, mapId, layer, next, revision, by);
    if (!written) {
      const now = await q.findLayer(tx, actor.tenantId, mapId, layer);
      throw staleRevision(layer, now ?? stored, next, revision);
    }
    const changedFields = (Object.keys(next) as Array<keyof LayerFields>).filter(
      (k) => canonicalJson(next[k] ?? null) !== canonicalJson(fieldsOf(current)[k] ?? null),
    );
    await appendAudit(tx, actor, {
      action: "map_layer.updated",
      target: `map:${mapId}/layer/${layer}`,
      details: {
        layer,
        fields: changedFields,
        revision: written.revision,
        map_version: touched.version,
        ...(touched.new_draft ? { new_draft: true } : {}),
        ...(changedFields.includes("verification") ? { verification: next.verification } : {}),
        ...(changedFields.includes("decision") ? { decision: next.decision } : {}),
      },
    });
    const rows = (await q.listLayers(tx, actor.tenantId, mapId)).map(layerRow);
    return {
      row: layerRow(written),
      map: { id: map.id, version: touched.version, status: touched.status, new_draft: touched.new_draft },
      summary: adoptionSummary(rows),
      progress: mapProgress(rows),
      changed: true,
    };
  });
}

/** The patch without the fields it leaves out. */
function definedOnly<T extends Record<string, unknown>>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The 409 of a stale revision: both versions, and who wrote the current one when. */
function staleRevision(
  layer: LayerRow["layer"],
  stored: q.LayerDbRow,
  yours: LayerFields,
  basedOn: number,
): DomainError {
  const details: LayerConflictDetails = {
    layer,
    current: layerRow(stored),
    yours: { layer, ...yours, revision: basedOn },
    current_updated_by: stored.updated_by,
    current_updated_at: stored.updated_at,
  };
  return new DomainError(
    "conflict",
    `${stored.updated_by} saved this row at ${stored.updated_at} (revision ${stored.revision}); your change was based on revision ${basedOn}. Nothing was overwritten: compare both versions and save again.`,
    details,
  );
}

/**
 * Evidence a row links to must exist in this tenant: a task id the product knows, an exercise of this map.
 * (Artifact digests and document references may point outside the product.)
 * @throws DomainError validation_failed naming verification_evidence.ref
 */
async function checkEvidenceExists(tx: Db, tenantId: string, mapId: string, row: LayerFields): Promise<void> {
  const e = row.verification_evidence;
  if (!e) return;
  if (e.kind === "task" && !(await findTask(tx, tenantId, e.ref))) {
    throw validationError([
      {
        path: ["verification_evidence", "ref"],
        message: `no task ${e.ref} in this workspace; pick a task the product knows (search under Tasks)`,
      },
    ]);
  }
  if (e.kind === "exercise" && !(await q.findExercise(tx, tenantId, mapId, e.ref))) {
    throw validationError([
      {
        path: ["verification_evidence", "ref"],
        message: `no exercise ${e.ref} on this map; link an exercise recorded for it`,
      },
    ]);
  }
}

/**
 * A bundle linked as evidence (decision 0038): only on the artifacts and export layers, only a bundle this server
 * recorded (an exercise's export step, Settings → Export), and its verification result is the server's record, never
 * what the body said. A layer marked `verified` cannot rest on a bundle that failed verification.
 * @returns the evidence with `bundle_verified` filled in (other kinds unchanged).
 * @throws DomainError validation_failed naming verification_evidence.kind, .ref or verification.
 */
async function withBundleResult(
  tx: Db,
  tenantId: string,
  layer: LayerRow["layer"],
  row: LayerFields,
): Promise<LayerFields["verification_evidence"]> {
  const e = row.verification_evidence;
  if (!e || e.kind !== "bundle") return e;
  if (!(BUNDLE_LAYERS as readonly string[]).includes(layer)) {
    throw validationError([
      {
        path: ["verification_evidence", "kind"],
        message: `a bundle can be linked as evidence on the ${BUNDLE_LAYERS.join(" and ")} layers, not on ${layer}`,
      },
    ]);
  }
  const bundle = await findBundle(tx, tenantId, e.ref);
  if (!bundle) {
    throw validationError([
      {
        path: ["verification_evidence", "ref"],
        message: `no bundle ${e.ref} was exported and verified in this workspace; export one under Settings → Export or from an exercise's export step`,
      },
    ]);
  }
  if (row.verification === "verified" && bundle.verification.ok === false) {
    throw validationError([
      {
        path: ["verification"],
        message: `bundle ${e.ref} failed verification (${bundle.verification.first_failure ?? "a check failed"}); it can only back a failed verification`,
      },
    ]);
  }
  if (row.verification === "verified" && bundle.verification.ok === null) {
    throw validationError([
      {
        path: ["verification"],
        message: `bundle ${e.ref} was exported but not verified by this server; check it with npx run-custody verify, then record the layer's verification`,
      },
    ]);
  }
  return { ...e, bundle_verified: bundle.verification.ok };
}
