/**
 * `POST /api/v1/maps/{id}/publish` — freezes the current draft as a published version: the map JSON is stored as
 * it is (`custody_map_versions`), and the map's status becomes `published`. The next change to any row starts a
 * new draft at version + 1 (lib/domain/maps/update-layer.ts), so a published version never changes. The map row
 * is locked and moved with a guarded `UPDATE … WHERE status = 'draft'`, so two publishes cannot both succeed.
 */
import * as q from "@/db/queries/maps";
import type { MapView } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { checkMapId, loadMapView, mapJson } from "./shape";
import type { VerbContext } from "../context";

/**
 * Publishes the draft.
 * @returns the map view, now `published`, with the new version listed first in `versions`.
 * @throws DomainError forbidden, not_found, conflict (409: already published and unchanged since — says which
 *   version and when).
 */
export async function publishMap({ db, actor }: VerbContext, { mapId }: { mapId: string }): Promise<MapView> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    const version = await q.markPublished(tx, actor.tenantId, mapId);
    if (version === undefined) {
      const [latest] = await q.listVersions(tx, actor.tenantId, mapId);
      throw new DomainError(
        "conflict",
        `Version ${map.version} is already published${latest ? ` (by ${latest.published_by} at ${latest.published_at})` : ""} and nothing changed since; edit a row to start a new draft.`,
        { version: map.version, status: map.status },
      );
    }
    const layers = await q.listLayers(tx, actor.tenantId, mapId);
    const snapshot = mapJson({ ...map, version, status: "published" }, layers);
    await q.insertVersion(tx, actor.tenantId, mapId, version, snapshot, by, map.last_edited_by ?? map.created_by);
    await appendAudit(tx, actor, {
      action: "map.published",
      target: `map:${mapId}`,
      details: { version, workflow: map.workflow },
    });
    const after = await q.findMap(tx, actor.tenantId, mapId);
    return loadMapView(tx, actor.tenantId, after!);
  });
}
