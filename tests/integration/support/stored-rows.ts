/**
 * Direct reads of the stored rows, for assertions: side effects, audit rows, everything the custody routes may
 * write for one task, and what refusals left behind.
 * Everything is per test: no shared mutable state.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { Receipt } from "@/lib/contract/api";
import type { AuditAction } from "@/lib/domain/audit/actions";

export type EffectRow = {
  name: string;
  idempotency_key: string;
  status: string;
  payload_digest: string | null;
  receipt: Receipt | null;
  last_reconcile: Record<string, unknown> | null;
  lease_expires_at: string | null;
  intent_at: string | null;
  status_reason: string | null;
  retry_status: string | null;
  updated_at: string;
};

/** One side-effect row as stored (direct SQL, bypassing the API). */
export async function effectRow(
  db: Db,
  tenantId: string,
  taskId: string,
  name: string,
): Promise<EffectRow | undefined> {
  const rows = await queryRows<EffectRow>(
    db,
    sql`select name, idempotency_key, status::text as status, payload_digest, receipt, last_reconcile,
               lease_expires_at::text as lease_expires_at, intent_at::text as intent_at, status_reason,
               retry_status::text as retry_status, updated_at::text as updated_at
        from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  return rows[0];
}

export type AuditRow = {
  seq: number;
  action: string;
  target: string;
  actor_kind: string;
  actor_label: string;
  details: Record<string, unknown>;
};

/** The tenant's audit rows (optionally one action), oldest first. */
export async function auditRows(db: Db, tenantId: string, action?: AuditAction): Promise<AuditRow[]> {
  const rows = await queryRows<AuditRow & { seq: string | number }>(
    db,
    sql`select seq, action, target, actor_kind::text as actor_kind, actor_label, details from audit_log
        where tenant_id = ${tenantId} ${action ? sql`and action = ${action}` : sql``} order by seq`,
  );
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/**
 * Everything the custody routes may write for one tenant and task, as one comparable value: the side-effect rows,
 * the audit log size, and the event and checkpoint counts. Two equal snapshots mean nothing was written.
 */
export async function custodySnapshot(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{ effects: unknown; counts: Record<string, string> }> {
  const effects = await queryRows(
    db,
    sql`select name, idempotency_key, status::text as status, payload_digest, receipt, last_reconcile,
               lease_expires_at::text as lease, intent_at::text as intent_at, status_reason, updated_at::text as updated_at
        from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} order by name`,
  );
  const [counts] = await queryRows<{ audit: string; events: string; checkpoints: string; lookups: string }>(
    db,
    // Refused intents and receipts are audited and a refused receipt is kept as evidence, but neither changes the
    // custody state: see refusals() for those.
    sql`select (select count(*) from audit_log where tenant_id = ${tenantId} and not details ? 'refused') as audit,
               (select count(*) from events where tenant_id = ${tenantId} and task_id = ${taskId}) as events,
               (select count(*) from task_checkpoints where tenant_id = ${tenantId} and task_id = ${taskId}) as checkpoints,
               (select count(*) from tool_lookups where tenant_id = ${tenantId}) as lookups`,
  );
  return { effects, counts: counts ?? {} };
}

/**
 * What refusals left behind for a tenant's task: the audit rows of refused intents and receipts (`refused` = their
 * codes, oldest first) and the receipts kept as evidence (`kept` = their reasons).
 */
export async function refusals(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{ refused: string[]; kept: string[] }> {
  const audit = await queryRows<{ code: string }>(
    db,
    sql`select details ->> 'refused' as code from audit_log
        where tenant_id = ${tenantId} and details ? 'refused' and target like ${`side_effect:${taskId}/%`} order by seq`,
  );
  const kept = await queryRows<{ reason: string }>(
    db,
    sql`select reason from unapplied_receipts where tenant_id = ${tenantId} and task_id = ${taskId} order by received_at, id`,
  );
  return { refused: audit.map((r) => r.code), kept: kept.map((r) => r.reason) };
}
