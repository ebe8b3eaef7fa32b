/**
 * Task, checkpoint, artifact and timeline reads. SQL only; first argument db-or-transaction; tenant id required.
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "../index";
import { artifacts, events, taskCheckpoints, tasks } from "../schema";
import { selectList, type SelectedRow } from "./rows";
import { isoUtc, likeEscape } from "./sql-helpers";

/** The columns of a {@link TaskRow}. */
const TASK_FIELDS = [
  "task_id",
  "principal",
  "phase",
  "policy_version",
  "workflow",
  "latest_version",
  "current_attempt",
  "clock_skew_ms",
  "clock_skew_at",
  "clock_skew_note",
  "terminated_at",
  "terminated_by",
  "terminated_reason",
  "deleted_at",
  "deleted_by",
  "deletion_reason",
  "created_at",
] as const;

/** A task as {@link findTask} reads it (times as ISO 8601 UTC text; `clock_skew_ms` is a bigint: text on postgres.js). */
export type TaskRow = SelectedRow<typeof tasks, typeof TASK_FIELDS>;

const TASK_COLUMNS = selectList(tasks, TASK_FIELDS);

/** One task of a tenant, or undefined. */
export async function findTask(db: Db, tenantId: string, taskId: string): Promise<TaskRow | undefined> {
  const rows = await queryRows<TaskRow>(
    db,
    sql`select ${TASK_COLUMNS} from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return rows[0];
}

/**
 * Gives each task of the tenant that has no workflow the one its first `task.created` event (receive order) named
 * (decision 0049): what ingest does event by event, for rows written without it (a restored workspace). The same rule
 * as the backfill of migration 0032. Returns how many tasks it set.
 */
export async function fillTaskWorkflows(db: Db, tenantId: string): Promise<number> {
  const rows = await queryRows<{ task_id: string }>(
    db,
    sql`update tasks t set workflow = w.workflow
        from (select distinct on (e.task_id) e.task_id, e.attrs ->> 'workflow' as workflow
              from events e
              where e.tenant_id = ${tenantId} and e.type = 'task.created' and jsonb_typeof(e.attrs -> 'workflow') = 'string'
                and char_length(e.attrs ->> 'workflow') between 1 and 200 and btrim(e.attrs ->> 'workflow') = e.attrs ->> 'workflow'
              order by e.task_id, e.seq) w
        where t.tenant_id = ${tenantId} and t.task_id = w.task_id and t.workflow is null
        returning t.task_id`,
  );
  return rows.length;
}

/**
 * The tenant's workflows that tasks name, in order (the task list's workflow filter), at most `limit`. Each step is one
 * probe of tasks_tenant_workflow_idx for the next name (a loose index scan), so the cost follows the number of
 * workflows, not of tasks.
 */
export async function listTaskWorkflows(db: Db, tenantId: string, limit: number): Promise<string[]> {
  const rows = await queryRows<{ workflow: string }>(
    db,
    sql`with recursive w(workflow, n) as (
          (select t.workflow, 1 from tasks t where t.tenant_id = ${tenantId} and t.workflow is not null
           order by t.workflow limit 1)
          union all
          select (select t.workflow from tasks t where t.tenant_id = ${tenantId} and t.workflow > w.workflow
                  order by t.workflow limit 1), w.n + 1
          from w where w.workflow is not null and w.n < ${limit})
        select workflow from w where workflow is not null`,
  );
  return rows.map((r) => r.workflow);
}

export type TaskListRow = Omit<
  TaskRow,
  "clock_skew_ms" | "clock_skew_at" | "clock_skew_note" | "terminated_at" | "terminated_by" | "terminated_reason"
> & {
  created_cursor: string;
  /** The newest event's time, else the task's creation (ISO 8601 UTC, microseconds): the activity sort's key. */
  activity_at: string;
  terminated: boolean;
  event_count: string | number;
  last_event_at: string | null;
  unknown_side_effects: string | number;
  awaiting_approval_side_effects: string | number;
  principal_revoked: boolean;
};

/**
 * A task matches search text `q` when its id contains `q` (case-insensitive), or `q` is exactly one of its side
 * effects' idempotency keys, a sandbox id (`environment_id`) of one of its events, or a host (`attrs.host`,
 * case-insensitive) one of its egress or credential events names. The exact matches come from indexes that lead
 * with the tenant id (side_effects_tenant_key_key, events_tenant_environment_idx, events_tenant_host_idx) and
 * are evaluated once per query; the id match filters the tenant's tasks.
 */
function searchCondition(tenantId: string, q: string): SQL {
  return sql`(t.task_id ilike ${"%" + likeEscape(q) + "%"} or t.task_id in (
    select s.task_id from side_effects s where s.tenant_id = ${tenantId} and s.idempotency_key = ${q}
    union
    select e.task_id from events e where e.tenant_id = ${tenantId} and e.plane = 'environment' and e.environment_id = ${q}
    union
    select e.task_id from events e
      where e.tenant_id = ${tenantId} and (e.attrs ->> 'host') is not null and lower(e.attrs ->> 'host') = lower(${q})
  ))`;
}

/**
 * Runs by phase (the domain says which phases mean what: lib/domain/tasks/status.ts): `terminated` true / false — a
 * person ended it or not; `phasesIn` / `phasesNotIn` — the lower-cased phase is (not) one of these.
 */
export type PhaseFilter = { terminated?: boolean; phasesIn?: readonly string[]; phasesNotIn?: readonly string[] };

export type ListTasksOptions = {
  limit: number;
  /** `created` (newest first, the default here) or `activity` (most recent event first, else creation). */
  sort?: "created" | "activity";
  /** Keyset position: `createdAt` is the sort key's time (creation, or last activity when sorting by activity). */
  after?: { createdAt: string; taskId: string };
  /** Only runs whose phase passes this filter (phases compared lower-cased, as lib/domain/tasks/phases.ts does). */
  phaseFilter?: PhaseFilter;
  q?: string;
  phase?: string;
  status?: string;
  /** An egress or credential event of the task named this host (any case): events_tenant_host_idx. */
  host?: string;
  /** An event of the task named this credential reference: events_tenant_credential_ref_idx. */
  credentialRef?: string;
  /** The task, or one of its checkpoints, ran under this policy version. */
  policyVersion?: { number: number } | { text: string };
  /** The task's workflow is exactly this (tasks_tenant_workflow_idx). */
  workflow?: string;
};

/** Newest tasks first, keyset-paginated on (created_at, task_id); `q` as in {@link searchCondition}. */
export async function listTasks(db: Db, tenantId: string, opts: ListTasksOptions): Promise<TaskListRow[]> {
  return queryRows<TaskListRow>(db, listTasksQuery(tenantId, opts));
}

/** The statement {@link listTasks} runs (exported so a test can EXPLAIN it). */
export function listTasksQuery(tenantId: string, opts: ListTasksOptions): SQL {
  // Deleted tasks (tombstones, decision 0054) are listed under Settings → Retention, not here.
  const conds = [sql`t.tenant_id = ${tenantId}`, sql`t.deleted_at is null`];
  const byActivity = opts.sort === "activity";
  if (opts.after && !byActivity)
    conds.push(sql`(t.created_at, t.task_id) < (${opts.after.createdAt}::timestamptz, ${opts.after.taskId})`);
  if (opts.q) conds.push(searchCondition(tenantId, opts.q));
  if (opts.phase) conds.push(sql`t.phase = ${opts.phase}`);
  if (opts.workflow) conds.push(sql`t.workflow = ${opts.workflow}`);
  if (opts.host) {
    conds.push(sql`t.task_id in (select e.task_id from events e
      where e.tenant_id = ${tenantId} and (e.attrs ->> 'host') is not null and lower(e.attrs ->> 'host') = lower(${opts.host}))`);
  }
  if (opts.credentialRef) {
    conds.push(sql`t.task_id in (select e.task_id from events e
      where e.tenant_id = ${tenantId} and (e.attrs ->> 'credential_ref') is not null and e.attrs ->> 'credential_ref' = ${opts.credentialRef})`);
  }
  if (opts.policyVersion && "number" in opts.policyVersion) {
    // The SQL twin of policyVersionNumber (lib/domain/policies/version-name.ts): `3`, `v3`, `policy-v3`, any case.
    const n = opts.policyVersion.number;
    const num = (col: SQL) => sql`substring(btrim(${col}) from '(?i)^(?:policy-)?v?([0-9]{1,9})$')::int`;
    conds.push(sql`(${num(sql`t.policy_version`)} = ${n} or exists (select 1 from task_checkpoints c
      where c.tenant_id = t.tenant_id and c.task_id = t.task_id and ${num(sql`c.record ->> 'policy_version'`)} = ${n}))`);
  } else if (opts.policyVersion) {
    const text = opts.policyVersion.text;
    conds.push(sql`(t.policy_version = ${text} or exists (select 1 from task_checkpoints c
      where c.tenant_id = t.tenant_id and c.task_id = t.task_id and c.record ->> 'policy_version' = ${text}))`);
  }
  if (opts.phaseFilter) conds.push(...phaseFilterConditions(opts.phaseFilter));
  if (opts.status) {
    conds.push(
      sql`exists (select 1 from side_effects s where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.status = ${opts.status}::side_effect_status)`,
    );
  }
  const activity = sql`coalesce((select max(e.occurred_at) from events e where e.tenant_id = t.tenant_id and e.task_id = t.task_id), t.created_at)`;
  if (byActivity) {
    // Most recent activity first: the newest event of each task (events_tenant_task_time_idx answers each max), in
    // a keyset on (activity, task_id). It reads every matching task of the tenant to order them (decision 0043).
    return sql`select y.*, ${isoUtc("y.activity")} as activity_at from (
        ${listColumns(sql`p.activity`)}
        from (select t.task_id, ${activity} as activity from tasks t where ${sql.join(conds, sql` and `)}) p
        join tasks t on t.tenant_id = ${tenantId} and t.task_id = p.task_id
        ${opts.after ? sql`where (p.activity, p.task_id) < (${opts.after.createdAt}::timestamptz, ${opts.after.taskId})` : sql``}
        order by p.activity desc, p.task_id desc
        limit ${opts.limit}) y
      order by y.activity desc, y.task_id desc`;
  }
  return sql`select y.*, ${isoUtc("y.activity")} as activity_at from (
        ${listColumns(activity)} from tasks t where ${sql.join(conds, sql` and `)}
        order by t.created_at desc, t.task_id desc
        limit ${opts.limit}) y
      order by y.created_ts desc, y.task_id desc`;
}

/** The columns of a task list row (with `activity`, the sort key's timestamp, and `created_ts`). */
function listColumns(activity: SQL): SQL {
  return sql`select t.task_id, t.principal, t.phase, t.policy_version, t.workflow, t.latest_version, t.current_attempt,
               ${isoUtc("t.created_at")} as created_at, ${isoUtc("t.created_at")} as created_cursor, t.created_at as created_ts,
               ${activity} as activity, t.terminated_at is not null as terminated,
               (select count(*) from events e where e.tenant_id = t.tenant_id and e.task_id = t.task_id) as event_count,
               (select ${isoUtc("max(e.occurred_at)")} from events e where e.tenant_id = t.tenant_id and e.task_id = t.task_id) as last_event_at,
               (select count(*) from side_effects s where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.status = 'unknown') as unknown_side_effects,
               (select count(*) from side_effects s where s.tenant_id = t.tenant_id and s.task_id = t.task_id and s.status = 'awaiting_approval') as awaiting_approval_side_effects,
               exists (select 1 from principal_revocations r where r.tenant_id = t.tenant_id and r.principal = t.principal) as principal_revoked`;
}

/** SQL conditions on the task under alias `t` for a {@link PhaseFilter}. */
function phaseFilterConditions(f: PhaseFilter): SQL[] {
  const list = (phases: readonly string[]) =>
    sql.join(
      phases.map((p) => sql`${p}`),
      sql`, `,
    );
  const out: SQL[] = [];
  if (f.terminated !== undefined)
    out.push(f.terminated ? sql`t.terminated_at is not null` : sql`t.terminated_at is null`);
  if (f.phasesIn) out.push(f.phasesIn.length ? sql`lower(t.phase) in (${list(f.phasesIn)})` : sql`false`);
  if (f.phasesNotIn?.length) out.push(sql`lower(t.phase) not in (${list(f.phasesNotIn)})`);
  return out;
}

/** The columns of a {@link CheckpointRow}. */
const CHECKPOINT_FIELDS = [
  "version",
  "record",
  "digest",
  "signature",
  "key_id",
  "attempt",
  "signature_format",
  "binding_signature",
  "created_at",
] as const;

/**
 * SQL: whether the checkpoint row under alias `c` is a format-1 row above a format-2 row of its task (decision 0035: the
 * server stopped writing format 1 before it wrote format 2, so such a row was put there). One definition for the gate
 * and the checkpoint views.
 */
export function downgradedSql(c: string): SQL {
  const a = sql.raw(c);
  return sql`(${a}.signature_format < 2 and exists (
    select 1 from task_checkpoints o where o.tenant_id = ${a}.tenant_id and o.task_id = ${a}.task_id
      and o.version < ${a}.version and o.signature_format >= 2))`;
}

/**
 * A stored checkpoint (`created_at` as ISO 8601 UTC text), with `downgraded`: whether it is a format-1 row above a
 * format-2 row of its task ({@link downgradedSql}).
 */
export type CheckpointRow = SelectedRow<typeof taskCheckpoints, typeof CHECKPOINT_FIELDS> & { downgraded: boolean };

const CHECKPOINT_COLUMNS = sql`${selectList(taskCheckpoints, CHECKPOINT_FIELDS)}, ${downgradedSql("task_checkpoints")} as downgraded`;

/** The latest checkpoint of a task, or undefined before the first one. */
export async function latestCheckpoint(db: Db, tenantId: string, taskId: string): Promise<CheckpointRow | undefined> {
  const rows = await queryRows<CheckpointRow>(
    db,
    sql`select ${CHECKPOINT_COLUMNS}
        from task_checkpoints where tenant_id = ${tenantId} and task_id = ${taskId}
        order by version desc limit 1`,
  );
  return rows[0];
}

/** A task's checkpoints, newest first: at most `limit`, optionally only versions below `beforeVersion` (keyset). */
export async function listCheckpoints(
  db: Db,
  tenantId: string,
  taskId: string,
  opts: { limit: number; beforeVersion?: number },
): Promise<CheckpointRow[]> {
  return queryRows<CheckpointRow>(
    db,
    sql`select ${CHECKPOINT_COLUMNS}
        from task_checkpoints where tenant_id = ${tenantId} and task_id = ${taskId}
          ${opts.beforeVersion !== undefined ? sql`and version < ${opts.beforeVersion}` : sql``}
        order by version desc limit ${opts.limit}`,
  );
}

/** The columns of an {@link ArtifactRow}. */
const ARTIFACT_FIELDS = ["object_ref", "sha256", "size_bytes", "media_type", "first_version", "created_at"] as const;

/** An artifact a checkpoint listed (`size_bytes` is a bigint: text on postgres.js). */
export type ArtifactRow = SelectedRow<typeof artifacts, typeof ARTIFACT_FIELDS>;

const ARTIFACT_COLUMNS = selectList(artifacts, ARTIFACT_FIELDS);

/** Artifacts listed by a task's checkpoints, newest first. */
export async function listArtifacts(db: Db, tenantId: string, taskId: string): Promise<ArtifactRow[]> {
  return queryRows<ArtifactRow>(
    db,
    sql`select ${ARTIFACT_COLUMNS}
        from artifacts where tenant_id = ${tenantId} and task_id = ${taskId}
        order by first_version desc, object_ref`,
  );
}

/** The columns of an {@link EventRow}. */
const EVENT_FIELDS = [
  "event_id",
  "task_id",
  "plane",
  "type",
  "occurred_at",
  "received_at",
  "environment_id",
  "attempt",
  "actor",
  "attrs",
  "redaction_count",
  "redaction_kinds",
] as const;

/**
 * A stored event as the timeline reads it (times as ISO 8601 UTC text); `redaction_kinds` are the distinct kinds
 * redacted before storage, null when nothing was. `attrs_cut`: read with {@link EVENT_SUMMARY_COLUMNS} and its `attrs`
 * were larger than the database ships whole (then `attrs` holds their bounded summary).
 */
export type EventRow = SelectedRow<typeof events, typeof EVENT_FIELDS> & { attrs_cut?: boolean };

/** The columns of an {@link EventRow}, for every statement that reads one (db/queries/timeline.ts too). */
export const EVENT_COLUMNS = selectList(events, EVENT_FIELDS);

/** Largest `attrs` (characters of their JSON text) {@link EVENT_SUMMARY_COLUMNS} reads whole. */
export const SQL_WHOLE_ATTRS_CHARS = 2048;
/** Longest string value, and most top-level values, of the summary {@link EVENT_SUMMARY_COLUMNS} reads. */
export const SQL_SUMMARY_STRING_CHARS = 200;
const SQL_SUMMARY_KEYS = 64;

/**
 * The columns of an {@link EventRow} for reads of many events at once that pages make (decision 0036): `attrs` whole
 * when their JSON text is at most {@link SQL_WHOLE_ATTRS_CHARS} characters, else cut in the database — their top-level
 * scalar values only (at most 64), strings cut to {@link SQL_SUMMARY_STRING_CHARS} characters and marked `…` — with
 * `attrs_cut`. So the server never reads a large event body in bulk; lib/domain/events/summary.ts then fits the
 * summary to what a page ships.
 */
export const EVENT_SUMMARY_COLUMNS = sql`${selectList(
  events,
  EVENT_FIELDS.filter((f): f is Exclude<(typeof EVENT_FIELDS)[number], "attrs"> => f !== "attrs"),
)},
  case when length(attrs::text) <= ${sql.raw(String(SQL_WHOLE_ATTRS_CHARS))} then attrs
  else coalesce((select jsonb_object_agg(s.k, case
                   when jsonb_typeof(s.v) = 'string' and length(s.v #>> '{}') > ${sql.raw(String(SQL_SUMMARY_STRING_CHARS))}
                   then to_jsonb(left(s.v #>> '{}', ${sql.raw(String(SQL_SUMMARY_STRING_CHARS))}) || '…')
                   else s.v end)
                 from (select j.k, j.v from jsonb_each(attrs) as j(k, v)
                       where jsonb_typeof(j.v) not in ('object', 'array') limit ${sql.raw(String(SQL_SUMMARY_KEYS))}) s),
                '{}'::jsonb) end as attrs,
  length(attrs::text) > ${sql.raw(String(SQL_WHOLE_ATTRS_CHARS))} as attrs_cut`;

/** Which columns a read of many events takes: whole bodies, or the summaries pages read ({@link EVENT_SUMMARY_COLUMNS}). */
export type EventColumns = "whole" | "summary";

/** The select list for `mode`. */
export function eventColumns(mode: EventColumns = "whole"): SQL {
  return mode === "summary" ? EVENT_SUMMARY_COLUMNS : EVENT_COLUMNS;
}

/**
 * A page of a task's events ordered by (occurred_at, event_id), after an optional keyset position. Ordered by the
 * qualified column: the output alias `occurred_at` (text) would otherwise be sorted instead, without the index.
 */
export async function timelinePage(
  db: Db,
  tenantId: string,
  taskId: string,
  opts: { limit: number; after?: { occurredAt: string; eventId: string }; columns?: EventColumns },
): Promise<EventRow[]> {
  const after = opts.after
    ? sql`and (occurred_at, event_id) > (${opts.after.occurredAt}::timestamptz, ${opts.after.eventId})`
    : sql``;
  return queryRows<EventRow>(
    db,
    sql`select ${eventColumns(opts.columns)}
        from events
        where tenant_id = ${tenantId} and task_id = ${taskId} ${after}
        order by events.occurred_at, events.event_id
        limit ${opts.limit}`,
  );
}

/** How many events a task has (index-only scan of the timeline index). */
export async function countEvents(db: Db, tenantId: string, taskId: string): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from events where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return Number(rows[0]?.n ?? 0);
}
