/**
 * Event partitions and retention (docs/decisions/0054-event-partitions-and-retention.md).
 *
 * `events` keeps the facts the custody rules judge a task by in `events_facts` (kept for as long as the task) and the
 * tool traffic in `events_history`, one partition per calendar month (UTC) of receipt, `events_history_YYYY_MM`. This
 * module keeps months ready ahead of the clock and drops whole months a workspace's retention lets go, writing what it
 * dropped into each affected workspace's audit log. Runs as the tables' owner (creating and dropping partitions is
 * DDL), from every server's maintenance loop (lib/server/maintenance.ts); concurrent runs on several servers are
 * serialised by an advisory lock.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { appendAudit } from "../audit/append";
import type { SystemActor } from "../authz";
import { TERMINAL_PHASES } from "../tasks/phases";

/** Months of history partitions kept ready after the current one. */
export const MONTHS_AHEAD = 3;

/** The advisory lock (`pg_advisory_xact_lock(RETENTION_LOCK)`) one retention run holds. */
const RETENTION_LOCK = 0x52_45_54_4e; // "RETN"

const MONTH_PARTITION = /^events_history_(\d{4})_(\d{2})$/;

/** The first instant of the calendar month (UTC) `monthsFrom` months after the one `at` falls in. */
function monthStart(at: Date, monthsFrom = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + monthsFrom, 1));
}

/**
 * Creates the history partitions of the current month and the {@link MONTHS_AHEAD} after it when missing (moving into
 * a new month any rows the default partition took for it).
 * @param owner the owner's database handle (not a tenant-walled one).
 * @returns the months created, as `YYYY-MM`.
 */
export async function ensureEventMonths(owner: Db, now: Date = new Date()): Promise<string[]> {
  const created: string[] = [];
  for (let i = 0; i <= MONTHS_AHEAD; i++) {
    const month = monthStart(now, i).toISOString().slice(0, 10);
    const [row] = await queryRows<{ created: boolean }>(
      owner,
      sql`select custody_ensure_event_month(${month}::date) as created`,
    );
    if (row?.created) created.push(month.slice(0, 7));
  }
  return created;
}

/** What one retention run dropped, per month partition. */
export type RetentionDrop = {
  partition: string;
  /** `YYYY-MM`. */
  month: string;
  /** Per workspace: events dropped, and events moved to the kept partition because their task had not ended. */
  tenants: Array<{ tenantId: string; retentionDays: number; eventsDropped: number; eventsKept: number }>;
};

/** A month that stays, and why (the Settings page lists them). */
export type RetentionHold = {
  partition: string;
  month: string;
  heldBy: Array<{ tenantId: string; until: string | null }>;
};

/**
 * Drops each history month whose every event is past its workspace's retention (`retention_settings`,
 * `event_retention_days`; none or null keeps events forever) at `now`. A month is dropped whole or not at all: a
 * month holding events of a workspace that keeps them longer stays until that workspace lets it go. Before the drop,
 * the month's events of tasks that have not ended (not terminated, phase not terminal) move to the kept partition, so
 * a running task never loses what the rules read. Each workspace with events in a dropped month gets one audit entry
 * `events.retention_applied` naming the month and the counts. Checkpoints, receipts, approvals, artifacts, the audit
 * log and `event_ids` (so a resent event is still a duplicate) are never touched.
 * @param owner the owner's database handle.
 * @returns the months dropped and the past months that stay, with the workspaces holding each.
 */
export async function applyEventRetention(
  owner: Db,
  now: Date = new Date(),
): Promise<{ dropped: RetentionDrop[]; held: RetentionHold[] }> {
  return owner.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${RETENTION_LOCK})`);
    const settings = new Map(
      (
        await queryRows<{ tenant_id: string; days: number | null }>(
          tx,
          sql`select tenant_id, event_retention_days as days from retention_settings`,
        )
      ).map((r) => [r.tenant_id, r.days]),
    );
    const months = (
      await queryRows<{ name: string }>(
        tx,
        sql`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
            where i.inhparent = 'events_history'::regclass order by 1`,
      )
    )
      .map((r) => ({ name: r.name, m: MONTH_PARTITION.exec(r.name) }))
      .filter((r): r is { name: string; m: RegExpExecArray } => r.m !== null)
      .map((r) => ({
        name: r.name,
        month: `${r.m[1]}-${r.m[2]}`,
        end: new Date(Date.UTC(Number(r.m[1]), Number(r.m[2]), 1)),
      }))
      .filter((p) => p.end.getTime() <= now.getTime());

    const dropped: RetentionDrop[] = [];
    const held: RetentionHold[] = [];
    for (const p of months) {
      const present = await queryRows<{ tenant_id: string; n: string }>(
        tx,
        sql`select tenant_id, count(*) as n from ${sql.identifier(p.name)} group by tenant_id order by tenant_id`,
      );
      if (present.length === 0) continue;
      const blocking = present
        .map((t) => ({ tenantId: t.tenant_id, days: settings.get(t.tenant_id) ?? null }))
        .filter((t) => t.days === null || p.end.getTime() > now.getTime() - t.days * 86_400_000);
      if (blocking.length) {
        held.push({
          partition: p.name,
          month: p.month,
          heldBy: blocking.map((t) => ({
            tenantId: t.tenantId,
            until: t.days === null ? null : new Date(p.end.getTime() + t.days * 86_400_000).toISOString(),
          })),
        });
        continue;
      }
      const kept = await queryRows<{ tenant_id: string; n: string }>(
        tx,
        sql`with moved as (
              insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, received_at, seq, txid,
                                  environment_id, attempt, actor, attrs, redaction_count, redaction_kinds, retention_class)
              overriding system value
              select e.tenant_id, e.event_id, e.task_id, e.plane, e.type, e.occurred_at, e.received_at, e.seq, e.txid,
                     e.environment_id, e.attempt, e.actor, e.attrs, e.redaction_count, e.redaction_kinds, 'fact'
              from ${sql.identifier(p.name)} e
              join tasks t on t.tenant_id = e.tenant_id and t.task_id = e.task_id
              where t.terminated_at is null
                and lower(t.phase) not in (${sql.join(
                  TERMINAL_PHASES.map((ph) => sql`${ph}`),
                  sql`, `,
                )})
              returning tenant_id)
            select tenant_id, count(*) as n from moved group by tenant_id`,
      );
      await tx.execute(sql`drop table ${sql.identifier(p.name)}`);
      const drop: RetentionDrop = { partition: p.name, month: p.month, tenants: [] };
      for (const t of present) {
        const keptHere = Number(kept.find((k) => k.tenant_id === t.tenant_id)?.n ?? 0);
        const entry = {
          tenantId: t.tenant_id,
          retentionDays: settings.get(t.tenant_id)!,
          eventsDropped: Number(t.n) - keptHere,
          eventsKept: keptHere,
        };
        drop.tenants.push(entry);
        const actor: SystemActor = { kind: "system", tenantId: t.tenant_id, label: "retention" };
        await appendAudit(tx, actor, {
          action: "events.retention_applied",
          target: `events:${p.month}`,
          details: {
            month: p.month,
            partition: p.name,
            retention_days: entry.retentionDays,
            events_dropped: entry.eventsDropped,
            events_kept_for_open_tasks: entry.eventsKept,
          },
        });
      }
      dropped.push(drop);
    }
    return { dropped, held };
  });
}
