/**
 * The work around one layer's row (decision 0046): several evidence items (an exercise of this map, a task, a
 * bundle this server exported, an http(s) document link — each checked to exist in this workspace), the member who
 * carries the layer (its assignee), and comments. None of it changes the row or starts a new draft: a published
 * version freezes the decision, the work goes on around it. Each write is one statement with its audit row in the
 * same transaction; the map row is locked first, so writes to one map never interleave.
 */
import { z } from "zod";
import type { Db } from "@/db";
import { findTask } from "@/db/queries/tasks";
import * as q from "@/db/queries/maps";
import { EVIDENCE_ITEM_KINDS } from "@/db/schema/map-vocabulary";
import type { EvidenceItem, LayerComment, LayerWork } from "@/lib/contract/maps";
import { findBundle } from "@/lib/domain/export/bundles";
import { appendAudit } from "../audit/append";
import { actorRef, authorize, type Action } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { LIMITS, SHA256_HEX, text } from "./rules";
import { checkLayer, checkMapId, looksLikeSecret, SECRET_MESSAGE } from "./shape";
import type { MapLayer } from "./layers";
import type { VerbContext } from "../context";

/** At most this many evidence items and comments per layer. */
export const MAX_EVIDENCE_ITEMS = 20;
export const MAX_COMMENTS = 200;
/** The longest comment (characters). */
export const COMMENT_MAX = 2000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `POST …/layers/{layer}/evidence` body. */
export const evidenceItemBodySchema = z.strictObject({
  kind: z.enum(EVIDENCE_ITEM_KINDS, { error: `kind must be one of ${EVIDENCE_ITEM_KINDS.join(", ")}` }),
  ref: text("ref", LIMITS.evidenceRef).refine((v) => v.length > 0, "ref is required: the id, digest or link"),
  note: text("note", LIMITS.evidenceNote).optional(),
});

/** `PUT …/layers/{layer}/assignee` body: a member's email, or null for nobody. */
export const assigneeBodySchema = z.strictObject({
  assignee: z.union([z.string().trim().max(320), z.null()], {
    error: "assignee must be a member's email, or null",
  }),
});

/** `POST …/layers/{layer}/comments` body. */
export const commentBodySchema = z.strictObject({
  text: text("text", COMMENT_MAX, { multiline: true }).refine((v) => v.length > 0, "text is required"),
});

/** Locks the map of this tenant and checks the layer name. @throws DomainError not_found */
async function lockMap(tx: Db, tenantId: string, mapId: string) {
  const map = await q.findMap(tx, tenantId, mapId, { forUpdate: true });
  if (!map) throw notFound("Custody map");
  return map;
}

function start(actor: VerbContext["actor"], action: Action, mapId: string, layerName: string): MapLayer {
  authorize(actor, action);
  checkMapId(mapId);
  return checkLayer(layerName);
}

const refIssue = (message: string) => validationError([{ path: ["ref"], message }]);

/**
 * The reference of an evidence item as stored, once it is known to exist in this workspace.
 * @throws DomainError validation_failed naming ref
 */
async function checkedRef(
  tx: Db,
  tenantId: string,
  mapId: string,
  kind: EvidenceItem["kind"],
  raw: string,
): Promise<string> {
  switch (kind) {
    case "exercise":
      if (!UUID.test(raw) || !(await q.findExercise(tx, tenantId, mapId, raw)))
        throw refIssue(`no exercise ${raw.slice(0, 60)} on this map; link an exercise recorded for it`);
      return raw.toLowerCase();
    case "task":
      if (!(await findTask(tx, tenantId, raw)))
        throw refIssue(`no task ${raw.slice(0, 100)} in this workspace; pick a task the product knows (Tasks)`);
      return raw;
    case "bundle": {
      const digest = raw.replace(/^sha256:/i, "").toLowerCase();
      if (!SHA256_HEX.test(digest)) throw refIssue("a bundle is named by its sha256 digest (64 hex characters)");
      if (!(await findBundle(tx, tenantId, digest)))
        throw refIssue(
          `no bundle ${digest.slice(0, 12)}… was exported in this workspace; export one under Settings → Export or from an exercise`,
        );
      return digest;
    }
    case "document": {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw refIssue("a document link must be a full http(s) address, e.g. https://wiki.example.com/runbook");
      }
      if (url.protocol !== "https:" && url.protocol !== "http:")
        throw refIssue(`a document link must be http or https, not ${url.protocol.replace(/:$/, "")}`);
      if (url.username || url.password) throw refIssue("a document link must not carry a user name or password");
      return url.toString();
    }
  }
}

/**
 * Adds an evidence item to a layer. body `{kind, ref, note?}`.
 * @returns the item as stored.
 * @throws DomainError forbidden (not owner/admin), not_found (map of another tenant, unknown layer),
 *   validation_failed (422 naming `ref`: an id not found in this workspace, a link that is not http(s); too many items).
 */
export async function addEvidenceItem(
  { db, actor }: VerbContext,
  { mapId, layerName, body }: { mapId: string; layerName: string; body: unknown },
): Promise<EvidenceItem> {
  const layer = start(actor, "maps.edit", mapId, layerName);
  const parsed = evidenceItemBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { kind, note = "" } = parsed.data;
  for (const [path, value] of [
    ["ref", parsed.data.ref],
    ["note", note],
  ] as const) {
    if (looksLikeSecret(value)) throw validationError([{ path: [path], message: SECRET_MESSAGE }]);
  }
  return db.transaction(async (tx) => {
    await lockMap(tx, actor.tenantId, mapId);
    if ((await q.countEvidenceItems(tx, actor.tenantId, mapId, layer)) >= MAX_EVIDENCE_ITEMS) {
      throw validationError([
        { path: ["ref"], message: `a layer holds at most ${MAX_EVIDENCE_ITEMS} evidence items; remove one first` },
      ]);
    }
    const ref = await checkedRef(tx, actor.tenantId, mapId, kind, parsed.data.ref);
    const item = await q.insertEvidenceItem(tx, actor.tenantId, mapId, {
      layer,
      kind,
      ref,
      note,
      added_by: actorRef(actor).label,
    });
    await appendAudit(tx, actor, {
      action: "map_evidence.added",
      target: `map:${mapId}/layer/${layer}`,
      details: { layer, evidence_id: item.id, kind, ref },
    });
    return item;
  });
}

/**
 * Removes an evidence item of a layer.
 * @throws DomainError forbidden, not_found (map, layer or item not found in this tenant).
 */
export async function removeEvidenceItem(
  { db, actor }: VerbContext,
  { mapId, layerName, evidenceId }: { mapId: string; layerName: string; evidenceId: string },
): Promise<{ removed: EvidenceItem }> {
  const layer = start(actor, "maps.edit", mapId, layerName);
  if (!UUID.test(evidenceId)) throw notFound("Evidence item");
  return db.transaction(async (tx) => {
    await lockMap(tx, actor.tenantId, mapId);
    const removed = await q.deleteEvidenceItem(tx, actor.tenantId, mapId, layer, evidenceId);
    if (!removed) throw notFound("Evidence item");
    await appendAudit(tx, actor, {
      action: "map_evidence.removed",
      target: `map:${mapId}/layer/${layer}`,
      details: { layer, evidence_id: removed.id, kind: removed.kind, ref: removed.ref },
    });
    return { removed };
  });
}

/**
 * Sets who carries a layer: a member of this workspace (by email, any case), or nobody (null).
 * @returns `{assignee}` as stored (the member's email as the workspace knows it).
 * @throws DomainError forbidden, not_found, validation_failed (422 naming `assignee`: not a member of this workspace).
 */
export async function setLayerAssignee(
  { db, actor }: VerbContext,
  { mapId, layerName, body }: { mapId: string; layerName: string; body: unknown },
): Promise<Pick<LayerWork, "assignee">> {
  const layer = start(actor, "maps.edit", mapId, layerName);
  const parsed = assigneeBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const wanted = parsed.data.assignee || null;
  return db.transaction(async (tx) => {
    await lockMap(tx, actor.tenantId, mapId);
    const email = wanted === null ? null : await q.findMemberEmail(tx, actor.tenantId, wanted);
    if (email === undefined) {
      throw validationError([
        {
          path: ["assignee"],
          message: `${wanted!.slice(0, 80)} is not a member of this workspace; assign a member (Settings → Members)`,
        },
      ]);
    }
    const set = await q.setAssignee(tx, actor.tenantId, mapId, layer, email);
    if (!set) throw notFound(`Layer ${layer}`);
    if (set.previous !== email) {
      await appendAudit(tx, actor, {
        action: "map_layer.assigned",
        target: `map:${mapId}/layer/${layer}`,
        details: { layer, from: set.previous, to: email },
      });
    }
    return { assignee: email };
  });
}

/**
 * Adds a comment to a layer (owners, admins, approvers and responders; viewers read).
 * @returns the comment as stored, with its author and time.
 * @throws DomainError forbidden, not_found, validation_failed (422 naming `text`: empty, longer than
 *   {@link COMMENT_MAX}, a credential, or the layer already has {@link MAX_COMMENTS}).
 */
export async function addLayerComment(
  { db, actor }: VerbContext,
  { mapId, layerName, body }: { mapId: string; layerName: string; body: unknown },
): Promise<LayerComment> {
  const layer = start(actor, "maps.comment", mapId, layerName);
  const parsed = commentBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  if (looksLikeSecret(parsed.data.text)) throw validationError([{ path: ["text"], message: SECRET_MESSAGE }]);
  return db.transaction(async (tx) => {
    await lockMap(tx, actor.tenantId, mapId);
    if ((await q.countComments(tx, actor.tenantId, mapId, layer)) >= MAX_COMMENTS) {
      throw new DomainError(
        "validation_failed",
        `a layer holds at most ${MAX_COMMENTS} comments; record the conclusion in its decision note`,
        {
          fields: [{ path: "text", message: `at most ${MAX_COMMENTS} comments per layer` }],
        },
      );
    }
    const comment = await q.insertComment(tx, actor.tenantId, mapId, {
      layer,
      author: actorRef(actor).label,
      body: parsed.data.text,
    });
    await appendAudit(tx, actor, {
      action: "map_comment.added",
      target: `map:${mapId}/layer/${layer}`,
      details: { layer, comment_id: comment.id, length: [...comment.body].length },
    });
    return comment;
  });
}
