/**
 * `PATCH /api/v1/maps/{id}` — an owner or admin renames a map or archives it (or brings it back). An archived map
 * keeps everything (rows, versions, sign-offs, exercises) and still opens by its address; the list hides it unless
 * asked for (decision 0046). Each change is one guarded write with its audit row in the same transaction.
 */
import { z } from "zod";
import * as q from "@/db/queries/maps";
import type { MapView } from "@/lib/contract/maps";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { checkMapId, loadMapView, looksLikeSecret, SECRET_MESSAGE } from "./shape";
import { text } from "./rules";
import type { VerbContext } from "../context";

/** `PATCH /api/v1/maps/{id}` body: a new title, and/or whether the map is archived. */
export const mapPatchSchema = z
  .strictObject({
    title: text("title", 200)
      .refine((v) => v.length > 0, "title cannot be empty")
      .optional(),
    archived: z.boolean({ error: "archived must be true or false" }).optional(),
  })
  .refine((b) => b.title !== undefined || b.archived !== undefined, {
    message: "send title (to rename) or archived (true to archive, false to bring back)",
    path: ["title"],
  });

/**
 * Renames and/or archives a map.
 * @returns the map view after the change.
 * @throws DomainError forbidden, not_found, validation_failed, conflict (409: already archived, or not archived).
 */
export async function updateMap(
  { db, actor }: VerbContext,
  { mapId, body }: { mapId: string; body: unknown },
): Promise<MapView> {
  authorize(actor, "maps.edit");
  checkMapId(mapId);
  const parsed = mapPatchSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { title, archived } = parsed.data;
  if (title !== undefined && looksLikeSecret(title))
    throw validationError([{ path: ["title"], message: SECRET_MESSAGE }]);
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    let map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    if (title !== undefined && title !== map.title) {
      const from = map.title;
      map = (await q.renameMap(tx, actor.tenantId, mapId, title))!;
      await appendAudit(tx, actor, {
        action: "map.renamed",
        target: `map:${mapId}`,
        details: { from, to: title, workflow: map.workflow },
      });
    }
    if (archived !== undefined) {
      const next = await q.setMapArchivedGuarded(tx, actor.tenantId, mapId, archived ? by : null);
      if (!next) {
        throw new DomainError(
          "conflict",
          archived
            ? `This map was already archived by ${map.archived_by} at ${map.archived_at}.`
            : "This map is not archived.",
          { archived: map.archived_at !== null },
        );
      }
      map = next;
      await appendAudit(tx, actor, {
        action: archived ? "map.archived" : "map.unarchived",
        target: `map:${mapId}`,
        details: { workflow: map.workflow, title: map.title },
      });
    }
    return loadMapView(tx, actor.tenantId, map);
  });
}
