/**
 * Event partitions and retention (docs/decisions/0054-event-partitions-and-retention.md), through the built server's
 * API and the test database:
 *   - a fact (what the gate reads) lands in the kept partition, tool traffic in the month it was received;
 *   - an event id stored in an older month is still a duplicate, also after retention dropped that month;
 *   - the timeline reads across months;
 *   - retention drops a month whole only when every workspace with events in it lets it go, moves the events of tasks
 *     still running to the kept partition first, and writes one audit entry per workspace (the chain verifies);
 *   - a month created after events arrived for it (in the default partition) takes those events.
 * Months here are picked at random far in the past, so no other test's events (received now) share them.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { verifyAuditChain } from "@/lib/domain/audit/read";
import { EVENT_CATALOGUE, retentionClass } from "@/lib/domain/events/catalogue";
import { applyEventRetention, ensureEventMonths } from "@/lib/domain/retention/partitions";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** Three consecutive calendar months between 2001 and 2020, one per test, picked once per run of this file. */
const MONTH_BASE = Math.floor(Math.random() * (20 * 12 - 3));

/** The `n`th of this run's old months, as `YYYY-MM`, its middle and its partition. */
function oldMonth(n: number): { month: string; middle: Date; partition: string } {
  const index = MONTH_BASE + n;
  const year = 2001 + Math.floor(index / 12);
  const mm = String((index % 12) + 1).padStart(2, "0");
  return {
    month: `${year}-${mm}`,
    middle: new Date(Date.UTC(year, index % 12, 15, 12)),
    partition: `events_history_${year}_${mm}`,
  };
}

async function partitionOf(tenantId: string, eventId: string): Promise<string | null> {
  const [row] = await queryRows<{ part: string }>(
    handle.db,
    sql`select tableoid::regclass::text as part from events where tenant_id = ${tenantId} and event_id = ${eventId}`,
  );
  return row?.part ?? null;
}

/** Moves events to `at` (their month's partition; PostgreSQL moves a row whose partition key changes). */
async function receivedAt(tenantId: string, eventIds: string[], at: Date): Promise<void> {
  await handle.db.execute(
    sql`update events set received_at = ${at.toISOString()}::timestamptz
        where tenant_id = ${tenantId} and event_id in (${sql.join(
          eventIds.map((id) => sql`${id}`),
          sql`, `,
        )})`,
  );
}

async function setRetention(tenantId: string, days: number | null): Promise<void> {
  await handle.db.execute(
    sql`insert into retention_settings (tenant_id, event_retention_days) values (${tenantId}, ${days})
        on conflict (tenant_id) do update set event_retention_days = excluded.event_retention_days`,
  );
}

async function exists(relation: string): Promise<boolean> {
  const [row] = await queryRows<{ r: string | null }>(handle.db, sql`select to_regclass(${relation})::text as r`);
  return row!.r !== null;
}

describe("event partitions", () => {
  it("classes every type in SQL as the catalogue does", async () => {
    const types = [...Object.keys(EVENT_CATALOGUE), "x.custom.step", "xy.not_custom"];
    const rows = await queryRows<{ type: string; class: string }>(
      handle.db,
      sql`select t as type, custody_event_retention_class(t) as class from unnest(array[${sql.join(
        types.map((t) => sql`${t}`),
        sql`, `,
      )}]::text[]) t`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.type, r.class]))).toEqual(
      Object.fromEntries(types.map((t) => [t, retentionClass(t)])),
    );
  });

  it("keeps facts apart from the month's traffic, and an id of an older month stays a duplicate", async () => {
    const tenant = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const fact = makeEvent(taskId, { type: "sandbox.created", environment_id: "sbx-1", attrs: {} });
    const call = makeEvent(taskId, { type: "tool.called", attrs: { tool: "search", call_id: "c1" } });
    const first = await postEvents(tenant.apiKey, [fact, call]);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r) => r.status)).toEqual(["stored", "stored"]);
    expect(await partitionOf(tenant.tenantId, fact.id)).toBe("events_facts");
    const now = new Date();
    const current = `events_history_${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    expect(await partitionOf(tenant.tenantId, call.id)).toBe(current);

    const old = oldMonth(0);
    await ensureEventMonths(handle.db, old.middle);
    await receivedAt(tenant.tenantId, [call.id], old.middle);
    expect(await partitionOf(tenant.tenantId, call.id)).toBe(old.partition);
    const again = await postEvents(tenant.apiKey, [call, { ...call, attrs: { tool: "search", call_id: "other" } }]);
    expect(again.body.results.map((r) => r.status)).toEqual(["duplicate", "conflict"]);

    // The timeline reads both partitions (and the old month) in time order.
    const timeline = await api(tenant.apiKey).get<{ events: Array<{ id: string }> }>(
      `/api/v1/tasks/${taskId}/timeline`,
    );
    expect(timeline.status).toBe(200);
    expect(timeline.body.events.map((e) => e.id).sort()).toEqual([fact.id, call.id].sort());
  });

  it("drops a month whole once every workspace in it lets it go, keeping running tasks' events and every id", async () => {
    const old = oldMonth(1);
    await ensureEventMonths(handle.db, old.middle);
    const a = await createTestTenant(handle.db, { roles: [] });
    const b = await createTestTenant(handle.db, { roles: [] });
    const running = newTaskId();
    const ended = newTaskId();
    const aEvents = [
      makeEvent(running, { type: "tool.called", attrs: { tool: "search", call_id: "r1" } }),
      makeEvent(running, { type: "tool.completed", attrs: { tool: "search", call_id: "r1" } }),
      makeEvent(ended, { type: "tool.called", attrs: { tool: "search", call_id: "e1" } }),
      makeEvent(ended, { type: "tool.completed", attrs: { tool: "search", call_id: "e1" } }),
      makeEvent(ended, { type: "credential.used", attrs: { credential_ref: "records-api" } }),
    ];
    expect((await postEvents(a.apiKey, aEvents)).body.results.filter((r) => r.status !== "stored")).toEqual([]);
    await handle.db.execute(
      sql`update tasks set phase = 'done' where tenant_id = ${a.tenantId} and task_id = ${ended}`,
    );
    const bEvent = makeEvent(newTaskId(), { type: "tool.called", attrs: { tool: "search", call_id: "b1" } });
    expect((await postEvents(b.apiKey, [bEvent])).body.results[0]!.status).toBe("stored");
    await receivedAt(
      a.tenantId,
      aEvents.map((e) => e.id),
      old.middle,
    );
    await receivedAt(b.tenantId, [bEvent.id], old.middle);

    // A keeps 30 days, B forever: the month stays, held by B.
    await setRetention(a.tenantId, 30);
    const first = await applyEventRetention(handle.db);
    expect(await exists(old.partition)).toBe(true);
    const hold = first.held.find((h) => h.partition === old.partition);
    expect(hold?.heldBy).toEqual([{ tenantId: b.tenantId, until: null }]);

    // B lets it go after a year: the month is dropped whole.
    await setRetention(b.tenantId, 365);
    const second = await applyEventRetention(handle.db);
    expect(await exists(old.partition)).toBe(false);
    const drop = second.dropped.find((d) => d.partition === old.partition);
    expect(drop?.tenants.find((t) => t.tenantId === a.tenantId)).toEqual({
      tenantId: a.tenantId,
      retentionDays: 30,
      eventsDropped: 3,
      eventsKept: 2,
    });

    // The running task's traffic moved to the kept partition; the ended task's is gone; every id is still taken.
    expect(await partitionOf(a.tenantId, aEvents[0]!.id)).toBe("events_facts");
    expect(await partitionOf(a.tenantId, aEvents[2]!.id)).toBeNull();
    const resent = await postEvents(a.apiKey, aEvents);
    expect(resent.body.results.map((r) => r.status)).toEqual(Array(5).fill("duplicate"));
    expect(await partitionOf(a.tenantId, aEvents[2]!.id)).toBeNull();

    // One audit entry per workspace, and each chain still verifies.
    // B's one event belongs to a task still running: kept, not dropped.
    for (const [t, dropped, kept] of [
      [a, 3, 2],
      [b, 0, 1],
    ] as const) {
      const entries = await queryRows<{ details: Record<string, unknown> }>(
        handle.db,
        sql`select details from audit_log where tenant_id = ${t.tenantId} and action = 'events.retention_applied'`,
      );
      expect(entries).toHaveLength(1);
      expect(entries[0]!.details).toMatchObject({
        month: old.month,
        partition: old.partition,
        events_dropped: dropped,
        events_kept_for_open_tasks: kept,
      });
      const chain = await verifyAuditChain({
        db: handle.db,
        actor: { kind: "system", tenantId: t.tenantId, label: "partition test" },
      });
      expect(chain.ok, chain.message).toBe(true);
    }
  });

  it("moves events the default partition took into their month when the month is created", async () => {
    const tenant = await createTestTenant(handle.db, { roles: [] });
    const event = makeEvent(newTaskId(), { type: "tool.called", attrs: { tool: "search", call_id: "d1" } });
    expect((await postEvents(tenant.apiKey, [event])).body.results[0]!.status).toBe("stored");
    const old = oldMonth(2);
    if (await exists(old.partition)) await handle.db.execute(sql`drop table ${sql.identifier(old.partition)}`);
    await receivedAt(tenant.tenantId, [event.id], old.middle);
    expect(await partitionOf(tenant.tenantId, event.id)).toBe("events_history_default");
    expect(await ensureEventMonths(handle.db, old.middle)).toContain(old.month);
    expect(await partitionOf(tenant.tenantId, event.id)).toBe(old.partition);
    expect(await ensureEventMonths(handle.db, old.middle)).toEqual([]);
  });
});
