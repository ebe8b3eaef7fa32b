/**
 * Tasks, their checkpointed records, the four-plane event log, side effects and artifacts.
 * Source: docs/concepts.md#task-record, #events, #side-effects.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  customType,
  foreignKey,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
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
    /**
     * The workflow the run belongs to: `attrs.workflow` of the first `task.created` event that named one (at most 200
     * characters, the workflow limit of lib/domain/limits.ts; decision 0049). Null until such an event arrives. Custody
     * maps name their workflow the same way (`custody_maps.workflow`), which is how the task list links a run to its map.
     */
    workflow: text("workflow"),
    /** `unknown` until the first checkpoint. */
    phase: text("phase").notNull().default("unknown"),
    /** Latest checkpoint version; 0 = no record yet. */
    latestVersion: integer("latest_version").notNull().default(0),
    /**
     * Highest sandbox attempt the server has seen on any path (`sandbox.created`, a checkpoint, an intent, a receipt):
     * the fencing token. Writes that name an older attempt are refused (`stale_attempt`).
     */
    currentAttempt: integer("current_attempt").notNull().default(0),
    /**
     * Largest difference seen between the runtime's clock and the server's (ms; positive = runtime ahead), with when
     * and how it was detected. Null until a skew is detected.
     */
    clockSkewMs: bigint("clock_skew_ms", { mode: "number" }),
    clockSkewAt: timestamp("clock_skew_at", { withTimezone: true }),
    clockSkewNote: text("clock_skew_note"),
    /**
     * When a person ended the task (lib/domain/tasks/terminate.ts, decision 0043): from then on the gate answers stop
     * (`task_terminated`) and checkpoints and intents are refused. Null while the task has not been ended by a person.
     */
    terminatedAt: timestamp("terminated_at", { withTimezone: true }),
    /** Who ended it (the audit actor's label) and why. */
    terminatedBy: text("terminated_by"),
    terminatedReason: text("terminated_reason"),
    /**
     * When an owner or admin deleted the task (lib/domain/tasks/delete.ts, decision 0054): its events, checkpoints,
     * side effects, artifacts and approvals are gone and this row stays as the tombstone; every path then answers 410
     * `task_deleted`. Null while the task is kept. A trigger refuses any later change to a tombstone (migration 0035).
     */
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
    /** Who deleted it (the audit actor's label), why, and what went: counts per kind and digests (as in the audit entry). */
    deletedBy: text("deleted_by"),
    deletionReason: text("deletion_reason"),
    deletionSummary: jsonb("deletion_summary").$type<Record<string, unknown>>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "tasks_pkey", columns: [t.tenantId, t.taskId] }),
    index("tasks_tenant_created_idx").on(t.tenantId, sql`${t.createdAt} desc`, sql`${t.taskId} desc`),
    // The attention queue's runs of a revoked principal (and the principal filter of the task list).
    index("tasks_tenant_principal_idx").on(t.tenantId, t.principal),
    // The task list's workflow filter (newest first within one workflow) and the list of the tenant's workflows.
    index("tasks_tenant_workflow_idx").on(t.tenantId, t.workflow, sql`${t.createdAt} desc`, sql`${t.taskId} desc`),
    // Settings → Retention: the workspace's tombstones, newest first.
    index("tasks_tenant_deleted_idx")
      .on(t.tenantId, sql`${t.deletedAt} desc`)
      .where(sql`${t.deletedAt} is not null`),
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
    /** The sandbox attempt that wrote this checkpoint (`attempt` in the record); null for records from before fencing. */
    attempt: integer("attempt"),
    /**
     * 1: only the record is signed (rows written before decision 0035). 2: `binding_signature` also binds the record's
     * digest to its tenant, task, version and attempt.
     */
    signatureFormat: smallint("signature_format").notNull().default(1),
    /** Ed25519 signature (base64url) over the RFC 8785 JSON of the checkpoint's binding (format 2; decision 0035). */
    bindingSignature: text("binding_signature"),
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

/**
 * PostgreSQL's 64-bit transaction id (`xid8`), read as decimal text. Used for the arrival feed's watermark
 * (docs/decisions/0015-timeline-overview-and-arrival-feed.md).
 */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => "xid8" });

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
    /** The server's receive order (increasing across batches): decisions about arrival order read this, never `occurred_at`. */
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
    /**
     * The inserting transaction (set by the database, never by a sender). The arrival feed reads rows in
     * (txid, seq) order up to the oldest transaction still running, so a row that commits late is never skipped.
     */
    txid: xid8("txid")
      .notNull()
      .default(sql`pg_current_xact_id()`),
    environmentId: text("environment_id"),
    attempt: integer("attempt"),
    actor: text("actor"),
    attrs: jsonb("attrs").$type<Record<string, unknown>>().notNull().default({}),
    /** How many secret values were replaced by `[REDACTED]` before storage. */
    redactionCount: integer("redaction_count").notNull().default(0),
    /**
     * What was redacted (distinct kinds: `api_key`, `secret_field`, `credential_value`, `vault_placeholder` …), null
     * when nothing was. A vault-plane event with any is flagged: the vault lane carries metadata only
     * (docs/concepts.md#redaction).
     */
    redactionKinds: text("redaction_kinds").array(),
    /**
     * The partition it lives in (migration 0034, decision 0054): `fact` — what the custody rules judge a task by, kept
     * for as long as the task; `history` — the tool traffic, in monthly partitions that retention drops whole. Set on
     * insert from the type by the SQL function `custody_event_retention_class(type)`; no default, so every writer
     * chooses (the gate reads the `fact` partition alone).
     */
    retentionClass: text("retention_class").notNull(),
  },
  (t) => [
    // A stored event by its id (duplicates and conflicts, event detail). Not unique: a partitioned table holds no
    // unique index across partitions, so `event_ids` holds the exactly-once check.
    index("events_id_idx").on(t.tenantId, t.eventId),
    index("events_timeline_idx").on(t.tenantId, t.taskId, t.occurredAt, t.eventId),
    // The arrival feed (`GET …/timeline?since=`): one task's events in commit-safe receive order.
    index("events_task_arrival_idx").on(t.tenantId, t.taskId, t.txid, t.seq),
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
    // Task search by credential reference (docs/concepts.md#egress-and-vault-custody: "which task used this
    // credential?").
    index("events_tenant_credential_ref_idx")
      .on(t.tenantId, sql`(${t.attrs} ->> 'credential_ref')`, t.taskId)
      .where(sql`(${t.attrs} ->> 'credential_ref') is not null`),
    // The few event types read per task and type: the resume gate's facts and the timeline's markers (which the attempt
    // rules read too), `TASK_FACT_TYPES` of the event catalogue lib/domain/events/catalogue.ts. Written out because
    // `db` imports no `lib`; a unit test holds this list, and the latest migration's, equal to the catalogue's.
    // Partial, so the frequent tool and credential-use traffic costs nothing here.
    index("events_task_facts_idx")
      .on(t.tenantId, t.taskId, t.type, t.seq)
      .where(
        sql`${t.type} in ('sandbox.created', 'sandbox.replaced', 'sandbox.verified', 'sandbox.destroyed', 'snapshot.saved', 'snapshot.restored', 'credential.issued', 'credential.attached', 'credential.revoked', 'credential.expired', 'tool.definition_changed', 'run.interrupted', 'run.resumed', 'run.stopped', 'compaction.performed', 'constraint.checked')`,
      ),
    // The hosts a task's runs reached (the gate's drift check and the Egress tab): egress traffic is frequent, so it
    // gets its own partial index rather than a scan of every event of the task.
    index("events_task_egress_idx")
      .on(t.tenantId, t.taskId, t.type)
      .where(sql`${t.type} in ('egress.allowed', 'egress.denied')`),
  ],
);

/**
 * Every event id a workspace has stored (decision 0054): the exactly-once check of event ingest. An id stays when its
 * event is dropped by retention or deleted with its task, so a resent event is still a duplicate.
 */
export const eventIds = pgTable(
  "event_ids",
  {
    tenantId: uuid("tenant_id").notNull(),
    eventId: text("event_id").notNull(),
  },
  (t) => [primaryKey({ name: "event_ids_pkey", columns: [t.tenantId, t.eventId] })],
);

export type SideEffectReceipt = {
  external_operation_id: string;
  result_digest?: string | null;
  completed_at: string;
  /** What looked wrong when it was recorded, e.g. `completed_before_intent` (it claims to precede its intent). */
  warnings?: string[];
};

/** Where a side effect came from. */
export const SIDE_EFFECT_ORIGINS = ["intent", "event", "checkpoint", "tool_call", "import"] as const;
export type SideEffectOrigin = (typeof SIDE_EFFECT_ORIGINS)[number];

export type SideEffectReconcile = {
  outcome: "completed" | "not_applied";
  evidence: string;
  external_operation_id?: string | null;
  lookup?: unknown;
  by: string;
  at: string;
};

/**
 * The tool owner's word that a write was not applied (a `not_applied` receipt, by the receipt route or a
 * `side_effect.receipt` event), kept on the effect it settled. `error` is the tool's message, secrets redacted and cut
 * to a bounded length.
 */
export type SideEffectNotApplied = {
  error: string;
  attempt: number | null;
  source: "route" | "event";
  event_id?: string | null;
  /** Who reported it (the runtime key's label). */
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
    /**
     * The server's seal over the facts the gate relies on (tenant, task, name, key, status, receipt;
     * lib/domain/side-effects/lifecycle/seal.ts, decision 0035); `legacy` on rows written before seals.
     */
    seal: text("seal"),
    receipt: jsonb("receipt").$type<SideEffectReceipt>(),
    lastReconcile: jsonb("last_reconcile").$type<SideEffectReconcile>(),
    /** The last `not_applied` receipt that settled an in-flight write (null when none did). */
    lastNotApplied: jsonb("last_not_applied").$type<SideEffectNotApplied>(),
    /**
     * The effect of the same task this one deliberately repeats (same action and payload digest), as its intent said
     * (`repeats`); null for an effect that repeats nothing.
     */
    repeats: text("repeats"),
    /** Why the effect became `unknown` (interruption, new sandbox, lease expiry). */
    statusReason: text("status_reason"),
    /**
     * How the server learned of it: the intent route, a `side_effect.intent` event, a checkpoint's declaration, or a
     * mutating `tool.called` whose attempt ended without an outcome (then `call_id` names the call and the idempotency
     * key is one the server made up, since the runtime gave none).
     */
    origin: text("origin").$type<SideEffectOrigin>().notNull().default("intent"),
    callId: text("call_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "side_effects_pkey", columns: [t.tenantId, t.taskId, t.name] }),
    uniqueIndex("side_effects_tenant_key_key").on(t.tenantId, t.idempotencyKey),
    index("side_effects_tenant_status_idx").on(t.tenantId, t.status),
    // An intent's duplicate check: the task's effects with the same payload digest, whatever their status, compared
    // without case or a `sha256:` prefix (lib/domain/side-effects/duplicates.ts writes the same expression).
    index("side_effects_payload_idx")
      .on(t.tenantId, t.taskId, sql`lower(regexp_replace(${t.payloadDigest}, '^sha256:', '', 'i'))`)
      .where(sql`${t.payloadDigest} is not null`),
    // The effects of a task that are not completed: what the gate, an intent's lease expiry and its facts read. A long
    // run's completed effects (most of them) stay out of those scans (decision 0022).
    index("side_effects_open_idx")
      .on(t.tenantId, t.taskId)
      .where(sql`${t.status} <> 'completed'`),
    // Outcomes of tool calls that became effects (a late tool.completed is kept as evidence).
    index("side_effects_tool_call_idx")
      .on(t.tenantId, t.taskId, t.callId)
      .where(sql`${t.origin} = 'tool_call'`),
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

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * The bytes of artifacts a runtime uploaded (decision 0045), one row per tenant and sha256 (content-addressed: the
 * same bytes for several tasks or refs are stored once). The database implementation of
 * lib/domain/artifacts/artifact-store.ts: on the embedded default this table lives in PGlite's files in the data
 * directory, on a PostgreSQL deployment in PostgreSQL. `size_bytes` is the length of `bytes` when they were stored;
 * readers hash `bytes` again and show a mismatch (a database writer changed them) as a stop.
 */
export const artifactContents = pgTable(
  "artifact_contents",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** Lower-case hex sha256 of `bytes`, checked by the server when they were uploaded. */
    sha256: text("sha256").notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    bytes: bytea("bytes").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "artifact_contents_pkey", columns: [t.tenantId, t.sha256] })],
);

/**
 * The request payload a write's intent sent with its digest (secrets redacted), kept for the person who reconciles it
 * (decision 0045): the reconcile dialog shows what the write would have sent. One row per effect and payload digest;
 * the intent route wrote it after checking the digest. Apart from `side_effects` so the gate's rows stay small.
 */
export const sideEffectPayloads = pgTable(
  "side_effect_payloads",
  {
    tenantId: uuid("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    name: text("name").notNull(),
    /** The intent's `payload_digest`, lower case without a `sha256:` prefix. */
    payloadDigest: text("payload_digest").notNull(),
    payload: jsonb("payload").$type<unknown>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "side_effect_payloads_pkey", columns: [t.tenantId, t.taskId, t.name, t.payloadDigest] }),
    foreignKey({
      name: "side_effect_payloads_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

/**
 * Receipts (and tool outcomes) a runtime reported that did not complete an effect when they arrived: the effect was
 * already `unknown`, its lease had run out, the report came from an older attempt, or no intent existed yet. They are
 * kept as evidence for the person who reconciles; one that arrived before its intent (`no_intent`) completes the effect
 * when the intent arrives (`applied_at` set), whichever order the batches came in.
 */
export const unappliedReceipts = pgTable(
  "unapplied_receipts",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    taskId: text("task_id").notNull(),
    name: text("name").notNull(),
    idempotencyKey: text("idempotency_key"),
    /** `route` (POST …/receipt) or `event` (a `side_effect.receipt` / `tool.completed` event). */
    source: text("source").notNull(),
    eventId: text("event_id"),
    attempt: integer("attempt"),
    externalOperationId: text("external_operation_id"),
    resultDigest: text("result_digest"),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 6 }),
    /** Why it was not applied: `reconcile_required`, `lease_expired`, `stale_attempt`, `no_intent`, `receipt_conflict`, `late_outcome`. */
    reason: text("reason").notNull(),
    /**
     * What the receipt said happened: `applied` (the write was made; the default) or `not_applied` (the tool owner says
     * nothing was applied). Only an `applied` one waits for its intent (`no_intent`).
     */
    outcome: text("outcome").$type<"applied" | "not_applied">().notNull().default("applied"),
    /** For a `not_applied` receipt: the tool's message, secrets redacted, bounded. */
    error: text("error"),
    message: text("message").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    appliedAt: timestamp("applied_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: "unapplied_receipts_pkey", columns: [t.tenantId, t.id] }),
    index("unapplied_receipts_effect_idx").on(t.tenantId, t.taskId, t.name),
  ],
);
