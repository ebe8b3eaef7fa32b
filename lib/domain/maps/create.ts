/**
 * `POST /api/v1/maps` — a workflow owner (or admin) starts a custody map for a workflow: a draft at version 1
 * with the eight rows in the fixed order, each starting from our worksheet text ({@link LAYER_GUIDE}); no
 * custodian named, verification `unknown`, no decision. One transaction with its audit row.
 */
import * as q from "@/db/queries/maps";
import type { MapView } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { validationError } from "../errors";
import { LAYER_GUIDE, MAP_LAYERS } from "./layers";
import { createMapSchema } from "./rules";
import { loadMapView } from "./shape";
import type { VerbContext } from "../context";

/** The rows of a new map: our worksheet text, nothing decided. */
export function defaultLayerValues(): Array<q.LayerValues & { layer: (typeof MAP_LAYERS)[number]; position: number }> {
  return MAP_LAYERS.map((layer, position) => ({
    layer,
    position,
    custodians: [],
    handoff: "",
    evidence: LAYER_GUIDE[layer].evidence,
    recovery_path: LAYER_GUIDE[layer].recoveryPath,
    acceptance_question: LAYER_GUIDE[layer].acceptanceQuestion,
    verification: "unknown",
    verification_evidence: null,
    decision: null,
    decision_note: "",
  }));
}

/**
 * Creates a map. body `{"workflow", "title"}` (typed text, 1–200 characters each).
 * @returns the new draft with its eight rows, summary and progress.
 * @throws DomainError forbidden (not owner/admin, or a runtime key), validation_failed (422 naming the field).
 */
export async function createMap({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<MapView> {
  authorize(actor, "maps.edit");
  const parsed = createMapSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const map = await q.insertMap(tx, actor.tenantId, {
      workflow: parsed.data.workflow,
      title: parsed.data.title,
      createdBy: by,
    });
    await q.insertLayers(tx, actor.tenantId, map.id, defaultLayerValues(), by);
    await appendAudit(tx, actor, {
      action: "map.created",
      target: `map:${map.id}`,
      details: { workflow: map.workflow, title: map.title },
    });
    return loadMapView(tx, actor.tenantId, map);
  });
}
