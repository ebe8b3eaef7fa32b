/**
 * The task list's status, sort and filters (issue 24, decision 0043), over the real HTTP API on PostgreSQL:
 * - each status (running, stopped, waiting_for_approval, replay, stale, done, failed, terminated) is what the task
 *   page would say — the phase once the run has ended, else the resume gate's verdict — and `?status=` finds exactly
 *   the tasks in it, page by page;
 * - `sort=activity` (the default) orders by the newest event, `sort=created` by creation; a cursor belongs to its sort;
 * - bad values of status, sort, effect_status and cursor are 400s.
 */
import { describe, expect, it } from "vitest";
import type { TaskList } from "@/lib/contract/api";
import { TASK_STATUSES } from "@/lib/domain/tasks/status";
import { checkpoint, createTaskByEvent, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe("the task list's status", () => {
  it("says what the task page says, and ?status= finds exactly those tasks, page by page", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const ids = Object.fromEntries(TASK_STATUSES.map((s) => [s, newTaskId(`st-${s}`)])) as Record<
      (typeof TASK_STATUSES)[number],
      string
    >;
    await checkpoint(t, ids.running);
    await sendEvents(t, [makeEvent(ids.running, { occurred_at: ago(60_000) })]);
    await checkpoint(t, ids.stopped, {
      side_effects: { update_record: { idempotency_key: `k-${ids.stopped}`, status: "in_flight" } },
    });
    await checkpoint(t, ids.waiting_for_approval, {
      side_effects: {
        publish_report: { idempotency_key: `k-${ids.waiting_for_approval}`, status: "awaiting_approval" },
      },
    });
    await createTaskByEvent(t, ids.replay);
    await checkpoint(t, ids.stale);
    await sendEvents(t, [makeEvent(ids.stale, { occurred_at: ago(2 * 3_600_000) })]);
    await checkpoint(t, ids.done, { phase: "done" });
    await checkpoint(t, ids.failed, { phase: "failed" });
    await checkpoint(t, ids.terminated);
    const owner = await signInAs(t, "owner");
    const ended = await api(owner).post(`/api/v1/tasks/${enc(ids.terminated)}/terminate`, { reason: "test" });
    expect(ended.status, ended.text).toBe(200);

    const all = await api(t.apiKey).get<TaskList>("/api/v1/tasks?limit=50");
    expect(all.status, all.text).toBe(200);
    const statusOf = Object.fromEntries(all.body.tasks.map((x) => [x.task_id, x.status]));
    for (const s of TASK_STATUSES) expect(statusOf[ids[s]], s).toBe(s);

    for (const s of TASK_STATUSES) {
      const res = await api(t.apiKey).get<TaskList>(`/api/v1/tasks?status=${s}`);
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.tasks.map((x) => x.task_id),
        s,
      ).toEqual([ids[s]]);
    }

    // Page by page with a gate-derived status: two running tasks, one per page, the filter kept by the cursor.
    const second = newTaskId("st-running-2");
    await checkpoint(t, second);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 4; i++) {
      const page: { status: number; text: string; body: TaskList } = await api(t.apiKey).get<TaskList>(
        `/api/v1/tasks?status=running&limit=1${cursor ? `&cursor=${enc(cursor)}` : ""}`,
      );
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.tasks.map((x) => x.task_id));
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen.sort()).toEqual([ids.running, second].sort());
  });
});

describe("the task list's sort", () => {
  it("orders by last activity by default and by creation with sort=created; a cursor belongs to its sort", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const older = newTaskId("sort-old");
    const newer = newTaskId("sort-new");
    await checkpoint(t, older);
    await checkpoint(t, newer);
    await sendEvents(t, [
      makeEvent(newer, { occurred_at: ago(3_600_000) }),
      makeEvent(older, { occurred_at: ago(1_000) }),
    ]);
    const byActivity = await api(t.apiKey).get<TaskList>("/api/v1/tasks");
    expect(byActivity.body.tasks.map((x) => x.task_id)).toEqual([older, newer]);
    expect(byActivity.body.tasks[0]!.last_activity_at).toBe(byActivity.body.tasks[0]!.last_event_at);
    const byCreation = await api(t.apiKey).get<TaskList>("/api/v1/tasks?sort=created");
    expect(byCreation.body.tasks.map((x) => x.task_id)).toEqual([newer, older]);

    const first = await api(t.apiKey).get<TaskList>("/api/v1/tasks?limit=1");
    expect(first.body.tasks.map((x) => x.task_id)).toEqual([older]);
    const cursor = first.body.next_cursor!;
    const next = await api(t.apiKey).get<TaskList>(`/api/v1/tasks?limit=1&cursor=${enc(cursor)}`);
    expect(next.body.tasks.map((x) => x.task_id)).toEqual([newer]);
    expectError(
      await api(t.apiKey).get(`/api/v1/tasks?limit=1&sort=created&cursor=${enc(cursor)}`),
      400,
      "bad_request",
    );
  });

  it("refuses bad status, sort, effect_status and cursor values with 400 naming the parameter", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    for (const [query, name] of [
      ["status=bogus", "status"],
      ["status=unknown", "status"],
      ["sort=newest", "sort"],
      ["effect_status=lost", "effect_status"],
    ] as const) {
      const res = await api(t.apiKey).get(`/api/v1/tasks?${query}`);
      expectError(res, 400, "bad_request");
      expect(res.text).toContain(name);
    }
    expectError(await api(t.apiKey).get("/api/v1/tasks?cursor=nope"), 400, "bad_request");
    expect((await api(t.apiKey).get("/api/v1/tasks?effect_status=unknown")).status).toBe(200);
  });
});
