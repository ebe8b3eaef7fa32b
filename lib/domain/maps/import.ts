/**
 * `POST /api/v1/maps/import` — takes a map's JSON export back: validated whole (422 with the field path, e.g.
 * `layers.2.custodians.0.name`, writing nothing), then stored as a new draft map of this tenant (its own id,
 * version 1) with the document's workflow, title and eight rows — their revisions included — so exporting the
 * imported map gives back the original document apart from id, version and status. Evidence links are kept as
 * written (they may name tasks or exercises of the workspace the map came from).
 */
import * as q from "@/db/queries/maps";
import type { MapView } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { notFound, validationError, type ValidationIssue } from "../errors";
import { mapImportSchema } from "./rules";
import { checkMapId, looksLikeSecret, loadMapView, SECRET_MESSAGE, secretIssues } from "./shape";
import type { VerbContext } from "../context";

/**
 * Imports a map.
 * @param body the JSON export: `{"id"?, "workflow", "title", "version"?, "status"?, "layers": [eight rows in order]}`.
 * @returns the new draft map.
 * @throws DomainError forbidden, validation_failed (422, every problem with its path).
 */
export async function importMap({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<MapView> {
  authorize(actor, "maps.edit");
  const parsed = mapImportSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const doc = parsed.data;
  const secrets: ValidationIssue[] = doc.layers.flatMap((row, i) => secretIssues(row, ["layers", i]));
  for (const f of ["workflow", "title"] as const) {
    if (looksLikeSecret(doc[f])) secrets.push({ path: [f], message: SECRET_MESSAGE });
  }
  if (secrets.length) throw validationError(secrets);
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const map = await q.insertMap(tx, actor.tenantId, { workflow: doc.workflow, title: doc.title, createdBy: by });
    await q.insertLayers(
      tx,
      actor.tenantId,
      map.id,
      doc.layers.map((row, position) => {
        // Each row keeps its revision as exported, so the round trip gives back the same rows.
        return { ...row, position };
      }),
      by,
    );
    await appendAudit(tx, actor, {
      action: "map.imported",
      target: `map:${map.id}`,
      details: {
        workflow: doc.workflow,
        title: doc.title,
        ...(doc.id ? { source_id: doc.id } : {}),
        ...(doc.version ? { source_version: doc.version } : {}),
      },
    });
    return loadMapView(tx, actor.tenantId, map);
  });
}

/**
 * `POST /api/v1/maps/{id}/import` — takes a map's JSON export as the next version of an existing map of the same
 * workflow (decision 0046), instead of a second map for that workflow: the eight rows are replaced by the document's
 * (validated whole as for {@link importMap}; 422 writing nothing), each row's revision moves on by one, and a
 * published map starts a new draft (version + 1) — the published versions stay as they were frozen. The map keeps
 * its id and title.
 * @returns the map, now a draft with the imported rows.
 * @throws DomainError forbidden, not_found (map of another tenant), validation_failed (422: the document, or its
 *   workflow differs from the map's — naming `workflow`).
 */
export async function importMapVersion(
  { db, actor }: VerbContext,
  { mapId, body }: { mapId: string; body: unknown },
): Promise<MapView> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  const parsed = mapImportSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const doc = parsed.data;
  const secrets: ValidationIssue[] = doc.layers.flatMap((row, i) => secretIssues(row, ["layers", i]));
  if (secrets.length) throw validationError(secrets);
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    if (map.workflow !== doc.workflow) {
      throw validationError([
        {
          path: ["workflow"],
          message: `this document is a map of workflow ${doc.workflow.slice(0, 80)}, not ${map.workflow}; import it as a new map instead`,
        },
      ]);
    }
    const touched = await q.touchMapDraft(tx, actor.tenantId, mapId, by);
    await q.replaceLayers(tx, actor.tenantId, mapId, doc.layers, by);
    await appendAudit(tx, actor, {
      action: "map.version_imported",
      target: `map:${mapId}`,
      details: {
        workflow: map.workflow,
        version: touched.version,
        ...(touched.new_draft ? { new_draft: true } : {}),
        ...(doc.id ? { source_id: doc.id } : {}),
        ...(doc.version ? { source_version: doc.version } : {}),
      },
    });
    const after = await q.findMap(tx, actor.tenantId, mapId);
    return loadMapView(tx, actor.tenantId, after!);
  });
}
