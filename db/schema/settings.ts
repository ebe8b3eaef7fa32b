/**
 * Per-tenant settings that the resume gate and reconcile read.
 */
import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** A tool owner's lookup endpoint: `GET {url}?idempotency_key=…` answers whether a write happened. */
export const toolLookups = pgTable(
  "tool_lookups",
  {
    tenantId: uuid("tenant_id").notNull(),
    tool: text("tool").notNull(),
    url: text("url").notNull(),
    timeoutMs: integer("timeout_ms").notNull().default(3000),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "tool_lookups_pkey", columns: [t.tenantId, t.tool] })],
);

/** Principals whose authority was withdrawn; the resume gate stops their tasks (`principal_revoked`). */
export const principalRevocations = pgTable(
  "principal_revocations",
  {
    tenantId: uuid("tenant_id").notNull(),
    principal: text("principal").notNull(),
    reason: text("reason").notNull(),
    revokedBy: text("revoked_by").notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "principal_revocations_pkey", columns: [t.tenantId, t.principal] })],
);

/**
 * How long a workspace keeps its event history, and whether a task may be deleted only after an export
 * (docs/decisions/0054-event-partitions-and-retention.md). One row per workspace; none means the defaults: keep every
 * event forever, and no export required.
 */
export const retentionSettings = pgTable(
  "retention_settings",
  {
    tenantId: uuid("tenant_id").notNull(),
    /**
     * Days an event of the tool traffic (not the facts the resume gate judges by) is kept after it was received; null
     * keeps it forever. Whole months of events are dropped once every event in them is older.
     */
    eventRetentionDays: integer("event_retention_days"),
    /** A task may be deleted only when a workspace export was taken after its last change. */
    exportBeforeDelete: boolean("export_before_delete").notNull().default(false),
    updatedBy: text("updated_by"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "retention_settings_pkey", columns: [t.tenantId] }),
    check(
      "retention_settings_days_check",
      sql`${t.eventRetentionDays} is null or ${t.eventRetentionDays} between 1 and 36500`,
    ),
  ],
);
