/**
 * Custody maps (the workflow owner's worksheet: eight fixed layers per workflow), their published versions, and
 * interruption exercises that test a map at one interruption point.
 * Source: docs/concepts.md#custody-maps, #interruption-exercises; docs/decisions/0005-custody-maps.md.
 */
import { sql } from "drizzle-orm";
import {
  foreignKey,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import {
  DECISIONS,
  EXERCISE_OUTCOMES,
  EXERCISE_STATUSES,
  MAP_LAYERS,
  MAP_STATUSES,
  VERIFICATIONS,
  type Custodian,
  type ExerciseStepJson,
  type VerificationEvidence,
} from "./map-vocabulary";
import { tenants } from "./tenancy";

export * from "./map-vocabulary";

export const mapLayerEnum = pgEnum("map_layer", MAP_LAYERS);
export const mapStatusEnum = pgEnum("map_status", MAP_STATUSES);
export const verificationEnum = pgEnum("map_verification", VERIFICATIONS);
export const decisionEnum = pgEnum("map_decision", DECISIONS);
export const exerciseOutcomeEnum = pgEnum("exercise_outcome", EXERCISE_OUTCOMES);
export const exerciseStatusEnum = pgEnum("exercise_status", EXERCISE_STATUSES);

export const custodyMaps = pgTable(
  "custody_maps",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    id: uuid("id").notNull().defaultRandom(),
    workflow: text("workflow").notNull(),
    title: text("title").notNull(),
    /** The version the map is at: the draft being edited, or the latest published one. Starts at 1. */
    version: integer("version").notNull().default(1),
    status: mapStatusEnum("status").notNull().default("draft"),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    /** Who made the last change to the rows (a row write, an exercise's results, an import as a new version). */
    lastEditedBy: text("last_edited_by"),
    /** Set when the map is archived: hidden from the list unless asked for (decision 0046). */
    archivedAt: timestamp("archived_at", { withTimezone: true }),
    archivedBy: text("archived_by"),
  },
  (t) => [
    primaryKey({ name: "custody_maps_pkey", columns: [t.tenantId, t.id] }),
    index("custody_maps_tenant_workflow_idx").on(t.tenantId, t.workflow, sql`${t.updatedAt} desc`),
  ],
);

export const custodyMapLayers = pgTable(
  "custody_map_layers",
  {
    tenantId: uuid("tenant_id").notNull(),
    mapId: uuid("map_id").notNull(),
    layer: mapLayerEnum("layer").notNull(),
    /** 0–7: the layer's place in the fixed order. */
    position: smallint("position").notNull(),
    custodians: jsonb("custodians").$type<Custodian[]>().notNull().default([]),
    handoff: text("handoff").notNull().default(""),
    evidence: text("evidence").notNull().default(""),
    recoveryPath: text("recovery_path").notNull().default(""),
    acceptanceQuestion: text("acceptance_question").notNull().default(""),
    verification: verificationEnum("verification").notNull().default("unknown"),
    verificationEvidence: jsonb("verification_evidence").$type<VerificationEvidence | null>(),
    decision: decisionEnum("decision"),
    decisionNote: text("decision_note").notNull().default(""),
    /** The workspace member (email) who carries this layer to a decision; null = nobody yet (decision 0046). */
    assignee: text("assignee"),
    /** Optimistic concurrency: a write names the revision it was based on; each write adds one. */
    revision: integer("revision").notNull().default(1),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "custody_map_layers_pkey", columns: [t.tenantId, t.mapId, t.layer] }),
    foreignKey({
      name: "custody_map_layers_map_fk",
      columns: [t.tenantId, t.mapId],
      foreignColumns: [custodyMaps.tenantId, custodyMaps.id],
    }),
  ],
);

/** A published version, frozen: the map JSON (`{id, workflow, title, version, status, layers}`) as it was. */
export const custodyMapVersions = pgTable(
  "custody_map_versions",
  {
    tenantId: uuid("tenant_id").notNull(),
    mapId: uuid("map_id").notNull(),
    version: integer("version").notNull(),
    snapshot: jsonb("snapshot").$type<Record<string, unknown>>().notNull(),
    publishedBy: text("published_by").notNull(),
    publishedAt: timestamp("published_at", { withTimezone: true }).notNull().defaultNow(),
    /** Who made the last change to the rows this version froze: that person may not sign it off (decision 0046). */
    lastEditedBy: text("last_edited_by"),
    /** The adoption decision's sign-off by a named reviewer (not its last editor); null until signed off. */
    signedOffBy: text("signed_off_by"),
    signedOffAt: timestamp("signed_off_at", { withTimezone: true }),
    signoffNote: text("signoff_note").notNull().default(""),
  },
  (t) => [
    primaryKey({ name: "custody_map_versions_pkey", columns: [t.tenantId, t.mapId, t.version] }),
    foreignKey({
      name: "custody_map_versions_map_fk",
      columns: [t.tenantId, t.mapId],
      foreignColumns: [custodyMaps.tenantId, custodyMaps.id],
    }),
  ],
);

/** Evidence items of a layer (decision 0046): several per layer, each an exercise, a task, a bundle or a document link. */
export const custodyMapEvidence = pgTable(
  "custody_map_evidence",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    mapId: uuid("map_id").notNull(),
    layer: mapLayerEnum("layer").notNull(),
    kind: text("kind").notNull(),
    ref: text("ref").notNull(),
    note: text("note").notNull().default(""),
    addedBy: text("added_by").notNull(),
    addedAt: timestamp("added_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "custody_map_evidence_pkey", columns: [t.tenantId, t.id] }),
    index("custody_map_evidence_map_idx").on(t.tenantId, t.mapId, t.layer, t.addedAt),
    foreignKey({
      name: "custody_map_evidence_map_fk",
      columns: [t.tenantId, t.mapId],
      foreignColumns: [custodyMaps.tenantId, custodyMaps.id],
    }),
  ],
);

/** Comments on a layer (decision 0046): who wrote what when; kept as written. */
export const custodyMapComments = pgTable(
  "custody_map_comments",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    mapId: uuid("map_id").notNull(),
    layer: mapLayerEnum("layer").notNull(),
    author: text("author").notNull(),
    body: text("body").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "custody_map_comments_pkey", columns: [t.tenantId, t.id] }),
    index("custody_map_comments_map_idx").on(t.tenantId, t.mapId, t.layer, t.createdAt),
    foreignKey({
      name: "custody_map_comments_map_fk",
      columns: [t.tenantId, t.mapId],
      foreignColumns: [custodyMaps.tenantId, custodyMaps.id],
    }),
  ],
);

export const custodyExercises = pgTable(
  "custody_exercises",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    mapId: uuid("map_id").notNull(),
    /** Where the run is interrupted: a phase or a transition, e.g. `after_external_write`. */
    interruptionPoint: text("interruption_point").notNull(),
    /** The layers the exercise covers: their verification is set when it is completed. */
    layers: jsonb("layers").$type<string[]>().notNull(),
    steps: jsonb("steps").$type<ExerciseStepJson[]>().notNull(),
    status: exerciseStatusEnum("status").notNull().default("in_progress"),
    outcome: exerciseOutcomeEnum("outcome"),
    finding: text("finding").notNull().default(""),
    revision: integer("revision").notNull().default(1),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    /** The map version the exercise's results were written into. */
    completedMapVersion: integer("completed_map_version"),
  },
  (t) => [
    primaryKey({ name: "custody_exercises_pkey", columns: [t.tenantId, t.id] }),
    index("custody_exercises_tenant_map_idx").on(t.tenantId, t.mapId, sql`${t.createdAt} desc`),
    foreignKey({
      name: "custody_exercises_map_fk",
      columns: [t.tenantId, t.mapId],
      foreignColumns: [custodyMaps.tenantId, custodyMaps.id],
    }),
  ],
);
