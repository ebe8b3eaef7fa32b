/**
 * Per-tenant settings that the resume gate and reconcile read.
 */
import { integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

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
