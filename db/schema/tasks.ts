/**
 * Tasks, their checkpointed records, the four-plane event log, side effects and artifacts.
 * Source: DESIGN.md "Task record", "Event", "Side effect".
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  foreignKey,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { planeEnum, sideEffectStatusEnum } from "./enums";
import { tenants } from "./tenancy";

export const tasks = pgTable(
  "tasks",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    taskId: text("task_id").notNull(),
    principal: text("principal"),
    policyVersion: text("policy_version"),
    /** `unknown` until the first checkpoint. */
    phase: text("phase").notNull().default("unknown"),
    /** Latest checkpoint version; 0 = no record yet. */
    latestVersion: integer("latest_version").notNull().default(0),
    /** Highest sandbox attempt reported by `sandbox.created`. */
    currentAttempt: integer("current_attempt").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "tasks_pkey", columns: [t.tenantId, t.taskId] }),
    index("tasks_tenant_created_idx").on(t.tenantId, sql`${t.createdAt} desc`, sql`${t.taskId} desc`),
    // The attention queue's runs of a revoked principal (and the principal filter of the task list).
    index("tasks_tenant_principal_idx").on(t.tenantId, t.principal),
  ],
);

export type TaskRecordJson = Record<string, unknown>;

export const taskCheckpoints = pgTable(
  "task_checkpoints",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    version: integer("version").notNull(),
    record: jsonb("record").$type<TaskRecordJson>().notNull(),
    /** sha256 hex of the RFC 8785 canonical JSON of `record`. */
    digest: text("digest").notNull(),
    /** Ed25519 signature (base64url) over the canonical JSON. */
    signature: text("signature").notNull(),
    /** JWK thumbprint (RFC 7638) of the signing key. */
    keyId: text("key_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "task_checkpoints_pkey", columns: [t.tenantId, t.taskId, t.version] }),
    foreignKey({
      name: "task_checkpoints_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

export const events = pgTable(
  "events",
  {
    tenantId: uuid("tenant_id").notNull(),
    /** The sender's event id: the deduplication key per tenant. */
    eventId: text("event_id").notNull(),
    taskId: text("task_id").notNull(),
    plane: planeEnum("plane").notNull(),
    type: text("type").notNull(),
    occurredAt: timestamp("occurred_at", { withTimezone: true, precision: 6 }).notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
    environmentId: text("environment_id"),
    attempt: integer("attempt"),
    actor: text("actor"),
    attrs: jsonb("attrs").$type<Record<string, unknown>>().notNull().default({}),
    /** How many secret values were replaced by `[REDACTED]` before storage. */
    redactionCount: integer("redaction_count").notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "events_pkey", columns: [t.tenantId, t.eventId] }),
    index("events_timeline_idx").on(t.tenantId, t.taskId, t.occurredAt, t.eventId),
    // Task search by sandbox id and by host (db/queries/tasks.ts listTasks): exact matches inside one tenant,
    // answered from the index alone. Partial, so events without the value cost nothing here.
    // Only environment-plane events (sandbox.created, snapshot.saved, …): every sandbox a runtime reports has them,
    // and indexing every event's sandbox id cost about 12% of ingest throughput and 40% of COPY's.
    index("events_tenant_environment_idx")
      .on(t.tenantId, t.environmentId, t.taskId)
      .where(sql`${t.plane} = 'environment' and ${t.environmentId} is not null`),
    index("events_tenant_host_idx")
      .on(t.tenantId, sql`lower(${t.attrs} ->> 'host')`, t.taskId)
      .where(sql`(${t.attrs} ->> 'host') is not null`),
  ],
);

export type SideEffectReceipt = {
  external_operation_id: string;
  result_digest?: string | null;
  completed_at: string;
};

export type SideEffectReconcile = {
  outcome: "completed" | "not_applied";
  evidence: string;
  external_operation_id?: string | null;
  lookup?: unknown;
  by: string;
  at: string;
};

export const sideEffects = pgTable(
  "side_effects",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    name: text("name").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    status: sideEffectStatusEnum("status").notNull().default("not_started"),
    /** Tool that performs the write; lookup endpoints are registered per tool. */
    tool: text("tool"),
    action: text("action"),
    mutation: boolean("mutation").notNull().default(true),
    payloadDigest: text("payload_digest"),
    intentAt: timestamp("intent_at", { withTimezone: true, precision: 6 }),
    intentAttempt: integer("intent_attempt"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    /** Status to return to when a reconcile finds the write was not applied (`approved` or `not_started`). */
    retryStatus: sideEffectStatusEnum("retry_status"),
    receipt: jsonb("receipt").$type<SideEffectReceipt>(),
    lastReconcile: jsonb("last_reconcile").$type<SideEffectReconcile>(),
    /** Why the effect became `unknown` (interruption, new sandbox, lease expiry). */
    statusReason: text("status_reason"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "side_effects_pkey", columns: [t.tenantId, t.taskId, t.name] }),
    uniqueIndex("side_effects_tenant_key_key").on(t.tenantId, t.idempotencyKey),
    index("side_effects_tenant_status_idx").on(t.tenantId, t.status),
    foreignKey({
      name: "side_effects_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

export const artifacts = pgTable(
  "artifacts",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    objectRef: text("object_ref").notNull(),
    sha256: text("sha256").notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    mediaType: text("media_type"),
    /** Checkpoint version that first listed this artifact. */
    firstVersion: integer("first_version").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "artifacts_pkey", columns: [t.tenantId, t.taskId, t.objectRef, t.sha256] }),
    foreignKey({
      name: "artifacts_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);
