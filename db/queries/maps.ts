/**
 * Custody maps, their rows, published versions and interruption exercises. SQL only; first argument
 * db-or-transaction; tenant id required.
 */
import { sql, type SQL } from "drizzle-orm";
import type {
  Custodian,
  Decision,
  ExerciseStepJson,
  MapLayer,
  MapStatus,
  Verification,
  VerificationEvidence,
} from "../schema/map-vocabulary";
import { queryRows, type Db } from "../index";
import { isoUtc, likeEscape } from "./sql-helpers";

export type MapRow = {
  id: string;
  workflow: string;
  title: string;
  version: number;
  status: MapStatus;
  created_by: string;
  created_at: string;
  updated_at: string;
  last_edited_by: string | null;
  archived_at: string | null;
  archived_by: string | null;
};

const MAP_COLUMNS = sql`id::text as id, workflow, title, version, status::text as status, created_by,
  ${isoUtc("created_at")} as created_at, ${isoUtc("updated_at")} as updated_at, last_edited_by,
  ${isoUtc("archived_at")} as archived_at, archived_by`;

/** One map of a tenant, or undefined. `forUpdate` locks its row until the transaction ends. */
export async function findMap(
  db: Db,
  tenantId: string,
  mapId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<MapRow | undefined> {
  const rows = await queryRows<MapRow>(
    db,
    sql`select ${MAP_COLUMNS} from custody_maps where tenant_id = ${tenantId} and id = ${mapId}::uuid ${opts.forUpdate ? sql`for update` : sql``}`,
  );
  return rows[0];
}

/** The map a workflow's runs link to (decision 0049). */
export type WorkflowMapRow = { workflow: string; id: string; title: string; status: MapStatus };

/**
 * For each of `workflows`, its active custody map: not archived, a published one before a draft, then the most
 * recently changed (custody_maps_tenant_workflow_idx). A workflow without one is absent from the answer.
 */
export async function activeMapsOfWorkflows(db: Db, tenantId: string, workflows: string[]): Promise<WorkflowMapRow[]> {
  if (!workflows.length) return [];
  return queryRows<WorkflowMapRow>(
    db,
    sql`select distinct on (workflow) workflow, id::text as id, title, status::text as status
        from custody_maps
        where tenant_id = ${tenantId} and archived_at is null and workflow in (${sql.join(
          workflows.map((w) => sql`${w}`),
          sql`, `,
        )})
        order by workflow, status = 'published' desc, updated_at desc, id`,
  );
}

/**
 * The tenant's maps (at most `limit`), by workflow then most recently changed; `q` matches workflow or title,
 * `workflow` is one workflow exactly; `archived`: `exclude` (the default), `include` or `only`.
 */
export async function listMaps(
  db: Db,
  tenantId: string,
  opts: { q?: string; status?: MapStatus; workflow?: string; archived?: "exclude" | "include" | "only"; limit: number },
): Promise<MapRow[]> {
  const conds: SQL[] = [sql`tenant_id = ${tenantId}`];
  if (opts.workflow !== undefined) conds.push(sql`workflow = ${opts.workflow}`);
  if ((opts.archived ?? "exclude") === "exclude") conds.push(sql`archived_at is null`);
  if (opts.archived === "only") conds.push(sql`archived_at is not null`);
  if (opts.q)
    conds.push(
      sql`(workflow ilike ${"%" + likeEscape(opts.q) + "%"} or title ilike ${"%" + likeEscape(opts.q) + "%"})`,
    );
  if (opts.status) conds.push(sql`status = ${opts.status}::map_status`);
  return queryRows<MapRow>(
    db,
    sql`select ${MAP_COLUMNS} from custody_maps where ${sql.join(conds, sql` and `)} order by workflow, updated_at desc, id limit ${opts.limit}`,
  );
}

/** Inserts a map (a draft at version 1) and returns its id. */
export async function insertMap(
  db: Db,
  tenantId: string,
  m: { workflow: string; title: string; createdBy: string },
): Promise<MapRow> {
  const rows = await queryRows<MapRow>(
    db,
    sql`insert into custody_maps (tenant_id, workflow, title, created_by) values (${tenantId}, ${m.workflow}, ${m.title}, ${m.createdBy})
        returning ${MAP_COLUMNS}`,
  );
  return rows[0]!;
}

export type LayerDbRow = {
  layer: MapLayer;
  custodians: Custodian[];
  handoff: string;
  evidence: string;
  recovery_path: string;
  acceptance_question: string;
  verification: Verification;
  verification_evidence: VerificationEvidence | null;
  decision: Decision | null;
  decision_note: string;
  assignee: string | null;
  revision: number;
  updated_by: string;
  updated_at: string;
};

const LAYER_COLUMNS = sql`layer::text as layer, custodians, handoff, evidence, recovery_path, acceptance_question,
  verification::text as verification, verification_evidence, decision::text as decision, decision_note, assignee, revision, updated_by,
  ${isoUtc("updated_at")} as updated_at`;

/** The fields of a row as written. */
export type LayerValues = Omit<LayerDbRow, "layer" | "revision" | "updated_by" | "updated_at" | "assignee">;

/** Inserts rows of a new map (revision 1 unless given). */
export async function insertLayers(
  db: Db,
  tenantId: string,
  mapId: string,
  rows: Array<LayerValues & { layer: MapLayer; position: number; revision?: number }>,
  by: string,
): Promise<void> {
  const values = rows.map(
    (
      r,
    ) => sql`(${tenantId}, ${mapId}::uuid, ${r.layer}::map_layer, ${r.position}, ${JSON.stringify(r.custodians)}::jsonb, ${r.handoff}, ${r.evidence},
      ${r.recovery_path}, ${r.acceptance_question}, ${r.verification}::map_verification,
      ${r.verification_evidence ? JSON.stringify(r.verification_evidence) : null}::jsonb, ${r.decision}::map_decision, ${r.decision_note}, ${r.revision ?? 1}, ${by})`,
  );
  await db.execute(sql`insert into custody_map_layers (tenant_id, map_id, layer, position, custodians, handoff, evidence, recovery_path,
      acceptance_question, verification, verification_evidence, decision, decision_note, revision, updated_by)
    values ${sql.join(values, sql`, `)}`);
}

/** The rows of a map in the fixed order. */
export async function listLayers(db: Db, tenantId: string, mapId: string): Promise<LayerDbRow[]> {
  return queryRows<LayerDbRow>(
    db,
    sql`select ${LAYER_COLUMNS} from custody_map_layers where tenant_id = ${tenantId} and map_id = ${mapId}::uuid order by position`,
  );
}

/** Rows of several maps (for the list), in the fixed order per map. */
export async function listLayersOfMaps(
  db: Db,
  tenantId: string,
  mapIds: string[],
): Promise<Array<LayerDbRow & { map_id: string }>> {
  if (mapIds.length === 0) return [];
  return queryRows<LayerDbRow & { map_id: string }>(
    db,
    sql`select map_id::text as map_id, ${LAYER_COLUMNS} from custody_map_layers
        where tenant_id = ${tenantId} and map_id in (${sql.join(
          mapIds.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})
        order by map_id, position`,
  );
}

/** One row of a map, or undefined. */
export async function findLayer(
  db: Db,
  tenantId: string,
  mapId: string,
  layer: MapLayer,
): Promise<LayerDbRow | undefined> {
  const rows = await queryRows<LayerDbRow>(
    db,
    sql`select ${LAYER_COLUMNS} from custody_map_layers where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer`,
  );
  return rows[0];
}

/**
 * Writes a row only when its revision is still `expectedRevision` (the guard), adding one to it.
 * @returns the row as written, or undefined when the revision moved on (someone else wrote first).
 */
export async function updateLayerGuarded(
  db: Db,
  tenantId: string,
  mapId: string,
  layer: MapLayer,
  v: LayerValues,
  expectedRevision: number,
  by: string,
): Promise<LayerDbRow | undefined> {
  const rows = await queryRows<LayerDbRow>(
    db,
    sql`update custody_map_layers
        set custodians = ${JSON.stringify(v.custodians)}::jsonb, handoff = ${v.handoff}, evidence = ${v.evidence},
            recovery_path = ${v.recovery_path}, acceptance_question = ${v.acceptance_question},
            verification = ${v.verification}::map_verification,
            verification_evidence = ${v.verification_evidence ? JSON.stringify(v.verification_evidence) : null}::jsonb,
            decision = ${v.decision}::map_decision, decision_note = ${v.decision_note},
            revision = revision + 1, updated_by = ${by}, updated_at = now()
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer and revision = ${expectedRevision}
        returning ${LAYER_COLUMNS}`,
  );
  return rows[0];
}

/**
 * Marks the map as changed. A published map starts a new draft (version + 1); a draft stays at its version.
 * Call with the map row locked (findMap forUpdate) in the same transaction.
 * @returns the map's version and status after the change, and whether a new draft was started.
 */
export async function touchMapDraft(
  db: Db,
  tenantId: string,
  mapId: string,
  by: string,
): Promise<{ version: number; status: MapStatus; new_draft: boolean }> {
  const rows = await queryRows<{ version: number; status: MapStatus; new_draft: boolean }>(
    db,
    sql`update custody_maps m set status = 'draft', version = case when m.status = 'published' then m.version + 1 else m.version end,
          updated_at = now(), last_edited_by = ${by}
        from (select status as old_status from custody_maps where tenant_id = ${tenantId} and id = ${mapId}::uuid) old
        where m.tenant_id = ${tenantId} and m.id = ${mapId}::uuid
        returning m.version, m.status::text as status, (old.old_status = 'published') as new_draft`,
  );
  return rows[0]!;
}

/** Freezes the draft: status → published, only while it is a draft. @returns the version, or undefined when it was not a draft. */
export async function markPublished(db: Db, tenantId: string, mapId: string): Promise<number | undefined> {
  const rows = await queryRows<{ version: number }>(
    db,
    sql`update custody_maps set status = 'published', updated_at = now()
        where tenant_id = ${tenantId} and id = ${mapId}::uuid and status = 'draft' returning version`,
  );
  return rows[0]?.version;
}

/** Stores the frozen JSON of a published version. */
export async function insertVersion(
  db: Db,
  tenantId: string,
  mapId: string,
  version: number,
  snapshot: unknown,
  by: string,
  lastEditedBy: string,
): Promise<string> {
  const rows = await queryRows<{ published_at: string }>(
    db,
    sql`insert into custody_map_versions (tenant_id, map_id, version, snapshot, published_by, last_edited_by)
        values (${tenantId}, ${mapId}::uuid, ${version}, ${JSON.stringify(snapshot)}::jsonb, ${by}, ${lastEditedBy})
        returning ${isoUtc("published_at")} as published_at`,
  );
  return rows[0]!.published_at;
}

export type VersionRow = {
  version: number;
  published_at: string;
  published_by: string;
  last_edited_by: string | null;
  signed_off_by: string | null;
  signed_off_at: string | null;
  signoff_note: string;
};

const VERSION_COLUMNS = sql`version, ${isoUtc("published_at")} as published_at, published_by, last_edited_by, signed_off_by,
  ${isoUtc("signed_off_at")} as signed_off_at, signoff_note`;

/** Published versions of a map, newest first. */
export async function listVersions(db: Db, tenantId: string, mapId: string): Promise<VersionRow[]> {
  return queryRows<VersionRow>(
    db,
    sql`select ${VERSION_COLUMNS} from custody_map_versions
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid order by version desc`,
  );
}

/** The frozen JSON of one published version, or undefined. */
export async function findVersionSnapshot(
  db: Db,
  tenantId: string,
  mapId: string,
  version: number,
): Promise<Record<string, unknown> | undefined> {
  const rows = await queryRows<{ snapshot: Record<string, unknown> }>(
    db,
    sql`select snapshot from custody_map_versions where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and version = ${version}`,
  );
  return rows[0]?.snapshot;
}

/**
 * Signs off a published version: only while it is not signed off and `by` is not its last editor (the guard).
 * @returns the version as signed, or undefined when the guard refused (the caller reads why).
 */
export async function signOffVersionGuarded(
  db: Db,
  tenantId: string,
  mapId: string,
  version: number,
  by: string,
  note: string,
): Promise<VersionRow | undefined> {
  const rows = await queryRows<VersionRow>(
    db,
    sql`update custody_map_versions set signed_off_by = ${by}, signed_off_at = now(), signoff_note = ${note}
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and version = ${version}
          and signed_off_at is null and last_edited_by is distinct from ${by}
        returning ${VERSION_COLUMNS}`,
  );
  return rows[0];
}

/** Renames a map. @returns it, or undefined when not found. */
export async function renameMap(db: Db, tenantId: string, mapId: string, title: string): Promise<MapRow | undefined> {
  const rows = await queryRows<MapRow>(
    db,
    sql`update custody_maps set title = ${title}, updated_at = now() where tenant_id = ${tenantId} and id = ${mapId}::uuid
        returning ${MAP_COLUMNS}`,
  );
  return rows[0];
}

/**
 * Archives (`by` given) or restores (`by` null) a map, only when it is not already so (the guard).
 * @returns it, or undefined when it already was.
 */
export async function setMapArchivedGuarded(
  db: Db,
  tenantId: string,
  mapId: string,
  by: string | null,
): Promise<MapRow | undefined> {
  const rows = await queryRows<MapRow>(
    db,
    sql`update custody_maps set archived_at = ${by === null ? null : sql`now()`}, archived_by = ${by}, updated_at = now()
        where tenant_id = ${tenantId} and id = ${mapId}::uuid and archived_at is ${by === null ? sql`not null` : sql`null`}
        returning ${MAP_COLUMNS}`,
  );
  return rows[0];
}

/** Replaces the rows of a map with the given ones (an import as a new version), adding one to each revision. */
export async function replaceLayers(
  db: Db,
  tenantId: string,
  mapId: string,
  rows: Array<LayerValues & { layer: MapLayer }>,
  by: string,
): Promise<void> {
  for (const v of rows) {
    await db.execute(sql`update custody_map_layers
        set custodians = ${JSON.stringify(v.custodians)}::jsonb, handoff = ${v.handoff}, evidence = ${v.evidence},
            recovery_path = ${v.recovery_path}, acceptance_question = ${v.acceptance_question},
            verification = ${v.verification}::map_verification,
            verification_evidence = ${v.verification_evidence ? JSON.stringify(v.verification_evidence) : null}::jsonb,
            decision = ${v.decision}::map_decision, decision_note = ${v.decision_note},
            revision = revision + 1, updated_by = ${by}, updated_at = now()
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${v.layer}::map_layer`);
  }
}

/** Sets a layer's assignee (null: nobody). @returns the previous one, or undefined when the layer was not found. */
export async function setAssignee(
  db: Db,
  tenantId: string,
  mapId: string,
  layer: MapLayer,
  assignee: string | null,
): Promise<{ previous: string | null } | undefined> {
  const rows = await queryRows<{ previous: string | null }>(
    db,
    sql`update custody_map_layers l set assignee = ${assignee}
        from (select assignee as previous from custody_map_layers
              where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer for update) old
        where l.tenant_id = ${tenantId} and l.map_id = ${mapId}::uuid and l.layer = ${layer}::map_layer
        returning old.previous`,
  );
  return rows[0];
}

export type EvidenceItemRow = {
  id: string;
  layer: MapLayer;
  kind: "exercise" | "task" | "bundle" | "document";
  ref: string;
  note: string;
  added_by: string;
  added_at: string;
};

const EVIDENCE_COLUMNS = sql`id::text as id, layer::text as layer, kind, ref, note, added_by, ${isoUtc("added_at")} as added_at`;

/** Adds an evidence item to a layer. */
export async function insertEvidenceItem(
  db: Db,
  tenantId: string,
  mapId: string,
  e: Omit<EvidenceItemRow, "id" | "added_at">,
): Promise<EvidenceItemRow> {
  const rows = await queryRows<EvidenceItemRow>(
    db,
    sql`insert into custody_map_evidence (tenant_id, map_id, layer, kind, ref, note, added_by)
        values (${tenantId}, ${mapId}::uuid, ${e.layer}::map_layer, ${e.kind}, ${e.ref}, ${e.note}, ${e.added_by})
        returning ${EVIDENCE_COLUMNS}`,
  );
  return rows[0]!;
}

/** Removes one evidence item of a layer. @returns it, or undefined when there was none. */
export async function deleteEvidenceItem(
  db: Db,
  tenantId: string,
  mapId: string,
  layer: MapLayer,
  id: string,
): Promise<EvidenceItemRow | undefined> {
  const rows = await queryRows<EvidenceItemRow>(
    db,
    sql`delete from custody_map_evidence
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer and id = ${id}::uuid
        returning ${EVIDENCE_COLUMNS}`,
  );
  return rows[0];
}

/** A map's evidence items, in the order added. */
export async function listEvidenceItems(db: Db, tenantId: string, mapId: string): Promise<EvidenceItemRow[]> {
  return queryRows<EvidenceItemRow>(
    db,
    sql`select ${EVIDENCE_COLUMNS} from custody_map_evidence where tenant_id = ${tenantId} and map_id = ${mapId}::uuid
        order by added_at, id`,
  );
}

/** How many evidence items a layer has. */
export async function countEvidenceItems(db: Db, tenantId: string, mapId: string, layer: MapLayer): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from custody_map_evidence where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer`,
  );
  return Number(rows[0]?.n ?? 0);
}

export type CommentRow = { id: string; layer: MapLayer; author: string; body: string; created_at: string };

const COMMENT_COLUMNS = sql`id::text as id, layer::text as layer, author, body, ${isoUtc("created_at")} as created_at`;

/** Adds a comment to a layer. */
export async function insertComment(
  db: Db,
  tenantId: string,
  mapId: string,
  c: { layer: MapLayer; author: string; body: string },
): Promise<CommentRow> {
  const rows = await queryRows<CommentRow>(
    db,
    sql`insert into custody_map_comments (tenant_id, map_id, layer, author, body)
        values (${tenantId}, ${mapId}::uuid, ${c.layer}::map_layer, ${c.author}, ${c.body}) returning ${COMMENT_COLUMNS}`,
  );
  return rows[0]!;
}

/** A map's comments, oldest first (at most `limit`, the newest kept). */
export async function listComments(db: Db, tenantId: string, mapId: string, limit: number): Promise<CommentRow[]> {
  const rows = await queryRows<CommentRow>(
    db,
    sql`select ${COMMENT_COLUMNS} from custody_map_comments where tenant_id = ${tenantId} and map_id = ${mapId}::uuid
        order by created_at desc, id desc limit ${limit}`,
  );
  return rows.reverse();
}

/** How many comments a layer has. */
export async function countComments(db: Db, tenantId: string, mapId: string, layer: MapLayer): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from custody_map_comments where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and layer = ${layer}::map_layer`,
  );
  return Number(rows[0]?.n ?? 0);
}

/** The email of a member of the tenant, matched case-insensitively, or undefined. */
export async function findMemberEmail(db: Db, tenantId: string, email: string): Promise<string | undefined> {
  const rows = await queryRows<{ email: string }>(
    db,
    sql`select u.email from memberships m join users u on u.id = m.user_id
        where m.tenant_id = ${tenantId} and m.revoked_at is null and lower(u.email) = lower(${email})`,
  );
  return rows[0]?.email;
}

// ------------------------------------------------------------------ exercises

export type ExerciseRow = {
  id: string;
  map_id: string;
  interruption_point: string;
  layers: MapLayer[];
  steps: ExerciseStepJson[];
  status: "in_progress" | "completed";
  outcome: "safe_resume" | "safe_replay" | "visible_stop" | "unsafe" | null;
  finding: string;
  revision: number;
  created_by: string;
  created_at: string;
  updated_by: string;
  updated_at: string;
  completed_at: string | null;
  completed_map_version: number | null;
};

const EXERCISE_COLUMNS = sql`id::text as id, map_id::text as map_id, interruption_point, layers, steps, status::text as status,
  outcome::text as outcome, finding, revision, created_by, ${isoUtc("created_at")} as created_at, updated_by,
  ${isoUtc("updated_at")} as updated_at, ${isoUtc("completed_at")} as completed_at, completed_map_version`;

/** Inserts an exercise (in progress, revision 1). */
export async function insertExercise(
  db: Db,
  tenantId: string,
  e: { mapId: string; interruptionPoint: string; layers: MapLayer[]; steps: ExerciseStepJson[]; by: string },
): Promise<ExerciseRow> {
  const rows = await queryRows<ExerciseRow>(
    db,
    sql`insert into custody_exercises (tenant_id, map_id, interruption_point, layers, steps, created_by, updated_by)
        values (${tenantId}, ${e.mapId}::uuid, ${e.interruptionPoint}, ${JSON.stringify(e.layers)}::jsonb, ${JSON.stringify(e.steps)}::jsonb, ${e.by}, ${e.by})
        returning ${EXERCISE_COLUMNS}`,
  );
  return rows[0]!;
}

/** One exercise of a map, or undefined. */
export async function findExercise(
  db: Db,
  tenantId: string,
  mapId: string,
  exerciseId: string,
): Promise<ExerciseRow | undefined> {
  const rows = await queryRows<ExerciseRow>(
    db,
    sql`select ${EXERCISE_COLUMNS} from custody_exercises where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and id = ${exerciseId}::uuid`,
  );
  return rows[0];
}

/** A map's exercises, newest first. */
export async function listExercises(db: Db, tenantId: string, mapId: string): Promise<ExerciseRow[]> {
  return queryRows<ExerciseRow>(
    db,
    sql`select ${EXERCISE_COLUMNS} from custody_exercises where tenant_id = ${tenantId} and map_id = ${mapId}::uuid order by created_at desc, id`,
  );
}

/** How many exercises each of the given maps has. */
export async function countExercises(db: Db, tenantId: string, mapIds: string[]): Promise<Map<string, number>> {
  if (mapIds.length === 0) return new Map();
  const rows = await queryRows<{ map_id: string; n: string | number }>(
    db,
    sql`select map_id::text as map_id, count(*) as n from custody_exercises
        where tenant_id = ${tenantId} and map_id in (${sql.join(
          mapIds.map((id) => sql`${id}::uuid`),
          sql`, `,
        )}) group by map_id`,
  );
  return new Map(rows.map((r) => [r.map_id, Number(r.n)]));
}

/**
 * Writes an exercise in progress only at `expectedRevision`.
 * @returns the exercise as written, or undefined when it moved on or was completed.
 */
export async function updateExerciseGuarded(
  db: Db,
  tenantId: string,
  mapId: string,
  exerciseId: string,
  v: {
    interruptionPoint: string;
    layers: MapLayer[];
    steps: ExerciseStepJson[];
    finding: string;
    outcome: ExerciseRow["outcome"];
  },
  expectedRevision: number,
  by: string,
): Promise<ExerciseRow | undefined> {
  const rows = await queryRows<ExerciseRow>(
    db,
    sql`update custody_exercises
        set interruption_point = ${v.interruptionPoint}, layers = ${JSON.stringify(v.layers)}::jsonb, steps = ${JSON.stringify(v.steps)}::jsonb,
            finding = ${v.finding}, outcome = ${v.outcome}::exercise_outcome, revision = revision + 1, updated_by = ${by}, updated_at = now()
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and id = ${exerciseId}::uuid
          and status = 'in_progress' and revision = ${expectedRevision}
        returning ${EXERCISE_COLUMNS}`,
  );
  return rows[0];
}

/** Completes an exercise in progress at `expectedRevision`. @returns it, or undefined when it moved on or was completed. */
export async function completeExerciseGuarded(
  db: Db,
  tenantId: string,
  mapId: string,
  exerciseId: string,
  v: { outcome: NonNullable<ExerciseRow["outcome"]>; finding: string; mapVersion: number },
  expectedRevision: number,
  by: string,
): Promise<ExerciseRow | undefined> {
  const rows = await queryRows<ExerciseRow>(
    db,
    sql`update custody_exercises
        set status = 'completed', outcome = ${v.outcome}::exercise_outcome, finding = ${v.finding}, completed_at = now(),
            completed_map_version = ${v.mapVersion}, revision = revision + 1, updated_by = ${by}, updated_at = now()
        where tenant_id = ${tenantId} and map_id = ${mapId}::uuid and id = ${exerciseId}::uuid
          and status = 'in_progress' and revision = ${expectedRevision}
        returning ${EXERCISE_COLUMNS}`,
  );
  return rows[0];
}
