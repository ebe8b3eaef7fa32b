/**
 * `POST /api/v1/maps/{id}/signoff` — a named reviewer signs off a published version of a map (the adoption decision
 * it records). Four eyes (decision 0046): the reviewer may not be the version's last editor — the person whose change
 * was the last one to its rows before it was frozen. One guarded `UPDATE … WHERE signed_off_at IS NULL AND
 * last_edited_by IS DISTINCT FROM $me RETURNING` with its audit row in the same transaction.
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

/** The longest sign-off note (characters). */
export const SIGNOFF_NOTE_MAX = 2000;

/** `POST /api/v1/maps/{id}/signoff` body: the published version signed off, and an optional note. */
export const signoffBodySchema = z.strictObject({
  version: z.number({ error: "version is required: the published version you reviewed" }).int().min(1),
  note: text("note", SIGNOFF_NOTE_MAX, { multiline: true }).optional(),
});

/**
 * Signs off the latest published version.
 * @param body `{version, note?}` — `version` must be the latest published one (what the reviewer read).
 * @returns the map view, its `versions` carrying the sign-off (and `signoff` when the map is still at that version).
 * @throws DomainError forbidden (role), not_found (map of another tenant, or a version never published),
 *   validation_failed (body), conflict (409: a newer version was published — review that one),
 *   already_signed_off (409: says by whom and when), signoff_by_last_editor (403: the reviewer made the last change).
 */
export async function signOffMap(
  { db, actor }: VerbContext,
  { mapId, body }: { mapId: string; body: unknown },
): Promise<MapView> {
  authorize(actor, "maps.signoff");
  checkMapId(mapId);
  const parsed = signoffBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const note = parsed.data.note ?? "";
  if (looksLikeSecret(note)) throw validationError([{ path: ["note"], message: SECRET_MESSAGE }]);
  const { version } = parsed.data;
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const map = await q.findMap(tx, actor.tenantId, mapId, { forUpdate: true });
    if (!map) throw notFound("Custody map");
    const versions = await q.listVersions(tx, actor.tenantId, mapId);
    const target = versions.find((v) => v.version === version);
    if (!target) {
      throw new DomainError(
        "not_found",
        `Version ${version} of this map was never published${versions.length ? `; the latest published version is ${versions[0]!.version}` : "; publish the map first, then a reviewer signs it off"}.`,
      );
    }
    if (versions[0]!.version !== version) {
      throw new DomainError(
        "conflict",
        `Version ${version} is no longer the latest published version (${versions[0]!.version} is); review and sign off that one.`,
        { version, latest: versions[0]!.version },
      );
    }
    const signed = await q.signOffVersionGuarded(tx, actor.tenantId, mapId, version, by, note);
    if (!signed) {
      if (target.signed_off_by) {
        throw new DomainError(
          "already_signed_off",
          `Version ${version} was already signed off by ${target.signed_off_by} at ${target.signed_off_at}.`,
          { version, signed_off_by: target.signed_off_by, signed_off_at: target.signed_off_at },
        );
      }
      throw new DomainError(
        "signoff_by_last_editor",
        `You made the last change to version ${version}, so you cannot sign it off: another reviewer (owner, admin or approver) who did not edit it last must.`,
        { version, last_edited_by: target.last_edited_by },
      );
    }
    await appendAudit(tx, actor, {
      action: "map.signoff_recorded",
      target: `map:${mapId}`,
      details: { version, workflow: map.workflow, last_edited_by: target.last_edited_by, ...(note ? { note } : {}) },
    });
    return loadMapView(tx, actor.tenantId, map);
  });
}
