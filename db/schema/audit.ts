/**
 * Append-only audit log: every human decision and every API mutation (docs/concepts.md#audit-log).
 * Each entry carries the hash of the previous entry of the same tenant; a trigger forbids UPDATE/DELETE.
 */
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { actorKindEnum } from "./enums";

export const auditLog = pgTable(
  "audit_log",
  {
    tenantId: uuid("tenant_id").notNull(),
    /** Position in the tenant's chain, 1-based. */
    seq: bigint("seq", { mode: "number" }).notNull(),
    at: timestamp("at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    actorKind: actorKindEnum("actor_kind").notNull(),
    actorId: text("actor_id").notNull(),
    /** Display label of the actor (email or key name), for people reading the log. */
    actorLabel: text("actor_label").notNull(),
    action: text("action").notNull(),
    target: text("target").notNull(),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    prevHash: text("prev_hash").notNull(),
    hash: text("hash").notNull(),
  },
  (t) => [
    primaryKey({ name: "audit_log_pkey", columns: [t.tenantId, t.seq] }),
    index("audit_log_tenant_target_idx").on(t.tenantId, t.target),
    // Settings → Retention's retention runs (decision 0054), newest first.
    index("audit_log_retention_runs_idx")
      .on(t.tenantId, sql`${t.seq} desc`)
      .where(sql`${t.action} = 'events.retention_applied'`),
  ],
);

/**
 * The head of each tenant's audit chain: the last entry's seq and hash (and the hash before it). appendAudit moves it
 * and inserts the entry in one statement; the row's lock serializes a tenant's entries so the chain never forks
 * (lib/domain/audit/append.ts, docs/decisions/0014-hot-write-paths.md). Backfilled from audit_log by its migration.
 */
export const auditHeads = pgTable("audit_heads", {
  tenantId: uuid("tenant_id").primaryKey(),
  seq: bigint("seq", { mode: "number" }).notNull(),
  prevHash: text("prev_hash").notNull(),
  hash: text("hash").notNull(),
});

/**
 * Audit entries written by the hot paths (intents, receipts, checkpoints) in the transaction of the change they
 * record, not yet in the chain. `seal_audit(tenant)` (migration 0018) moves them into `audit_log` in commit order,
 * many per transaction, so a tenant's writers no longer queue on the chain's head across their own commits
 * (lib/domain/audit/append.ts, docs/decisions/0020-audit-sealing.md). `json_prefix || seq || json_suffix` is the entry's
 * RFC 8785 JSON, as {@link appendAudit} hashes it.
 */
export const auditPending = pgTable(
  "audit_pending",
  {
    tenantId: uuid("tenant_id").notNull(),
    /** Arrival order across tenants; entries of a tenant are sealed in this order. */
    id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true, precision: 6 }).notNull(),
    actorKind: actorKindEnum("actor_kind").notNull(),
    actorId: text("actor_id").notNull(),
    actorLabel: text("actor_label").notNull(),
    action: text("action").notNull(),
    target: text("target").notNull(),
    details: jsonb("details").$type<Record<string, unknown>>().notNull(),
    jsonPrefix: text("json_prefix").notNull(),
    jsonSuffix: text("json_suffix").notNull(),
  },
  (t) => [primaryKey({ name: "audit_pending_pkey", columns: [t.tenantId, t.id] })],
);
