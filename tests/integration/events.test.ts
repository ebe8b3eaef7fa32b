/**
 * POST /api/v1/events against the built server and real PostgreSQL: idempotency by event id (sequential and
 * concurrent), per-event rejection, envelope limits, redaction, and tasks created by their first event.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, EventInput, TaskList, TaskView, TimelinePage } from "@/lib/contract/api";
import { api, countRows, createTestTenant, makeEvent, newTaskId, postEvents, rid, testDbForFile } from "./helpers";

const handle = testDbForFile();

function batchFor(taskId: string, n: number): EventInput[] {
  return Array.from({ length: n }, (_, i) =>
    makeEvent(taskId, {
      id: `ev-${rid()}-${i}`,
      plane: "tools",
      type: "tool.called",
      occurred_at: new Date(Date.UTC(2025, 2, 1, 10, 0, 0, i)).toISOString(),
      attrs: { tool: "read_document", n: i },
    }),
  );
}

describe("POST /api/v1/events", () => {
  it("stores each event once when the same batch is posted twice", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const batch = batchFor(taskId, 5);

    const first = await postEvents(t.apiKey, batch);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r) => [r.id, r.status])).toEqual(batch.map((e) => [e.id, "stored"]));

    const second = await postEvents(t.apiKey, batch);
    expect(second.status).toBe(200);
    expect(second.body.results.map((r) => [r.id, r.status])).toEqual(batch.map((e) => [e.id, "duplicate"]));

    expect(await countRows(handle.db, "events", t.tenantId)).toBe(5);
    const ids = await queryRows<{ event_id: string }>(
      handle.db,
      sql`select event_id from events where tenant_id = ${t.tenantId} order by event_id`,
    );
    expect(ids.map((r) => r.event_id)).toEqual(batch.map((e) => e.id).sort());
  });

  it("stores an id repeated inside one batch once: the same content is a duplicate, other content a conflict", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const ev = makeEvent(newTaskId());
    const res = await postEvents(t.apiKey, [ev, { ...ev }, { ...ev, attrs: { changed: true } }]);
    expect(res.body.results).toEqual([
      { id: ev.id, status: "stored" },
      { id: ev.id, status: "duplicate" },
      {
        id: ev.id,
        status: "conflict",
        stored_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        error: expect.objectContaining({ code: "event_id_conflict" }),
      },
    ]);
    const rows = await queryRows<{ attrs: unknown }>(
      handle.db,
      sql`select attrs from events where tenant_id = ${t.tenantId}`,
    );
    expect(rows).toEqual([{ attrs: ev.attrs }]);
  });

  it("stores each event once when two identical batches arrive at the same moment", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    let expected = 0;
    for (let round = 0; round < 6; round++) {
      const taskId = newTaskId(`race${round}`);
      const batch = batchFor(taskId, 40);
      expected += batch.length;
      const [a, b] = await Promise.all([postEvents(t.apiKey, batch), postEvents(t.apiKey, batch)]);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      for (const [i, ev] of batch.entries()) {
        const statuses = [a.body.results[i], b.body.results[i]].map((r) => {
          expect(r?.id).toBe(ev.id);
          return r?.status;
        });
        // exactly one answer reports the event stored, the other a duplicate
        expect(statuses.sort()).toEqual(["duplicate", "stored"]);
      }
      expect(await countRows(handle.db, "events", t.tenantId, taskId)).toBe(batch.length);
    }
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(expected);
  });

  it("stores the good events of a mixed batch and rejects the bad ones with reasons", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const good = makeEvent(taskId, {
      plane: "environment",
      type: "sandbox.created",
      attempt: 1,
      environment_id: "sbx-1",
    });
    const extension = makeEvent(taskId, { plane: "vault", type: "x.acme.lease_renewed", attrs: { scope: "records" } });
    const unknownPlane = { ...makeEvent(taskId), plane: "network" };
    const wrongPlaneType = makeEvent(taskId, { plane: "session", type: "sandbox.created" });
    const unknownType = makeEvent(taskId, { plane: "tools", type: "tool.exploded" });
    const badTime = makeEvent(taskId, { occurred_at: "yesterday at noon" });
    const { id: _omitted, ...missingId } = makeEvent(taskId);
    void _omitted;

    const res = await postEvents(t.apiKey, [
      good,
      unknownPlane,
      wrongPlaneType,
      extension,
      unknownType,
      badTime,
      missingId,
    ]);
    expect(res.status).toBe(200);
    const [rGood, rPlane, rWrongPlane, rExt, rType, rTime, rMissing] = res.body.results;
    expect(res.body.results).toHaveLength(7);

    expect(rGood).toEqual({ id: good.id, status: "stored" });
    expect(rExt).toEqual({ id: extension.id, status: "stored" });

    expect(rPlane).toMatchObject({ id: unknownPlane.id, status: "rejected", error: { code: "invalid_event" } });
    expect(rPlane!.error!.message).toMatch(/plane/);

    expect(rWrongPlane).toMatchObject({ id: wrongPlaneType.id, status: "rejected", error: { code: "unknown_type" } });
    expect(rWrongPlane!.error!.message).toContain("sandbox.created");

    expect(rType).toMatchObject({ id: unknownType.id, status: "rejected", error: { code: "unknown_type" } });
    expect(rType!.error!.message).toContain("tool.exploded");

    expect(rTime).toMatchObject({ id: badTime.id, status: "rejected", error: { code: "invalid_event" } });
    expect(rTime!.error!.message).toMatch(/occurred_at/);

    expect(rMissing).toMatchObject({ status: "rejected", error: { code: "invalid_event" } });
    expect(rMissing!.error!.message).toMatch(/\bid\b/);

    const stored = await queryRows<{ event_id: string; type: string; plane: string }>(
      handle.db,
      sql`select event_id, type, plane from events where tenant_id = ${t.tenantId} order by event_id`,
    );
    expect(stored.map((r) => r.event_id).sort()).toEqual([good.id, extension.id].sort());
    expect(stored.find((r) => r.event_id === extension.id)).toMatchObject({
      plane: "vault",
      type: "x.acme.lease_renewed",
    });
  });

  it("answers 400 to a body that is not JSON and stores nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const ev = makeEvent(newTaskId());
    const raw = `{"events": [${JSON.stringify(ev)}`; // truncated
    const res = await api(t.apiKey).request<ApiErrorBody>("POST", "/api/v1/events", { raw });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_json");
    expect(typeof res.body.error.message).toBe("string");
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
    expect(await countRows(handle.db, "tasks", t.tenantId)).toBe(0);
  });

  it("answers 415 to a body not declared as JSON and stores nothing; JSON with a charset is read", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const post = (events: EventInput[], headers: Record<string, string>) =>
      api(t.apiKey).request<ApiErrorBody>("POST", "/api/v1/events", { raw: JSON.stringify({ events }), headers });
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", ""]) {
      const res = await post([makeEvent(taskId)], { "content-type": type });
      expect(res.status, `${type}: ${res.text}`).toBe(415);
      expect(res.body.error.code).toBe("unsupported_media_type");
      expect(res.body.error.message).toContain("application/json");
    }
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
    expect(await countRows(handle.db, "tasks", t.tenantId)).toBe(0);
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/vnd.custody+json"]) {
      const res = await post([makeEvent(taskId)], { "content-type": type });
      expect(res.status, `${type}: ${res.text}`).toBe(200);
    }
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(3);
  });

  it("refuses a batch of more than 1000 events and stores none of them", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const events = Array.from({ length: 1001 }, (_, i) => ({
      id: `big-${i}`,
      task_id: taskId,
      plane: "session",
      type: "checkpoint.saved",
      occurred_at: "2025-01-01T00:00:00Z",
    }));
    const res = await postEvents(t.apiKey, events);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect((res.body as unknown as ApiErrorBody).error.message).toMatch(/1000/);
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
    expect(await countRows(handle.db, "tasks", t.tenantId)).toBe(0);
  });

  it("answers 413 to a body over 1 MB and stores nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    // 20 events of ~60 KB each: every event is valid on its own, the body is ~1.2 MB.
    const events = Array.from({ length: 20 }, (_, i) =>
      makeEvent(taskId, { id: `huge-${i}`, attrs: { note: "x".repeat(60_000) } }),
    );
    const raw = JSON.stringify({ events });
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1024 * 1024);
    const res = await api(t.apiKey).request<ApiErrorBody>("POST", "/api/v1/events", { raw });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
    expect(await countRows(handle.db, "tasks", t.tenantId)).toBe(0);
  });

  it("stores secrets in attrs as [REDACTED] and counts them", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const bearer = "abcDEF123456ghiJKL789012";
    const openaiKey = `sk-proj-${"Q".repeat(12)}${rid(10)}`;
    const ev = makeEvent(taskId, {
      plane: "tools",
      type: "egress.allowed",
      attrs: {
        host: "records.internal",
        headers: { Authorization: `Bearer ${bearer}` },
        note: `called with ${openaiKey} by mistake`,
        login: { password: "hunter2-hunter2" },
        token_count: 5,
      },
    });
    const res = await postEvents(t.apiKey, [ev]);
    expect(res.body.results[0]).toEqual({ id: ev.id, status: "stored" });

    const timeline = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline`);
    expect(timeline.status).toBe(200);
    const stored = timeline.body.events.find((e) => e.id === ev.id)!;
    expect(stored.redaction_count).toBe(3);
    expect(stored.attrs).toEqual({
      host: "records.internal",
      headers: { Authorization: "[REDACTED]" },
      note: "called with [REDACTED] by mistake",
      login: { password: "[REDACTED]" },
      token_count: 5,
    });

    const [row] = await queryRows<{ attrs: string; redaction_count: number }>(
      handle.db,
      sql`select attrs::text as attrs, redaction_count from events where tenant_id = ${t.tenantId} and event_id = ${ev.id}`,
    );
    expect(row!.redaction_count).toBe(3);
    for (const secret of [bearer, openaiKey, "hunter2-hunter2"]) expect(row!.attrs).not.toContain(secret);
  });

  it("creates the task of an unknown task id with phase unknown and version 0", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("fresh");
    const ev = makeEvent(taskId, { plane: "session", type: "task.created", occurred_at: "2025-04-01T09:30:00Z" });
    expect((await postEvents(t.apiKey, [ev])).body.results[0]!.status).toBe("stored");

    const list = await api(t.apiKey).get<TaskList>("/api/v1/tasks");
    expect(list.status).toBe(200);
    const item = list.body.tasks.find((x) => x.task_id === taskId);
    expect(item).toMatchObject({ task_id: taskId, phase: "unknown", version: 0, event_count: 1, principal: null });
    expect(Date.parse(item!.last_event_at!)).toBe(Date.parse("2025-04-01T09:30:00Z"));

    const view = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ task_id: taskId, record: null, version: 0, phase: "unknown" });

    const timeline = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline`);
    expect(timeline.body.events.map((e) => e.id)).toEqual([ev.id]);
  });
});
