/**
 * Spending limits (docs/concepts.md#spending-limits, decision 0033): the active policy may give an action a limit per
 * principal and period in one currency; an intent declares its write's `amount` and `currency`, and a write over what
 * remains needs an approval. What was spent is what the writes that went declared (`spend_records`), while their effect
 * is in flight, completed or unknown.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { canonicalName } from "../names";
import { durationSeconds } from "../policies/document";
import { policyDocumentCached } from "../policies/egress";

/** Where a write stands against its action's spending limit. */
export type SpendStanding = {
  limit: number;
  currency: string;
  period_seconds: number;
  policy_version: number;
  /** What the principal's writes of the action spent in the period, this write excluded. */
  spent: number;
  /** Whether this write's amount is more than what remains. */
  over: boolean;
};

/**
 * The spending limit standing of one write, in the caller's transaction (the deciding one): null when the write
 * declares no amount or no limit of the active policy applies. Takes a transaction lock on the principal, action and
 * currency, so concurrent writes under one limit decide in turn.
 */
export async function spendStanding(
  tx: Db,
  tenantId: string,
  taskId: string,
  write: { name: string; idempotencyKey: string; action: string; amount?: number; currency?: string },
): Promise<SpendStanding | null> {
  if (write.amount === undefined || write.currency === undefined) return null;
  const [ref] = await queryRows<{ version: number; digest: string; principal: string | null }>(
    tx,
    sql`select p.version, p.digest, (select t.principal from tasks t where t.tenant_id = p.tenant_id and t.task_id = ${taskId}) as principal
        from policy_versions p where p.tenant_id = ${tenantId} and p.activated_at is not null
        order by p.activated_at desc limit 1`,
  );
  if (!ref) return null;
  const { document } = await policyDocumentCached(tx, tenantId, ref);
  const action = canonicalName(write.action);
  const rule = (document?.spending_limits ?? []).find(
    (l) => canonicalName(l.action) === action && l.currency === write.currency,
  );
  if (!rule) return null;
  const principal = canonicalName(ref.principal ?? "");
  const period = durationSeconds(rule.period);
  const lockKey = ["spend", tenantId, principal, action, write.currency].join("\u001f");
  const [row] = await queryRows<{ spent: number | string | null }>(
    tx,
    sql`select pg_advisory_xact_lock(hashtextextended(${lockKey}, 0)) is null as locked,
               (select coalesce(sum(r.amount), 0) from spend_records r
                 join side_effects s on s.tenant_id = r.tenant_id and s.task_id = r.task_id and s.name = r.side_effect
                   and s.idempotency_key = r.idempotency_key and s.status in ('in_flight', 'completed', 'unknown')
                 where r.tenant_id = ${tenantId} and r.principal = ${principal} and r.action = ${action}
                   and r.currency = ${write.currency} and r.spent_at > now() - make_interval(secs => ${period})
                   and not (r.task_id = ${taskId} and r.side_effect = ${write.name} and r.idempotency_key = ${write.idempotencyKey})
               ) as spent`,
  );
  const spent = Number(row?.spent ?? 0);
  return {
    limit: rule.amount,
    currency: rule.currency,
    period_seconds: period,
    policy_version: ref.version,
    spent,
    over: spent + write.amount > rule.amount,
  };
}

/** Records what a write that went declared it spends (its intent's go), in the deciding transaction. */
export async function recordSpend(
  tx: Db,
  tenantId: string,
  taskId: string,
  write: { name: string; idempotencyKey: string; action: string; amount?: number; currency?: string },
): Promise<void> {
  if (write.amount === undefined || write.currency === undefined) return;
  await tx.execute(sql`
    insert into spend_records (tenant_id, task_id, side_effect, idempotency_key, principal, action, amount, currency)
    select t.tenant_id, t.task_id, ${write.name}, ${write.idempotencyKey}, lower(coalesce(t.principal, '')),
           ${canonicalName(write.action)}, ${write.amount}, ${write.currency}
    from tasks t where t.tenant_id = ${tenantId} and t.task_id = ${taskId}
    on conflict (tenant_id, task_id, side_effect, idempotency_key)
      do update set amount = excluded.amount, currency = excluded.currency, spent_at = now()`);
}
