/**
 * The attention queue (DESIGN.md "Pages" `/`): what needs a person now — side effects whose outcome is
 * unknown and writes whose lease has expired. Approvals and stopped runs join it with their issues.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { expireLeases } from "@/db/queries/side-effects";
import { isoUtc } from "@/db/queries/sql-helpers";
import { authorize, type Actor } from "../authz";

export type AttentionItem = {
  kind: "side_effect_unknown";
  task_id: string;
  side_effect: string;
  idempotency_key: string;
  reason: string | null;
  since: string;
};

/** Up to `limit` items, oldest first (the longest-waiting first). @throws DomainError forbidden */
export async function attentionQueue(db: Db, actor: Actor, limit = 100): Promise<AttentionItem[]> {
  authorize(actor, "tasks.read");
  await expireLeases(db, actor.tenantId);
  const rows = await queryRows<{ task_id: string; name: string; idempotency_key: string; status_reason: string | null; since: string }>(
    db,
    sql`select task_id, name, idempotency_key, status_reason, ${isoUtc("updated_at")} as since
        from side_effects where tenant_id = ${actor.tenantId} and status = 'unknown'
        order by updated_at limit ${limit}`,
  );
  return rows.map((r) => ({
    kind: "side_effect_unknown",
    task_id: r.task_id,
    side_effect: r.name,
    idempotency_key: r.idempotency_key,
    reason: r.status_reason,
    since: r.since,
  }));
}
