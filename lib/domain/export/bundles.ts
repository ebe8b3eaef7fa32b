/**
 * The record of bundles this server produced and verified (`export_bundles`, decision 0038): a custody map's export
 * and artifacts layers link one by its sha256, and an exercise's "retrieve the result and export" step records one.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { BundleVerificationJson } from "@/db/schema/exports";

/** One recorded bundle, as the API shows it. */
export type BundleRecord = {
  digest: string;
  scope: "task" | "workspace";
  task_id: string | null;
  size_bytes: number;
  verification: BundleVerificationJson;
  created_by: string;
  created_at: string;
};

/** The recorded bundle with this sha256 (lower-case hex) in the tenant, or null. */
export async function findBundle(db: Db, tenantId: string, digest: string): Promise<BundleRecord | null> {
  const [row] = await queryRows<BundleRecord>(
    db,
    sql`select digest, scope, task_id, size_bytes::float8 as size_bytes, verification, created_by,
               to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at
        from export_bundles where tenant_id = ${tenantId} and digest = ${digest}`,
  );
  return row ?? null;
}

/**
 * Records a bundle and the verifier's result; the same bundle recorded again keeps its first record (a bundle's
 * bytes decide its digest, so its verification cannot differ).
 * @param bundle digest (sha256 hex), scope, task id of a task bundle, size in bytes, verification, who made it.
 */
export async function recordBundle(db: Db, tenantId: string, bundle: Omit<BundleRecord, "created_at">): Promise<void> {
  await db.execute(
    sql`insert into export_bundles (tenant_id, digest, scope, task_id, size_bytes, verification, created_by)
        values (${tenantId}, ${bundle.digest}, ${bundle.scope}, ${bundle.task_id}, ${bundle.size_bytes},
                ${JSON.stringify(bundle.verification)}::jsonb, ${bundle.created_by})
        on conflict (tenant_id, digest) do nothing`,
  );
}
