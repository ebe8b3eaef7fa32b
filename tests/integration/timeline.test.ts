/**
 * Timelines of long runs against the built server and real PostgreSQL (decision 0015): the overview of a
 * 21,000-event run over 60 attempts holds every attempt, the interruption and the newest events; windows of detail;
 * the arrival feed sees every back-dated event a reader paging forward would have missed, and never skips a row
 * whose transaction commits late.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ArrivalPage, EventInput, StoredEvent, TimelineOverview, TimelinePage } from "@/lib/contract/api";
import { seedLongRun } from "../../scripts/lib/long-run";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;

describe("GET /api/v1/tasks/{id}/timeline/overview", () => {
  it("holds every attempt, the interruption and the newest events of a 21,000-event run over 60 attempts", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const run = await seedLongRun(handle.db, {
      tenantId: t.tenantId,
      taskId: newTaskId("long"),
      events: 21_000,
      attempts: 60,
    });
    const res = await api(t.apiKey).get<TimelineOverview>(`/api/v1/tasks/${enc(run.taskId)}/timeline/overview`);
    expect(res.status).toBe(200);
    const o = res.body;
    expect(o.complete).toBe(false);
    expect(o.total).toBe(21_000);
    expect(Object.values(o.counts).reduce((a, b) => a + b, 0)).toBe(21_000);
    expect(o.bins.reduce((n, b) => n + b.count, 0)).toBe(21_000);
    expect(o.bins.length).toBeLessThanOrEqual(4 * 240);
    expect(o.range).toEqual({
      first: run.first.toISOString().replace("Z", "000Z"),
      last: run.last.toISOString().replace("Z", "000Z"),
    });

    const created = o.events.filter((e) => e.type === "sandbox.created").map((e) => e.attempt);
    expect(created).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(o.events.filter((e) => e.type === "sandbox.destroyed")).toHaveLength(59);
    const interrupted = o.events.filter((e) => e.type === "run.interrupted");
    expect(interrupted.map((e) => [e.id, e.attempt])).toEqual([[run.interruptedId, 60]]);
    // The newest 250 events, whole: from newest_from on nothing is missing.
    const newest = o.events.filter((e) => o.newest_from !== null && e.occurred_at >= o.newest_from);
    expect(newest).toHaveLength(250);
    expect(newest.at(-1)?.id).toBe(run.lastEventId);
    expect(newest.some((e) => e.attempt === 60)).toBe(true);
    // Time order, no duplicates, and small enough to render at once.
    expect(new Set(o.events.map((e) => e.id)).size).toBe(o.events.length);
    expect(o.events.map((e) => e.occurred_at)).toEqual([...o.events.map((e) => e.occurred_at)].sort());
    expect(res.text.length).toBeLessThan(600_000);

    // Asked again after more events arrived (two back-dated, one failed call): the bins count them too.
    const more = [
      makeEvent(run.taskId, {
        plane: "tools",
        type: "tool.failed",
        attempt: 60,
        occurred_at: new Date(run.last.getTime() + 1000).toISOString(),
        attrs: { call_id: "late", tool: "fetch_page" },
      }),
      makeEvent(run.taskId, {
        plane: "vault",
        type: "credential.denied",
        attempt: 60,
        occurred_at: new Date(run.first.getTime() + 5000).toISOString(),
        attrs: { credential_ref: "records-api" },
      }),
      makeEvent(run.taskId, {
        plane: "session",
        type: "x.note",
        attempt: 60,
        occurred_at: new Date(run.first.getTime() - 60_000).toISOString(),
        attrs: {},
      }),
    ];
    expect((await postEvents(t.apiKey, more)).body.results.map((r) => r.status)).toEqual([
      "stored",
      "stored",
      "stored",
    ]);
    let again = (await api(t.apiKey).get<TimelineOverview>(`/api/v1/tasks/${enc(run.taskId)}/timeline/overview`)).body;
    for (let i = 0; i < 50 && again.total < 21_003; i++) {
      await new Promise((r) => setTimeout(r, 200));
      again = (await api(t.apiKey).get<TimelineOverview>(`/api/v1/tasks/${enc(run.taskId)}/timeline/overview`)).body;
    }
    expect(again.total).toBe(21_003);
    expect(again.bins.reduce((n, b) => n + b.count, 0)).toBe(21_003);
    expect(again.bins.reduce((n, b) => n + b.failed, 0)).toBe(1);
    expect(again.bins.reduce((n, b) => n + b.denied, 0)).toBe(1);
    expect(again.counts.vault).toBe(o.counts.vault + 1);
  });

  it("sends a short run whole, and another tenant's task is not found", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const other = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("short");
    const batch = Array.from({ length: 5 }, (_, i) =>
      makeEvent(taskId, { occurred_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString() }),
    );
    expect((await postEvents(t.apiKey, batch)).status).toBe(200);
    const res = await api(t.apiKey).get<TimelineOverview>(`/api/v1/tasks/${enc(taskId)}/timeline/overview`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ complete: true, total: 5, bins: [] });
    expect(res.body.events.map((e) => e.id)).toEqual(batch.map((e) => e.id));
    expect((await api(other.apiKey).get(`/api/v1/tasks/${enc(taskId)}/timeline/overview`)).status).toBe(404);
    expect((await api(other.apiKey).get(`/api/v1/tasks/${enc(taskId)}/timeline?since=0`)).status).toBe(404);
    expect(
      (await api(other.apiKey).get(`/api/v1/tasks/${enc(taskId)}/timeline?from=2025-01-01T00:00:00Z`)).status,
    ).toBe(404);
  });
});

describe("GET /api/v1/tasks/{id}/timeline?from=&to= (detail of a window)", () => {
  it("returns exactly the window's events in time order, keyset-paginated", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const run = await seedLongRun(handle.db, {
      tenantId: t.tenantId,
      taskId: newTaskId("win"),
      events: 3000,
      attempts: 3,
    });
    const from = new Date(run.first.getTime() + 1000_000).toISOString();
    const to = new Date(run.first.getTime() + 1249_000).toISOString();
    const seen: StoredEvent[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: TimelinePage } = await api(t.apiKey).get<TimelinePage>(
        `/api/v1/tasks/${enc(run.taskId)}/timeline?from=${enc(from)}&to=${enc(to)}&limit=100${cursor ? `&cursor=${enc(cursor)}` : ""}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.events);
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(250);
    expect(seen[0]!.id).toBe(`${run.taskId}:1000`);
    expect(seen.at(-1)!.id).toBe(`${run.taskId}:1249`);

    const bad = await api(t.apiKey).get(`/api/v1/tasks/${enc(run.taskId)}/timeline?from=yesterday`);
    expect(bad.status).toBe(400);
    const reversed = await api(t.apiKey).get(
      `/api/v1/tasks/${enc(run.taskId)}/timeline?from=${enc(to)}&to=${enc(from)}`,
    );
    expect(reversed.status).toBe(400);
  });
});

describe("GET /api/v1/tasks/{id}/timeline?since= (arrival feed)", () => {
  it("sees every back-dated event posted while a reader pages forward", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("feed");
    const at = (s: number) => new Date(Date.UTC(2025, 5, 1, 12, 0, 0) + s * 1000).toISOString();
    const initial = Array.from({ length: 20 }, (_, i) =>
      makeEvent(taskId, {
        id: `${taskId}-i${i}`,
        plane: "tools",
        type: "tool.called",
        occurred_at: at(1000 + i),
        attrs: { call_id: `c${i}` },
      }),
    );
    expect((await postEvents(t.apiKey, initial)).status).toBe(200);

    const seen = new Map<string, number>();
    let since = "0";
    const readPage = async () => {
      const res = await api(t.apiKey).get<ArrivalPage>(
        `/api/v1/tasks/${enc(taskId)}/timeline?since=${enc(since)}&limit=3`,
      );
      expect(res.status).toBe(200);
      for (const e of res.body.events) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      since = res.body.next_since;
      return res.body;
    };
    // 75 back-dated events (each earlier than everything before it), posted while the reader pages.
    const late: EventInput[] = Array.from({ length: 75 }, (_, i) =>
      makeEvent(taskId, {
        id: `${taskId}-late${i}`,
        plane: "vault",
        type: "credential.used",
        occurred_at: at(900 - i),
        attrs: { credential_ref: "k" },
      }),
    );
    let posting = true;
    const poster = (async () => {
      for (let i = 0; i < late.length; i += 3) {
        expect((await postEvents(t.apiKey, late.slice(i, i + 3))).status).toBe(200);
      }
      posting = false;
    })();
    while (posting) await readPage();
    await poster;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const page = await readPage();
      if (!page.has_more && seen.size >= 95) break;
      if (Date.now() > deadline) break;
    }
    const expected = [...initial, ...late].map((e) => e.id).sort();
    expect([...seen.keys()].sort()).toEqual(expected);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Nothing new: the cursor stays usable and returns nothing.
    const idle = await readPage();
    expect(idle.events).toEqual([]);
  });

  it("holds back rows of a later transaction until an earlier one still running has committed", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("commit");
    const first = makeEvent(taskId, { id: `${taskId}-first` });
    expect((await postEvents(t.apiKey, [first])).status).toBe(200);
    // Another transaction anywhere in the database (a concurrent test) may hold the feed back for a moment: late, never lossy.
    let start = await api(t.apiKey).get<ArrivalPage>(`/api/v1/tasks/${enc(taskId)}/timeline?since=0`);
    for (let i = 0; i < 100 && start.body.events.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      start = await api(t.apiKey).get<ArrivalPage>(`/api/v1/tasks/${enc(taskId)}/timeline?since=0`);
    }
    expect(start.body.events.map((e) => e.id)).toEqual([first.id]);

    const slowId = `${taskId}-slow`;
    const quick = makeEvent(taskId, { id: `${taskId}-quick`, occurred_at: "2025-01-01T00:00:00Z" });
    let during: ArrivalPage | undefined;
    await handle.db.transaction(async (tx) => {
      // A transaction that received its event first but commits last.
      await tx.execute(sql`insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, retention_class)
                           values (${t.tenantId}, ${slowId}, ${taskId}, 'session', 'phase.changed', '2024-12-31T00:00:00Z', 'history')`);
      expect((await postEvents(t.apiKey, [quick])).status).toBe(200);
      during = (
        await api(t.apiKey).get<ArrivalPage>(
          `/api/v1/tasks/${enc(taskId)}/timeline?since=${enc(start.body.next_since)}`,
        )
      ).body;
    });
    // The quick event is committed but held back: handing it out would move the cursor past the slow one.
    expect(during!.events).toEqual([]);
    let after: StoredEvent[] = [];
    let since = during!.next_since;
    const deadline = Date.now() + 20_000;
    while (after.length < 2 && Date.now() < deadline) {
      const page = (await api(t.apiKey).get<ArrivalPage>(`/api/v1/tasks/${enc(taskId)}/timeline?since=${enc(since)}`))
        .body;
      after = [...after, ...page.events];
      since = page.next_since;
    }
    expect(after.map((e) => e.id)).toEqual([slowId, quick.id]);
  });

  it("refuses a malformed cursor and since mixed with time-order parameters", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("feedbad");
    expect((await postEvents(t.apiKey, [makeEvent(taskId)])).status).toBe(200);
    for (const q of ["since=abc", "since=0&cursor=x", "since=0&from=2025-01-01T00:00:00Z", "since=0&limit=0"]) {
      const res = await api(t.apiKey).get<{ error: { code: string } }>(`/api/v1/tasks/${enc(taskId)}/timeline?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
    }
  });
});
