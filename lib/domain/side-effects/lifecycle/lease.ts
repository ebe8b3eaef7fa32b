/**
 * The clock's one transition, `lease_expired` (transitions.ts): an `in_flight` effect whose lease has run out becomes
 * `unknown` (docs/concepts.md#side-effect-lifecycle: request sent, no receipt). There is no timer: the first read or
 * write of the task after the lease ran out makes the move — the gate's facts statement, an intent's lock statement, a
 * batch of events, a receipt, a reconcile, the task page and the attention queue — all through {@link leaseExpiryCtes},
 * so the rule and its audit entry are written once. Each moved effect gets a `side_effect.transitioned` entry by the
 * system actor `clock`, written by the same statement (so it commits with the move, and costs nothing when no lease ran
 * out).
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { auditPendingRowsSql, notePendingAudit, rowValue, withAuditSealed } from "../../audit/append";
import { clockActor } from "./moves";
import { statusGuard, statusLiteral } from "./sql";
import { TRANSITION_AUDIT_ACTION, TRANSITIONS } from "./transitions";

/** The status reason an expired lease leaves on its effect. */
export const LEASE_EXPIRED_REASON = "The lease expired before a receipt was recorded.";

/**
 * SQL: two CTEs to put after `with` — `expired` moves the effects of the task (every task of the tenant when
 * `taskId` is null) whose lease has run out to `unknown` and returns their `task_id, name, idempotency_key,
 * lease_expires_at`; `expired_audit` writes their entries and returns their `id`s (see {@link LEASE_AUDIT_UPTO}).
 * The guard is `status = 'in_flight'` as a literal, which implies the partial index `side_effects_open_idx` even
 * under a generic plan (decision 0022).
 */
export function leaseExpiryCtes(tenantId: string, taskId: string | null): SQL {
  const t = TRANSITIONS.lease_expired;
  return sql`expired as (
      update side_effects
      set status = ${statusLiteral("lease_expired", "unknown")}, updated_at = now(), status_reason = ${LEASE_EXPIRED_REASON}
      where tenant_id = ${tenantId} ${taskId === null ? sql`` : sql`and task_id = ${taskId}`}
        and ${statusGuard("lease_expired")} and lease_expires_at is not null and lease_expires_at < now()
      returning task_id, name, idempotency_key, lease_expires_at),
    expired_audit as (${auditPendingRowsSql(
      clockActor(tenantId),
      {
        action: TRANSITION_AUDIT_ACTION,
        target: rowValue(sql`'side_effect:' || x.task_id || '/' || x.name`),
        details: {
          transition: "lease_expired",
          from: t.from[0],
          to: t.to[0],
          idempotency_key: rowValue(sql`x.idempotency_key`),
          reason: LEASE_EXPIRED_REASON,
          lease_expires_at: rowValue(isoUtc("x.lease_expires_at")),
        },
      },
      sql`expired x`,
    )}),
    expired_notify as (${leaseExpiryNotificationsSql(tenantId)})`;
}

/**
 * SQL: the outbox rows (decision 0040) for the effects the `expired` CTE moved, written by the same statement so the
 * notification commits with the move: a `side_effect.unknown` per effect and a `task.needs_attention` per task, for
 * every endpoint of the tenant subscribed to them, with the ids, the names, the reason `lease_expired` and the task's
 * link (as lib/domain/notifications/facts.ts words them: task ids hold `[A-Za-z0-9._:-]`, of which only `:` is
 * escaped in a path). The fact's key names the lease's end, so the same expiry is queued once per endpoint. Nothing
 * is read or written when no lease ran out.
 */
function leaseExpiryNotificationsSql(tenantId: string): SQL {
  const link = sql`'/tasks/' || replace(x.task_id, ':', '%3A')`;
  const at = isoUtc("now()");
  return sql`insert into notification_deliveries (tenant_id, id, endpoint_id, event, payload)
      select e.tenant_id,
             'msg_' || substr(encode(sha256(convert_to(e.id::text || '|' || f.key, 'UTF8')), 'hex'), 1, 32),
             e.id, f.event, f.payload
      from (
        select 'side_effect.unknown' as event,
               'side_effect.unknown:' || x.task_id || '/' || x.name || ':lease:' || ${isoUtc("x.lease_expires_at")} as key,
               jsonb_build_object('type', 'side_effect.unknown', 'timestamp', ${at}, 'data', jsonb_build_object(
                 'task_id', x.task_id, 'side_effect', x.name, 'idempotency_key', x.idempotency_key,
                 'reason', 'lease_expired', 'link', ${link})) as payload
        from expired x
        union all
        select 'task.needs_attention',
               'task.needs_attention:' || x.task_id || ':lease:' || ${isoUtc("max(x.lease_expires_at)")},
               jsonb_build_object('type', 'task.needs_attention', 'timestamp', ${at}, 'data', jsonb_build_object(
                 'task_id', x.task_id, 'reason', 'side_effect_unknown', 'link', ${link}))
        from expired x
        group by x.task_id
      ) f
      join notification_endpoints e on e.tenant_id = ${tenantId} and f.event = any(e.events)
      on conflict (tenant_id, id) do nothing`;
}

/**
 * SQL: the highest audit id the {@link leaseExpiryCtes} of a statement wrote (null when no lease ran out); pass it to
 * `notePendingAudit` so the enclosing `withAuditSealed` seals the entries.
 */
export const LEASE_AUDIT_UPTO = sql`(select max(id) from expired_audit)`;

/**
 * Moves the effects whose lease ran out to `unknown`, for one task or (no `taskId`) every task of the tenant, with
 * their audit entries. Safe to call on every read (guarded). Inside a transaction the entries commit with it and the
 * enclosing `withAuditSealed` seals them; outside one, use {@link expireLeasesNow}.
 * @returns how many effects moved.
 */
export async function expireLeases(db: Db, tenantId: string, taskId?: string): Promise<number> {
  const [row] = await queryRows<{ moved: number; upto: string | number | null }>(
    db,
    sql`with ${leaseExpiryCtes(tenantId, taskId ?? null)}
        select (select count(*) from expired)::int as moved, ${LEASE_AUDIT_UPTO} as upto`,
  );
  notePendingAudit(row?.upto);
  return row?.moved ?? 0;
}

/** {@link expireLeases} as a statement of its own (outside a transaction), its entries sealed before it returns. */
export function expireLeasesNow(db: Db, tenantId: string, taskId?: string): Promise<number> {
  return withAuditSealed(db, tenantId, () => expireLeases(db, tenantId, taskId));
}
