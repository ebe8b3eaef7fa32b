/**
 * Timeline reads for long runs: the overview binned in SQL, the markers, the newest events, a window of
 * detail, and the arrival feed. SQL only; first argument db-or-transaction; tenant id required.
 * Design: docs/decisions/0015-timeline-overview-and-arrival-feed.md.
 */
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "../index";
import { isoUtc } from "./sql-helpers";
import { EVENT_COLUMNS, eventColumns, type EventColumns, type EventRow } from "./tasks";

/**
 * The columns of an event as the API returns it (ISO UTC times with microseconds). The text `occurred_at` shadows the
 * column in ORDER BY, so queries order by `events.occurred_at` (else PostgreSQL sorts the text and cannot use the index).
 */

/** First and last event time of a task (two index endpoint lookups), or null without events. */
export async function timelineRange(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{ first: string; last: string } | null> {
  const rows = await queryRows<{ first: string | null; last: string | null }>(
    db,
    sql`select
          (select ${isoUtc("occurred_at")} from events where tenant_id = ${tenantId} and task_id = ${taskId}
            order by events.occurred_at, events.event_id limit 1) as first,
          (select ${isoUtc("occurred_at")} from events where tenant_id = ${tenantId} and task_id = ${taskId}
            order by events.occurred_at desc, events.event_id desc limit 1) as last`,
  );
  const r = rows[0];
  return r?.first && r.last ? { first: r.first, last: r.last } : null;
}

/** One lane's events in one time bucket, counted in SQL. */
export type BinRow = {
  plane: EventRow["plane"];
  bucket: number;
  strideMs: number;
  count: number;
  first: string;
  last: string;
  failed: number;
  denied: number;
};

/**
 * Counts a task's events per lane (plane) in about `buckets` equal time buckets from `first` to `last`: one
 * `GROUP BY plane, date_bin(stride, occurred_at, first)` over the task's rows (date_bin works on the timestamps
 * directly, about twice as fast here as width_bucket over epoch seconds). `failed` counts `tool.failed`; `denied`
 * counts `egress.denied` and `credential.denied` (the outcomes the timeline colours without the side-effect view).
 * With `below` (an arrival-feed horizon) only rows of transactions below it are counted: exactly the final ones.
 * @returns rows with `bucket` = index of the bucket from `first`, and the stride used (`strideMs`).
 */
export async function timelineBins(
  db: Db,
  tenantId: string,
  taskId: string,
  range: { first: string; last: string },
  buckets: number,
  below?: string,
): Promise<BinRow[]> {
  const spanMs = Math.max(0, Date.parse(range.last) - Date.parse(range.first));
  const strideMs = Math.max(1, Math.ceil((spanMs + 1) / buckets));
  const rows = await queryRows<{
    plane: EventRow["plane"];
    bucket: string;
    n: string | number;
    first: string;
    last: string;
    failed: string | number;
    denied: string | number;
  }>(
    db,
    sql`select plane, ${isoUtc(sql`date_bin(make_interval(secs => ${strideMs / 1000}::float8), occurred_at, ${range.first}::timestamptz)`)} as bucket,
               count(*) as n, ${isoUtc("min(occurred_at)")} as first, ${isoUtc("max(occurred_at)")} as last,
               count(*) filter (where type = 'tool.failed') as failed,
               count(*) filter (where type in ('egress.denied', 'credential.denied')) as denied
        from events
        where tenant_id = ${tenantId} and task_id = ${taskId} ${below === undefined ? sql`` : sql`and txid < ${below}::xid8`}
        group by 1, 2
        order by 2, 1`,
  );
  return rows.map((r) => ({
    plane: r.plane,
    strideMs,
    bucket: Math.round((Date.parse(r.bucket) - Date.parse(range.first)) / strideMs),
    count: Number(r.n),
    first: r.first,
    last: r.last,
    failed: Number(r.failed),
    denied: Number(r.denied),
  }));
}

/** How many events a task has, counting no further than `cap` (an index range of at most `cap` entries). */
export async function countEventsUpTo(db: Db, tenantId: string, taskId: string, cap: number): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from (select 1 from events where tenant_id = ${tenantId} and task_id = ${taskId} limit ${cap}) c`,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Every event of a task whose type is one of `markerTypes`, in time order, up to `limit`. The markers are the types
 * that shape the timeline whatever the zoom (interruptions, restarts, resumes, stops, the sandbox lifecycle), named by
 * the domain's event catalogue; all are covered by the partial index `events_task_facts_idx`, and all are facts, kept in
 * the `fact` partition (decision 0054), which is the only one read.
 */
export async function timelineMarkers(
  db: Db,
  tenantId: string,
  taskId: string,
  markerTypes: readonly string[],
  limit: number,
  columns: EventColumns = "whole",
): Promise<EventRow[]> {
  const types = sql.join(
    markerTypes.map((t) => sql`${t}`),
    sql`, `,
  );
  return queryRows<EventRow>(
    db,
    sql`select ${eventColumns(columns)} from events
        where tenant_id = ${tenantId} and task_id = ${taskId} and retention_class = 'fact' and type in (${types})
        order by events.occurred_at, events.event_id
        limit ${limit}`,
  );
}

/**
 * The latest `compaction.performed` and the latest `constraint.checked` of a task in the server's receive order (`seq`),
 * with `seq`: at most two rows, each one backward probe of the partial index `events_task_facts_idx`.
 */
export async function latestCompactionFacts(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<Array<EventRow & { seq: number | string }>> {
  const latest = (type: string) =>
    sql`(select ${EVENT_COLUMNS}, seq from events
         where tenant_id = ${tenantId} and task_id = ${taskId} and type = ${type}
         order by seq desc limit 1)`;
  return queryRows<EventRow & { seq: number | string }>(
    db,
    sql`${latest("compaction.performed")} union all ${latest("constraint.checked")}`,
  );
}

/** The newest `limit` events of a task, returned oldest first. */
export async function timelineNewest(
  db: Db,
  tenantId: string,
  taskId: string,
  limit: number,
  columns: EventColumns = "whole",
): Promise<EventRow[]> {
  const rows = await queryRows<EventRow>(
    db,
    sql`select ${eventColumns(columns)} from events
        where tenant_id = ${tenantId} and task_id = ${taskId}
        order by events.occurred_at desc, events.event_id desc
        limit ${limit}`,
  );
  return rows.reverse();
}

/**
 * Events with `from <= occurred_at <= to`, in (occurred_at, event_id) order after an optional keyset position.
 * Answered from the timeline index range.
 */
export async function timelineWindow(
  db: Db,
  tenantId: string,
  taskId: string,
  opts: {
    from: string;
    to: string;
    limit: number;
    after?: { occurredAt: string; eventId: string };
    columns?: EventColumns;
  },
): Promise<EventRow[]> {
  const after: SQL = opts.after
    ? sql`and (occurred_at, event_id) > (${opts.after.occurredAt}::timestamptz, ${opts.after.eventId})`
    : sql``;
  return queryRows<EventRow>(
    db,
    sql`select ${eventColumns(opts.columns)} from events
        where tenant_id = ${tenantId} and task_id = ${taskId}
          and occurred_at >= ${opts.from}::timestamptz and occurred_at <= ${opts.to}::timestamptz ${after}
        order by events.occurred_at, events.event_id
        limit ${opts.limit}`,
  );
}

/** An event of the arrival feed, with its position. */
export type ArrivalRow = EventRow & { txid: string; seq: string | number };

/**
 * The arrival feed: a task's events after position `(txid, seq)` in commit-safe receive order, with the feed's
 * horizon. Only rows of transactions older than every transaction still running are returned (`txid` below
 * `pg_snapshot_xmin(pg_current_snapshot())`): those rows are final, and any row still to commit has a txid at or
 * above the horizon, so it sorts after every position handed out so far and a reader never skips it.
 */
export async function arrivalFeed(
  db: Db,
  tenantId: string,
  taskId: string,
  opts: { after: { txid: string; seq: number }; limit: number; columns?: EventColumns },
): Promise<{ rows: ArrivalRow[]; horizon: string }> {
  const rows = await queryRows<ArrivalRow & { horizon: string }>(
    db,
    sql`with h as (select pg_snapshot_xmin(pg_current_snapshot()) as horizon)
        select ${eventColumns(opts.columns)}, txid::text as txid, seq, h.horizon::text as horizon
        from h left join lateral (
          select * from events
          where tenant_id = ${tenantId} and task_id = ${taskId}
            and (txid, seq) > (${opts.after.txid}::xid8, ${opts.after.seq}::bigint)
            and txid < h.horizon
          order by txid, seq
          limit ${opts.limit}
        ) e on true
        order by e.txid, e.seq`,
  );
  const horizon = rows[0]?.horizon ?? opts.after.txid;
  return { rows: rows.filter((r) => r.event_id !== null), horizon };
}

/** The arrival feed's current horizon: every event of a transaction below it is already visible. */
export async function arrivalHorizon(db: Db): Promise<string> {
  const rows = await queryRows<{ horizon: string }>(
    db,
    sql`select pg_snapshot_xmin(pg_current_snapshot())::text as horizon`,
  );
  return rows[0]?.horizon ?? "0";
}

/** Plane, type and time of a task's events whose transactions lie in [`from`, `below`) (arrival order). */
export async function arrivalDelta(
  db: Db,
  tenantId: string,
  taskId: string,
  from: string,
  below: string,
): Promise<Array<{ plane: EventRow["plane"]; type: string; occurred_at: string }>> {
  return queryRows(
    db,
    sql`select plane, type, ${isoUtc("occurred_at")} as occurred_at from events
        where tenant_id = ${tenantId} and task_id = ${taskId} and txid >= ${from}::xid8 and txid < ${below}::xid8`,
  );
}
