/**
 * Seeds one long run straight into PostgreSQL (one `INSERT … SELECT generate_series`, no API round trips): a task
 * with `events` events over `attempts` sandbox attempts, one second apart, ending in `run.interrupted`. Used by the
 * timeline benchmark (`npm run bench -- timeline`) and the timeline integration tests; it bypasses ingest on
 * purpose (what is measured is reading).
 *
 * Each attempt k holds an equal share of the events: `sandbox.created` (environment `sbx-k`, attempt k) first, then
 * tool calls paired by `call_id`, credential uses, egress, checkpoints and snapshots, and `sandbox.destroyed` last
 * (except the final attempt, whose last event is the run's `run.interrupted`).
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db";

/** What {@link seedLongRun} wrote. */
export type LongRun = {
  taskId: string;
  events: number;
  attempts: number;
  first: Date;
  last: Date;
  lastEventId: string;
  interruptedId: string;
};

/** Inserts the task row and its events. The caller owns `tenantId` (an existing tenant). */
export async function seedLongRun(
  db: Db,
  opts: { tenantId: string; taskId: string; events: number; attempts: number; start?: Date },
): Promise<LongRun> {
  const { tenantId, taskId, events: n, attempts } = opts;
  const start = opts.start ?? new Date(Date.now() - n * 1000 - 60_000);
  await db.execute(sql`insert into tasks (tenant_id, task_id, phase, current_attempt, principal)
                       values (${tenantId}, ${taskId}, 'working', ${attempts}, 'tenant/bench:user/1')`);
  await db.execute(sql`
    insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, environment_id, attempt, attrs, retention_class)
    select ${tenantId}::uuid, ${taskId} || ':' || i, ${taskId},
           (case when kind in ('sandbox.created', 'sandbox.destroyed', 'snapshot.saved') then 'environment'
                 when kind in ('run.interrupted', 'checkpoint.saved') then 'session'
                 when kind = 'credential.used' then 'vault'
                 else 'tools' end)::event_plane,
           kind,
           ${start.toISOString()}::timestamptz + make_interval(secs => i),
           'sbx-' || k, k,
           case when kind = 'tool.called' then jsonb_build_object('call_id', 'c' || i, 'tool', 'fetch_page')
                when kind = 'tool.completed' then jsonb_build_object('call_id', 'c' || (i - 1), 'tool', 'fetch_page')
                when kind = 'credential.used' then jsonb_build_object('credential_ref', 'records-api', 'host', 'records.example.com')
                when kind = 'egress.allowed' then jsonb_build_object('host', 'records.example.com')
                when kind = 'run.interrupted' then jsonb_build_object('reason', 'sandbox lost')
                else '{}'::jsonb end,
           custody_event_retention_class(kind)
    from (
      select i, k,
             case when i = ${n - 1} then 'run.interrupted'
                  when i = seg_start then 'sandbox.created'
                  when i = seg_end and k < ${attempts} then 'sandbox.destroyed'
                  when (i - seg_start) % 10 in (1, 3, 5) and i + 1 < seg_end then 'tool.called'
                  when (i - seg_start) % 10 in (2, 4, 6) then 'tool.completed'
                  when (i - seg_start) % 10 = 7 then 'credential.used'
                  when (i - seg_start) % 10 = 8 then 'egress.allowed'
                  when (i - seg_start) % 10 = 9 then 'checkpoint.saved'
                  else 'snapshot.saved' end as kind
      from (
        select i, k,
               ((k - 1)::bigint * ${n} + ${attempts} - 1) / ${attempts} as seg_start,
               (k::bigint * ${n} + ${attempts} - 1) / ${attempts} - 1 as seg_end
        from (select i, (i::bigint * ${attempts} / ${n})::int + 1 as k from generate_series(0, ${n - 1}) as i) a
      ) b
    ) c`);
  return {
    taskId,
    events: n,
    attempts,
    first: start,
    last: new Date(start.getTime() + (n - 1) * 1000),
    lastEventId: `${taskId}:${n - 1}`,
    interruptedId: `${taskId}:${n - 1}`,
  };
}
