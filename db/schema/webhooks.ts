/**
 * Standard Webhooks in and out (docs/decisions/0040-standard-webhooks.md): sources that report operation outcomes,
 * and notification endpoints fed from a durable outbox.
 */
import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** A tool owner's system that may report what happened to a write (`POST /api/v1/webhooks/{name}`). */
export const webhookSources = pgTable(
  "webhook_sources",
  {
    tenantId: uuid("tenant_id").notNull(),
    name: text("name").notNull(),
    /** Actions (lower case) whose unknown effects this source settles by itself; others are pre-filled only. */
    trustedActions: text("trusted_actions")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "webhook_sources_pkey", columns: [t.tenantId, t.name] }),
    index("webhook_sources_name_idx").on(t.name),
  ],
);

/** A source's signing secrets (one, or two during a rotation), sealed with the server's key (never stored plain). */
export const webhookSourceSecrets = pgTable(
  "webhook_source_secrets",
  {
    tenantId: uuid("tenant_id").notNull(),
    source: text("source").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    /** AES-256-GCM of the `whsec_…` secret: `v1.<iv>.<tag>.<ciphertext>` (base64url). */
    sealed: text("sealed").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "webhook_source_secrets_pkey", columns: [t.tenantId, t.source, t.id] })],
);

/**
 * One row per accepted webhook message of a source (`webhook-id`): the dedupe key, and what the message reported
 * about an effect — evidence kept beside the effect, and whether it settled it.
 */
export const webhookMessages = pgTable(
  "webhook_messages",
  {
    tenantId: uuid("tenant_id").notNull(),
    source: text("source").notNull(),
    webhookId: text("webhook_id").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
    taskId: text("task_id"),
    sideEffect: text("side_effect"),
    idempotencyKey: text("idempotency_key").notNull(),
    externalOperationId: text("external_operation_id"),
    /** `applied` or `not_applied`. */
    outcome: text("outcome").notNull(),
    resultDigest: text("result_digest"),
    /** `settled` (trusted, it reconciled the effect), `evidence` (kept for a person), `unmatched` (no such key). */
    disposition: text("disposition").notNull(),
    auditSeq: integer("audit_seq"),
  },
  (t) => [
    primaryKey({ name: "webhook_messages_pkey", columns: [t.tenantId, t.source, t.webhookId] }),
    index("webhook_messages_key_idx").on(t.tenantId, t.idempotencyKey),
  ],
);

/** Where notifications go (`POST /api/v1/settings/notification-endpoints`). */
export const notificationEndpoints = pgTable(
  "notification_endpoints",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    /** `standard` (the JSON payload) or `slack` (a Slack-compatible `{text, blocks}` message). */
    format: text("format").notNull(),
    sealedSecret: text("sealed_secret").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "notification_endpoints_pkey", columns: [t.tenantId, t.id] })],
);

/** Per-workspace notification settings: whether endpoints may be on loopback or private addresses. */
export const notificationSettings = pgTable("notification_settings", {
  tenantId: uuid("tenant_id").primaryKey(),
  allowPrivateAddresses: boolean("allow_private_addresses").notNull().default(false),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The durable outbox and delivery log: one row per (event, endpoint), written in the transaction of the fact that
 * causes it. `id` is the `webhook-id` of every attempt of that delivery.
 */
export const notificationDeliveries = pgTable(
  "notification_deliveries",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: text("id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    event: text("event").notNull(),
    /** Ids, names, reasons and a link only. */
    payload: jsonb("payload").notNull(),
    /** `pending`, `delivered`, `failed` (gave up after the last attempt). */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** The attempt after which it is given up (`failed`); "send again" raises it. */
    maxAttempts: integer("max_attempts").notNull().default(8),
    lastAttemptAt: timestamp("last_attempt_at", { withTimezone: true }),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: "notification_deliveries_pkey", columns: [t.tenantId, t.id] }),
    index("notification_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
    index("notification_deliveries_endpoint_idx").on(t.tenantId, t.endpointId, sql`${t.createdAt} desc`),
  ],
);
