/**
 * Side-effect status driven by the events a runtime reports (issue "Runtime API v1", DESIGN.md "Side effect"):
 * - `side_effect.intent` → `in_flight` (a new effect, or one that was not_started / approved / failed), with the
 *   default lease counted from the event's time, so a write whose receipt never comes turns `unknown`;
 * - `side_effect.receipt` → `completed` (from in_flight only, and only when the receipt happened before the lease ran
 *   out, by the events' clock — as the receipt route judges by the server's: an `unknown` or expired effect is
 *   settled by a person), with the receipt the event carries (validation requires its `external_operation_id`;
 *   nothing is made up);
 * - an intent reported while the task's principal is revoked leaves the effect `unknown`: it had no authority.
 * These are facts the runtime reports, kept as immutable events on the timeline: the runtime's authority is
 * checked where it asks to write (the intent route), and the audit log keeps people's and routes' decisions.
 * - `run.interrupted`, or `sandbox.created` with a higher attempt than any before → every `in_flight`
 *   effect whose intent came earlier becomes `unknown` (request sent, outcome not recorded).
 * Every transition is a guarded UPDATE … WHERE status = … so replays and races cannot regress a status.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { PreparedEvent } from "../events/ingest";
import { DEFAULT_LEASE_SECONDS } from "./intent";

type Attrs = {
  name?: string;
  idempotency_key?: string;
  payload_digest?: string;
  action?: string;
  tool?: string;
  external_operation_id?: string;
  result_digest?: string;
  completed_at?: string;
};

/** Applies the transitions of newly stored events, in time order. */
export async function applyEventTransitions(tx: Db, tenantId: string, events: PreparedEvent[]): Promise<void> {
  const ordered = [...events].sort((a, b) =>
    a.occurred_at === b.occurred_at ? a.id.localeCompare(b.id) : Date.parse(a.occurred_at) - Date.parse(b.occurred_at),
  );
  for (const e of ordered) {
    const attrs = e.attrs as Attrs;
    switch (e.type) {
      case "sandbox.created": {
        if (!e.attempt) break;
        const raised = await queryRows(
          tx,
          sql`update tasks set current_attempt = ${e.attempt}, updated_at = now()
              where tenant_id = ${tenantId} and task_id = ${e.task_id} and current_attempt < ${e.attempt}
              returning task_id`,
        );
        if (raised.length === 0) break;
        await tx.execute(sql`
          update side_effects
          set status = 'unknown', updated_at = now(),
              status_reason = ${`A new sandbox (attempt ${e.attempt}) started before a receipt was recorded.`}
          where tenant_id = ${tenantId} and task_id = ${e.task_id} and status = 'in_flight'
            and (intent_attempt < ${e.attempt} or (intent_attempt is null and intent_at < ${e.occurred_at}::timestamptz))`);
        break;
      }
      case "run.interrupted": {
        await tx.execute(sql`
          update side_effects
          set status = 'unknown', updated_at = now(),
              status_reason = ${`The run was interrupted (event ${e.id}) before a receipt was recorded.`}
          where tenant_id = ${tenantId} and task_id = ${e.task_id} and status = 'in_flight'
            and intent_at <= ${e.occurred_at}::timestamptz`);
        break;
      }
      case "side_effect.intent": {
        if (!attrs.name || !attrs.idempotency_key) break;
        const inserted = await queryRows(
          tx,
          sql`insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, payload_digest,
                                        intent_at, intent_attempt, lease_expires_at, retry_status)
              values (${tenantId}, ${e.task_id}, ${attrs.name}, ${attrs.idempotency_key}, 'in_flight',
                      ${attrs.tool ?? attrs.name}, ${attrs.action ?? null}, ${attrs.payload_digest ?? null},
                      ${e.occurred_at}::timestamptz, ${e.attempt ?? null},
                      ${e.occurred_at}::timestamptz + make_interval(secs => ${DEFAULT_LEASE_SECONDS}), 'not_started')
              on conflict do nothing
              returning name`,
        );
        if (inserted.length) {
          await flagIfRevoked(tx, tenantId, e.task_id, attrs.name);
          break;
        }
        await tx.execute(sql`
          update side_effects
          set status = 'in_flight', updated_at = now(), status_reason = null,
              retry_status = case when status = 'approved' then 'approved'::side_effect_status else 'not_started'::side_effect_status end,
              intent_at = ${e.occurred_at}::timestamptz,
              intent_attempt = coalesce(${e.attempt ?? null}::integer, intent_attempt),
              lease_expires_at = ${e.occurred_at}::timestamptz + make_interval(secs => ${DEFAULT_LEASE_SECONDS}),
              payload_digest = coalesce(payload_digest, ${attrs.payload_digest ?? null}::text),
              action = coalesce(${attrs.action ?? null}::text, action)
          where tenant_id = ${tenantId} and task_id = ${e.task_id} and name = ${attrs.name}
            and idempotency_key = ${attrs.idempotency_key}
            and status in ('not_started', 'approved', 'failed')`);
        await flagIfRevoked(tx, tenantId, e.task_id, attrs.name);
        break;
      }
      case "side_effect.receipt": {
        if (!attrs.name || !attrs.idempotency_key || !attrs.external_operation_id) break;
        const receipt = {
          external_operation_id: attrs.external_operation_id,
          result_digest: attrs.result_digest ?? null,
          completed_at: attrs.completed_at ?? e.occurred_at,
        };
        await tx.execute(sql`
          update side_effects
          set status = 'completed', updated_at = now(), status_reason = null, lease_expires_at = null,
              receipt = ${JSON.stringify(receipt)}::jsonb
          where tenant_id = ${tenantId} and task_id = ${e.task_id} and name = ${attrs.name}
            and idempotency_key = ${attrs.idempotency_key}
            and status = 'in_flight' and (lease_expires_at is null or lease_expires_at >= ${e.occurred_at}::timestamptz)`);
        break;
      }
    }
  }
}

/**
 * A write reported while the task's principal is revoked had no authority: the effect is marked `unknown` (the
 * intent route would have refused it with principal_revoked), so a person reconciles it and the gate stops.
 */
async function flagIfRevoked(tx: Db, tenantId: string, taskId: string, name: string): Promise<void> {
  await tx.execute(sql`
    update side_effects s
    set status = 'unknown', updated_at = now(),
        status_reason = 'An intent was reported while the task''s principal was revoked: the write had no authority.'
    from tasks t, principal_revocations r
    where s.tenant_id = ${tenantId} and s.task_id = ${taskId} and s.name = ${name} and s.status = 'in_flight'
      and t.tenant_id = s.tenant_id and t.task_id = s.task_id
      and r.tenant_id = t.tenant_id and r.principal = t.principal`);
}
