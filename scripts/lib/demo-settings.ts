/**
 * Tenant settings the demo needs: the records service registered as the lookup endpoint of the
 * `update_record` and `publish_report` tools, so a responder can see the external system's answer (and its count of
 * writes applied under the key) when reconciling or checking a completed write. Registered once:
 * an owner's later edit under Settings is kept across restarts.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db";

export async function seedDemoSettings(db: Db, tenantId: string, opts: { recordsUrl: string }): Promise<void> {
  await db.execute(sql`
    insert into tool_lookups (tenant_id, tool, url, timeout_ms)
    values (${tenantId}, 'update_record', ${opts.recordsUrl + "/lookup"}, 3000),
           (${tenantId}, 'publish_report', ${opts.recordsUrl + "/lookup"}, 3000)
    on conflict (tenant_id, tool) do nothing`);
}
