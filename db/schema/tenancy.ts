/**
 * Tenants, people and their roles, and runtime API keys.
 * Users are global (one login, many tenants); everything else leads with tenant_id (docs/architecture.md#scale).
 */
import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { apiKeyScopeEnum, roleEnum } from "./enums";

export const tenants = pgTable(
  "tenants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * Set when a workspace bundle was imported into this workspace: from then on its custody records (tasks,
     * events, side effects, approvals, policies, maps, audit) are read-only (docs/decisions/0038-workspace-export.md).
     */
    readOnlySince: timestamp("read_only_since", { withTimezone: true }),
    /** sha256 (hex) of the imported workspace bundle, with its source workspace's slug and export time. */
    importedFrom: jsonb("imported_from").$type<{ digest: string; slug: string; exported_at: string } | null>(),
  },
  (t) => [uniqueIndex("tenants_slug_key").on(t.slug)],
);

export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** Stored lower-cased. */
    email: text("email").notNull(),
    name: text("name").notNull(),
    /** argon2id PHC string; never the password. */
    passwordHash: text("password_hash").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("users_email_key").on(t.email)],
);

export const memberships = pgTable(
  "memberships",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: roleEnum("role").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ name: "memberships_pkey", columns: [t.tenantId, t.userId] }),
    index("memberships_user_idx").on(t.userId),
  ],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    id: uuid("id").notNull().defaultRandom(),
    name: text("name").notNull(),
    /** First characters of the key, shown in lists so people can tell keys apart. */
    displayPrefix: text("display_prefix").notNull(),
    /** sha256 hex of the whole key; the key itself is shown once and never stored. */
    keyHash: text("key_hash").notNull(),
    createdBy: uuid("created_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /** The key is refused (401 api_key_expired) from this instant on; null = never expires. */
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    /** What the key may do (docs/decisions/0044-api-key-scopes.md); keys made before scopes are `full`. */
    scope: apiKeyScopeEnum("scope").notNull().default("full"),
    /** With scope `task_prefix`: the key acts only on tasks whose id starts with this (1–100 characters). */
    taskPrefix: text("task_prefix"),
  },
  (t) => [
    check(
      "api_keys_task_prefix_check",
      sql`(${t.scope} = 'task_prefix') = (${t.taskPrefix} is not null and length(${t.taskPrefix}) between 1 and 100)`,
    ),
    primaryKey({ name: "api_keys_pkey", columns: [t.tenantId, t.id] }),
    // Looked up before the tenant is known; api_keys is a small reference table (docs/decisions/0002-api-keys.md).
    uniqueIndex("api_keys_hash_key").on(t.keyHash),
    index("api_keys_tenant_created_idx").on(t.tenantId, sql`${t.createdAt} desc`),
  ],
);
