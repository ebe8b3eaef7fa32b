/**
 * Timeline reads that stay true on long runs: the overview (every marker, the newest events and server-side bins),
 * windows of detail, and the arrival feed for incremental readers.
 * Design: docs/decisions/0012-timeline-overview-and-arrival-feed.md.
 */
import type { Db } from "@/db";
import { decodeCursor, encodeCursor } from "@/db/queries/sql-helpers";
import * as q from "@/db/queries/tasks";
import * as tq from "@/db/queries/timeline";
import type { ArrivalPage, Plane, TimelineBin, TimelineOverview } from "@/lib/client/types";
import { authorize, type Actor } from "../authz";
import { DomainError, notFound } from "../errors";
import { checkTaskId, storedEvent } from "./read";

/** A task with at most this many events is sent whole (the overview is then the full timeline). */
export const OVERVIEW_FULL_MAX = 2000;
/** How many of the newest events the overview of a longer task carries. */
export const OVERVIEW_NEWEST = 250;
/** Time buckets per lane in the overview of a longer task. */
export const OVERVIEW_BUCKETS = 240;
/** Upper bound of marker events in one overview (far above any real run's restarts). */
export const OVERVIEW_MARKERS_MAX = 5000;

async function requireTask(db: Db, actor: Actor, taskId: string): Promise<void> {
  authorize(actor, "tasks.read");
  checkTaskId(taskId);
  const task = await q.findTask(db, actor.tenantId, taskId);
  if (!task) throw notFound(`Task ${taskId}`);
}

/**
 * The overview of a task's timeline. A task of up to {@link OVERVIEW_FULL_MAX} events comes whole (`complete`);
 * a longer one comes as every marker event, the {@link OVERVIEW_NEWEST} newest events and per-lane bins counted in
 * SQL, so it holds every attempt, interruption and restart and the newest events however long the run.
 * `since` is an arrival-feed cursor taken before the reads: following it yields every event this overview missed.
 * @throws DomainError not_found.
 */
export async function getTimelineOverview(db: Db, actor: Actor, taskId: string): Promise<TimelineOverview> {
  await requireTask(db, actor, taskId);
  const horizon = await tq.arrivalHorizon(db);
  const since = encodeCursor([horizon, 0]);
  // Whether the task is short is answered from at most OVERVIEW_FULL_MAX + 1 index entries; a long task is counted by its bins.
  const [total, range] = await Promise.all([
    tq.countEventsUpTo(db, actor.tenantId, taskId, OVERVIEW_FULL_MAX + 1),
    tq.timelineRange(db, actor.tenantId, taskId),
  ]);
  const counts: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
  if (total <= OVERVIEW_FULL_MAX || !range) {
    const rows = await q.timelinePage(db, actor.tenantId, taskId, { limit: OVERVIEW_FULL_MAX + 1 });
    if (rows.length <= OVERVIEW_FULL_MAX) {
      for (const r of rows) counts[r.plane] += 1;
      return {
        total: rows.length,
        counts,
        range: rows.length ? { first: rows[0]!.occurred_at, last: rows.at(-1)!.occurred_at } : null,
        complete: true,
        events: rows.map(storedEvent),
        newest_from: rows[0]?.occurred_at ?? null,
        bins: [],
        since,
      };
    }
  }
  const [binRows, markers, newest] = await Promise.all([
    tq.timelineBins(db, actor.tenantId, taskId, range!, OVERVIEW_BUCKETS),
    tq.timelineMarkers(db, actor.tenantId, taskId, OVERVIEW_MARKERS_MAX),
    tq.timelineNewest(db, actor.tenantId, taskId, OVERVIEW_NEWEST),
  ]);
  const bins: TimelineBin[] = binRows.map((b) => ({ plane: b.plane, first: b.first, last: b.last, count: b.count, failed: b.failed, denied: b.denied }));
  let binTotal = 0;
  for (const b of bins) {
    counts[b.plane] += b.count;
    binTotal += b.count;
  }
  const byId = new Map<string, q.EventRow>();
  for (const r of markers) byId.set(r.event_id, r);
  for (const r of newest) byId.set(r.event_id, r);
  const events = [...byId.values()]
    .sort((a, b) => (a.occurred_at < b.occurred_at ? -1 : a.occurred_at > b.occurred_at ? 1 : a.event_id < b.event_id ? -1 : 1))
    .map(storedEvent);
  return {
    total: binTotal,
    counts,
    range: range!,
    complete: false,
    events,
    newest_from: newest[0]?.occurred_at ?? null,
    bins,
    since,
  };
}

/** Decodes an arrival-feed cursor (`since`): `0` starts at the beginning. @throws DomainError bad_request. */
function arrivalCursor(since: string): { txid: string; seq: number } {
  if (since === "0") return { txid: "0", seq: 0 };
  const [txid, seq] = decodeCursor(since, 2) ?? [];
  if (typeof txid !== "string" || !/^\d{1,20}$/.test(txid) || typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) {
    throw new DomainError("bad_request", "since is not a valid cursor; start again with since=0 or from an overview's since.", {
      fields: [{ path: "since", message: "a next_since value, or 0" }],
    });
  }
  return { txid, seq };
}

/**
 * The arrival feed: the task's events in the order the server received them (commit-safe: a transaction still
 * running holds the feed back instead of being skipped), `limit` at a time. `since=0` starts at the first event;
 * `next_since` continues (also when nothing new has arrived: poll with it). Back-dated events (an earlier
 * `occurred_at` than events already read) arrive here when they are received, unlike the time-ordered pages.
 * @throws DomainError not_found, bad_request (since).
 */
export async function getArrivalFeed(db: Db, actor: Actor, taskId: string, opts: { since: string; limit: number }): Promise<ArrivalPage> {
  await requireTask(db, actor, taskId);
  const after = arrivalCursor(opts.since);
  const { rows, horizon } = await tq.arrivalFeed(db, actor.tenantId, taskId, { after, limit: opts.limit + 1 });
  const page = rows.slice(0, opts.limit);
  const hasMore = rows.length > opts.limit;
  const last = page.at(-1);
  // Without more rows, every event below the horizon has been read: continue from the horizon.
  let next: [string, number];
  if (hasMore && last) next = [last.txid, Number(last.seq)];
  else if (BigInt(horizon) > BigInt(after.txid)) next = [horizon, 0];
  else next = [after.txid, after.seq];
  return { events: page.map(storedEvent), next_since: encodeCursor(next), has_more: hasMore };
}
