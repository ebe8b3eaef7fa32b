/**
 * A task's history as data (issue 24, decision 0043), over the real HTTP API on PostgreSQL: `GET …/events` gives every
 * event in time order as one JSON document, bounded by `max` with `next_cursor`, as a download; another tenant's task
 * is not found, a bad `max` or cursor is a 400.
 */
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "@/lib/contract/api";
import { sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;

describe("the history as data (GET /api/v1/tasks/{id}/events)", () => {
  it("downloads every event in time order as one JSON document, bounded by max with a cursor to go on", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId("hist");
    const base = Date.parse("2026-11-01T10:00:00Z");
    // Sent out of time order: the document is in time order.
    const events = Array.from({ length: 7 }, (_, i) =>
      makeEvent(taskId, { occurred_at: new Date(base + (6 - i) * 1000).toISOString() }),
    );
    await sendEvents(t, events);
    const viewer = await signInAs(t, "viewer");
    const all = await api(viewer).get<{
      task_id: string;
      events: StoredEvent[];
      count: number;
      complete: boolean;
      next_cursor: string | null;
    }>(`/api/v1/tasks/${enc(taskId)}/events`);
    expect(all.status, all.text).toBe(200);
    expect(all.headers.get("content-disposition")).toMatch(/^attachment; filename=".+-events\.json"$/);
    expect(all.body).toMatchObject({ task_id: taskId, count: 7, complete: true, next_cursor: null });
    const times = all.body.events.map((e) => e.occurred_at);
    expect(times).toEqual([...times].sort());
    expect(new Set(all.body.events.map((e) => e.id))).toEqual(new Set(events.map((e) => e.id)));

    // Bounded: 3 at a time, continued with the cursor, gives the same events once each.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const page: {
        status: number;
        text: string;
        body: { events: StoredEvent[]; complete: boolean; next_cursor: string | null };
      } = await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/events?max=3${cursor ? `&cursor=${enc(cursor)}` : ""}`);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.events.map((e) => e.id));
      cursor = page.body.next_cursor;
      if (page.body.complete) break;
      expect(page.body.events).toHaveLength(3);
    }
    expect(seen).toEqual(all.body.events.map((e) => e.id));
  });

  it("refuses another tenant's task (404) and a bad max or cursor (400)", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const other = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("hist-wall");
    await sendEvents(t, [makeEvent(taskId)]);
    expectError(await api(other.apiKey).get(`/api/v1/tasks/${enc(taskId)}/events`), 404, "not_found");
    for (const max of ["0", "100001", "abc"])
      expectError(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/events?max=${max}`), 400, "bad_request");
    expectError(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/events?cursor=nope`), 400, "bad_request");
  });
});
