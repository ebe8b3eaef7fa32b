/**
 * Bundles this server produced and verified: the evidence a custody map's export and artifacts layers link, and
 * what an interruption exercise's "retrieve the result and export" step records (docs/decisions/0038-workspace-export.md).
 * The bundle's bytes are not kept: its sha256 and the verifier's result are.
 */
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * The verifier's answer for one bundle: every check passed (`ok: true`), or the first that failed (`ok: false`); a
 * workspace bundle the server streamed is recorded built but not verified (`ok: null`, `checks: 0`; decision 0038).
 */
export type BundleVerificationJson = { ok: boolean | null; checks: number; first_failure: string | null };

export const exportBundles = pgTable(
  "export_bundles",
  {
    tenantId: uuid("tenant_id").notNull(),
    /** sha256 (lower-case hex) of the whole `.tar.gz`. */
    digest: text("digest").notNull(),
    /** `task` (one task's bundle) or `workspace`. */
    scope: text("scope").notNull(),
    /** The task of a task bundle. */
    taskId: text("task_id"),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    verification: jsonb("verification").$type<BundleVerificationJson>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "export_bundles_pkey", columns: [t.tenantId, t.digest] }),
    index("export_bundles_tenant_created_idx").on(t.tenantId, sql`${t.createdAt} desc`),
  ],
);
