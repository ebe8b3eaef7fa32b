/**
 * Requests that would cost a thousand times the others (decision 0034): a RunState import holds at most
 * `LIMITS.runStateCalls` tool calls (a larger one is refused whole with a 422 naming the limit and the value, nothing
 * stored) and writes in bounded transactions, so the embedded database's one connection answers other statements
 * while an import runs. A task holds at most `LIMITS.pendingApprovals` pending approval requests (a new one answers
 * 409 `too_many_pending_approvals`), and the gate reads only a task's live requests, whatever its history holds. The
 * task page never ships event bodies in bulk: 2,000 events of 63 KB keep its HTML small, its reads take summaries cut in
 * the database (decision 0036), and one event's detail comes from `GET /api/v1/tasks/{id}/events/{event_id}`, capped,
 * behind the tenant wall.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { ApiKeyActor } from "@/lib/domain/authz";
import { generateSigningKey } from "@/lib/domain/crypto/signing";
import { ingestEvents } from "@/lib/domain/events/ingest";
import { importRunState } from "@/lib/domain/imports/import-run-state";
import { LIMITS } from "@/lib/domain/limits";
import type { ApiErrorBody, StoredEvent, TimelineOverview, TimelinePage } from "@/lib/contract/api";
import { DETAIL_ATTRS_CHARS, SUMMARY_ATTRS_CHARS } from "@/lib/domain/events/summary";
import { SQL_SUMMARY_STRING_CHARS, SQL_WHOLE_ATTRS_CHARS } from "@/db/queries/tasks";
import { getTimeline } from "@/lib/domain/tasks/read";
import { getArrivalFeed, getTimelineOverview } from "@/lib/domain/tasks/timeline";
import { userActor } from "../support/approvals";
import { askGate, checkpoint, intentBody, postIntent, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, signIn, testDbForFile, type FullTestTenant } from "./helpers";

const handle = testDbForFile();
const fixtureDir = "/work/shared/fixtures/real";

/** A Python RunState that ended mid-turn with `executed` calls that have outputs and `open` calls that have none. */
function stateWithCalls(executed: number, open: number, tag = "c"): Record<string, unknown> {
  const base = JSON.parse(fs.readFileSync(path.join(fixtureDir, "openai-agents-python", "v1_17.json"), "utf8"));
  const items: unknown[] = [];
  const call = (id: string) => ({
    type: "tool_call_item",
    agent: { name: "a" },
    raw_item: { type: "function_call", call_id: id, name: "update_record", arguments: '{"n":1}', id: `fc_${id}` },
  });
  const output = (id: string) => ({
    type: "tool_call_output_item",
    agent: { name: "a" },
    output: "ok",
    raw_item: { type: "function_call_output", call_id: id, output: "ok" },
  });
  for (let i = 0; i < executed; i += 1) items.push(call(`${tag}-done-${i}`), output(`${tag}-done-${i}`));
  for (let i = 0; i < open; i += 1) items.push(call(`${tag}-open-${i}`));
  return {
    ...base,
    current_agent: { name: "a" },
    current_step: { type: "next_step_run_again", data: {} },
    generated_items: items,
  };
}

const importUrl = (taskId: string) => `/api/v1/import/openai-agents/run-state?task_id=${encodeURIComponent(taskId)}`;

let t: FullTestTenant;
beforeAll(async () => {
  t = await createTestTenant(handle.db);
});

async function eventCount(db: Db, tenantId: string, taskId: string): Promise<number> {
  const [r] = await queryRows<{ n: string }>(
    db,
    sql`select count(*) as n from events where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return Number(r!.n);
}

describe("what one RunState import may hold", () => {
  it("4,000 calls are refused with 422 naming the limit and the value; nothing is stored", async () => {
    const taskId = newTaskId("costly-import");
    await checkpoint(t, taskId);
    const before = await eventCount(handle.db, t.tenantId, taskId);
    const res = await api(t.apiKey).post<ApiErrorBody>(importUrl(taskId), stateWithCalls(3000, 1000));
    expectError(res, 422, "invalid_run_state");
    const body = res.body;
    expect(body.error.details).toMatchObject({
      problem: "too_many_calls",
      limit: LIMITS.runStateCalls.max,
      value: 4000,
    });
    expect(body.error.message).toContain("4,000");
    expect(body.error.message).toContain(LIMITS.runStateCalls.max.toLocaleString("en-US"));
    expect(await eventCount(handle.db, t.tenantId, taskId)).toBe(before);
  });

  it(`a state at the limit (${LIMITS.runStateCalls.max} calls) imports whole`, async () => {
    const taskId = newTaskId("costly-import");
    await checkpoint(t, taskId);
    const half = LIMITS.runStateCalls.max / 2;
    const res = await api(t.apiKey).post<{ receipts: string[]; unknown: string[] }>(
      importUrl(taskId),
      stateWithCalls(half, half),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.receipts).toHaveLength(half);
    expect(res.body.unknown).toHaveLength(half);
  }, 120_000);
});

describe("an import on the embedded database does not hold its one connection", () => {
  it("other statements answer between the import's bounded transactions", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-costly-import-"));
    const lite = await openDatabase({ dir });
    try {
      const tenant = await createTestTenant(lite.db, { roles: [] });
      const db = lite.scoped({ tenantId: tenant.tenantId });
      const actor: ApiKeyActor = {
        kind: "api_key",
        tenantId: tenant.tenantId,
        keyId: "00000000-0000-0000-0000-000000000000",
        keyName: "test",
      };
      const { key } = generateSigningKey();
      const ctx = { db, actor, signingKey: key };
      const taskId = "task-import-on-pglite";
      await ingestEvents(ctx, { body: { events: [makeEvent(taskId, { id: "first" })] } });

      let done = false;
      const started = performance.now();
      const importing = importRunState(ctx, { taskId, body: stateWithCalls(200, 200) }).finally(() => {
        done = true;
      });
      // What `/api/health` does, over and over while the import runs: the longest wait is how long it was held.
      const waits: number[] = [];
      while (!done) {
        const t0 = performance.now();
        await lite.db.execute(sql`select 1`);
        waits.push(performance.now() - t0);
      }
      const result = await importing;
      const took = performance.now() - started;
      expect(result.receipts).toHaveLength(200);
      expect(result.unknown).toHaveLength(200);
      expect(await eventCount(lite.db, tenant.tenantId, taskId)).toBe(1 + 200 * 2 + 200);
      const longest = Math.max(...waits);
      expect(waits.length).toBeGreaterThan(5);
      // 200 calls go in 4 transactions of 50: a statement waits at most about one of them (a quarter of the import, more
      // on a loaded machine), never the whole import as when one transaction held the connection throughout.
      expect(longest, `longest wait ${longest.toFixed(0)} ms of an import of ${took.toFixed(0)} ms`).toBeLessThan(
        took / 2,
      );
    } finally {
      await lite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe("pending approval requests per task", () => {
  const needsApproval = (key: string) => intentBody(key, { requires_approval: true, action: "records.publish" });

  it("the task holds at most the limit; the next new request is refused by name, a known one is found again, a decision frees a place", async () => {
    const taskId = newTaskId("costly-approvals");
    await checkpoint(t, taskId, { side_effects: {} });
    const max = LIMITS.pendingApprovals.max;
    const ids: string[] = [];
    for (let i = 0; i < max; i += 1) {
      const res = await postIntent(t.apiKey, taskId, `write-${i}`, needsApproval(`key-pending-${i}`));
      expectError(res, 403, "approval_required");
      ids.push(
        (res.body as unknown as ApiErrorBody & { error: { details: { approval_id: string } } }).error.details
          .approval_id,
      );
    }
    const over = await postIntent(t.apiKey, taskId, "write-over", needsApproval("key-pending-over"));
    expectError(over, 409, "too_many_pending_approvals");
    expect((over.body as unknown as ApiErrorBody).error.details).toEqual({ limit: max, value: max });
    expect((over.body as unknown as ApiErrorBody).error.message).toContain(max.toLocaleString("en-US"));
    const [stored] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from approval_requests where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(stored!.n).toBe(max);

    // Asking again for a request the task holds is not a new one.
    const again = await postIntent(t.apiKey, taskId, "write-0", needsApproval("key-pending-0"));
    expectError(again, 403, "approval_required");

    // The gate names each pending request, no more.
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.reasons.filter((r) => r.code === "approval_missing")).toHaveLength(max);

    // An approver's decision frees a place.
    const approver = await signInAs(t, "approver");
    const decided = await api(approver).post(`/api/v1/approvals/${ids[0]}/decision`, {
      decision: "reject",
      reason: "not this one",
    });
    expect(decided.status, decided.text).toBe(200);
    const next = await postIntent(t.apiKey, taskId, "write-over", needsApproval("key-pending-over"));
    expectError(next, 403, "approval_required");
  }, 120_000);

  it("a RunState with more pending approvals than a task may hold is refused whole", async () => {
    const taskId = newTaskId("costly-approvals");
    await checkpoint(t, taskId);
    const base = JSON.parse(
      fs.readFileSync(path.join(fixtureDir, "openai-agents-python", "v1_13_pending_tool_approval.json"), "utf8"),
    );
    const interruptions = base.current_step?.data?.interruptions;
    expect(Array.isArray(interruptions) && interruptions.length > 0).toBe(true);
    const model = interruptions[0];
    const many = Array.from({ length: LIMITS.pendingApprovals.max + 1 }, (_, i) => {
      const copy = structuredClone(model);
      copy.raw_item.call_id = `call-many-${i}`;
      if (copy.raw_item.id) copy.raw_item.id = `fc-many-${i}`;
      return copy;
    });
    const state = {
      ...base,
      current_step: { ...base.current_step, data: { ...base.current_step.data, interruptions: many } },
    };
    const res = await api(t.apiKey).post<ApiErrorBody>(importUrl(taskId), state);
    expectError(res, 422, "invalid_run_state");
    expect(res.body.error.details).toMatchObject({
      problem: "too_many_approvals",
      limit: LIMITS.pendingApprovals.max,
      value: LIMITS.pendingApprovals.max + 1,
    });
  });

  it("the gate reads a task's live requests through their index, not its used and replaced ones", async () => {
    const taskId = newTaskId("costly-approvals");
    await checkpoint(t, taskId, { side_effects: {} });
    const res = await postIntent(t.apiKey, taskId, "write-live", needsApproval("key-live-1"));
    expectError(res, 403, "approval_required");
    // A long history: 3,000 requests already used or replaced (as many intents would leave them).
    await handle.db.execute(sql`
      insert into approval_requests (tenant_id, id, task_id, side_effect, idempotency_key, principal, action, tool,
                                     payload_digest, input_digest, policy_version, requested_by_kind, requested_by_id,
                                     requested_by, origin, decision, decided_at, consumed_at, consumed_attempt)
      select tenant_id, gen_random_uuid(), task_id, 'old-' || g, 'key-old-' || g, principal, action, tool,
             payload_digest, input_digest, policy_version, requested_by_kind, requested_by_id, requested_by, origin,
             'approve', now(), now(), 1
      from approval_requests, generate_series(1, 3000) g
      where tenant_id = ${t.tenantId} and task_id = ${taskId}`);
    await handle.db.execute(sql`analyze approval_requests`);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.reasons.filter((r) => r.code === "approval_missing")).toHaveLength(1);
    // The gate's read of live requests (lib/domain/gate/ask.ts), as its plan shows it.
    const plan = await queryRows<{ "QUERY PLAN": unknown }>(
      handle.db,
      sql`explain (analyze, format json)
          select r.id from approval_requests r
          where r.tenant_id = ${t.tenantId} and r.task_id = ${taskId} and r.superseded_by is null and r.consumed_at is null`,
    );
    const text = JSON.stringify(plan[0]!["QUERY PLAN"]);
    expect(text).toContain("approval_requests_live_idx");
    expect(text).not.toMatch(/"Rows Removed by Filter":\s*[1-9]/);
  }, 60_000);
});

describe("pages never ship event bodies in bulk", () => {
  const enc = encodeURIComponent;
  const LARGE = 63_000;

  /** A task with `n` events whose attrs are each ≈ 63 KB, inserted in SQL, plus one small event. */
  async function largeTask(n: number): Promise<string> {
    const taskId = newTaskId("costly-page");
    await checkpoint(t, taskId);
    await handle.db.execute(sql`
      insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, attempt, attrs, retention_class)
      select ${t.tenantId}::uuid, ${taskId} || '-big-' || g, ${taskId}, 'tools', 'tool.completed',
             now() - interval '1 hour' + g * interval '1 millisecond', 1,
             jsonb_build_object('call_id', 'call-' || g, 'tool', 'fetch_report', 'ok', true,
                                'body', repeat(md5(g::text), ${Math.floor(LARGE / 32)}),
                                'nested', jsonb_build_object('rows', jsonb_build_array(repeat('r', 1000), 2, 3))),
             'history'
      from generate_series(1, ${n}) g`);
    return taskId;
  }

  it("2,000 events of 63 KB: the task page's HTML stays small, and the events it carries are summaries", async () => {
    const taskId = await largeTask(2000);
    const session = { cookie: await signIn(t.users.responder!.email, t.password) };
    const started = performance.now();
    const page = await api(session).get(`/tasks/${enc(taskId)}`);
    const took = performance.now() - started;
    expect(page.status).toBe(200);
    // 2,000 × 63 KB shipped whole would be ≈ 127 MB; summaries are at most ≈ 1 KB each, with the page around them.
    expect(page.text.length).toBeLessThan(2_000_000);
    // The server reads summaries cut in the database, not ≈ 126 MB of bodies it then cuts (decision 0036).
    expect(took).toBeLessThan(15_000);
    expect(page.text).not.toContain("r".repeat(1000));
    expect(page.text).toContain("attrs_truncated");

    // The timeline reads the page makes (windows, the arrival feed) ask for summaries too.
    const feed = await api(session).get<TimelinePage>(
      `/api/v1/tasks/${enc(taskId)}/timeline?since=0&limit=1000&attrs=summary`,
    );
    expect(feed.status).toBe(200);
    expect(feed.text.length).toBeLessThan(1000 * (SUMMARY_ATTRS_CHARS + 1000));
    const big = feed.body.events.find((e) => e.id === `${taskId}-big-1`)!;
    expect(big.attrs_truncated).toBe(true);
    expect(big.attrs).toMatchObject({ call_id: "call-1", tool: "fetch_report", ok: true });
    expect(JSON.stringify(big.attrs).length).toBeLessThanOrEqual(SUMMARY_ATTRS_CHARS);
    const overview = await api(session).get<TimelineOverview>(
      `/api/v1/tasks/${enc(taskId)}/timeline/overview?attrs=summary`,
    );
    expect(overview.status).toBe(200);
    expect(overview.body.events.every((e) => JSON.stringify(e.attrs).length <= SUMMARY_ATTRS_CHARS)).toBe(true);
    expect((await api(session).get(`/api/v1/tasks/${enc(taskId)}/timeline?attrs=all`)).status).toBe(400);
  }, 180_000);

  it("the page's reads take summaries cut in the database: no whole body of a large event leaves PostgreSQL", async () => {
    const taskId = await largeTask(300);
    const ctx = { db: handle.db, actor: userActor(t, "responder") };
    const overview = await getTimelineOverview(ctx, { taskId, columns: "summary" });
    expect(overview.events).toHaveLength(300);
    for (const e of overview.events) {
      expect(e.attrs_truncated).toBe(true);
      // Top-level scalars only, strings cut: the nested object and the 63 KB body never come out whole.
      expect(JSON.stringify(e.attrs).length).toBeLessThanOrEqual(SQL_WHOLE_ATTRS_CHARS);
      expect(e.attrs).not.toHaveProperty("nested");
      expect(String(e.attrs.body)).toHaveLength(SQL_SUMMARY_STRING_CHARS + 1);
    }
    const feed = await getArrivalFeed(ctx, { taskId, since: "0", limit: 500, columns: "summary" });
    expect(feed.events.every((e) => e.attrs_truncated && JSON.stringify(e.attrs).length <= SQL_WHOLE_ATTRS_CHARS)).toBe(
      true,
    );
    const window = await getTimeline(ctx, { taskId, from: "2000-01-01T00:00:00Z", limit: 500, columns: "summary" });
    expect(
      window.events.every((e) => e.attrs_truncated && JSON.stringify(e.attrs).length <= SQL_WHOLE_ATTRS_CHARS),
    ).toBe(true);
    // A small event is read whole, unmarked.
    const small = await getTimeline(ctx, { taskId, limit: 500, columns: "summary" });
    const whole = small.events.find((e) => !e.id.includes("-big-"));
    expect(whole?.attrs_truncated).toBeUndefined();
  }, 120_000);

  it("one event's detail on demand: capped with a marker, small events whole, behind the tenant wall", async () => {
    const taskId = await largeTask(3);
    const viewer = await signInAs(t, "viewer");
    const url = (id: string, task = taskId) => `/api/v1/tasks/${enc(task)}/events/${enc(id)}`;
    const detail = await api(viewer).get<StoredEvent>(url(`${taskId}-big-2`));
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body).toMatchObject({
      id: `${taskId}-big-2`,
      task_id: taskId,
      type: "tool.completed",
      attrs_truncated: true,
    });
    expect(detail.body.attrs).toMatchObject({ call_id: "call-2", tool: "fetch_report", ok: true });
    expect(JSON.stringify(detail.body.attrs).length).toBeLessThanOrEqual(DETAIL_ATTRS_CHARS);
    expect(detail.text.length).toBeLessThan(DETAIL_ATTRS_CHARS + 2000);
    expect(String(detail.body.attrs.body).endsWith("…")).toBe(true);

    // A small event comes whole, with no marker (the runtime key reads it too).
    await sendEvents(t, [makeEvent(taskId, { id: `${taskId}-small`, attrs: { note: "small" } })]);
    const all = await api(t.apiKey).get<{ events: StoredEvent[] }>(`/api/v1/tasks/${enc(taskId)}/timeline`);
    const first = all.body.events.find((e) => JSON.stringify(e.attrs).length < 1000)!;
    expect(first).toBeDefined();
    const whole = await api(t.apiKey).get<StoredEvent>(url(first.id));
    expect(whole.status).toBe(200);
    expect(whole.body.attrs).toEqual(first.attrs);
    expect(whole.body.attrs_truncated).toBeUndefined();

    // Unknown event, the event under another task's id, another tenant, no credentials.
    expectError(await api(viewer).get(url(`${taskId}-big-404`)), 404, "not_found");
    const otherTask = newTaskId("costly-page");
    await checkpoint(t, otherTask);
    expectError(await api(viewer).get(url(`${taskId}-big-2`, otherTask)), 404, "not_found");
    const other = await createTestTenant(handle.db);
    expectError(await api(other.apiKey).get(url(`${taskId}-big-2`)), 404, "not_found");
    const otherOwner = await signInAs(other, "owner");
    expectError(await api(otherOwner).get(url(`${taskId}-big-2`)), 404, "not_found");
    expect((await api().get(url(`${taskId}-big-2`))).status).toBe(401);
    expectError(await api(viewer).get(url("x".repeat(201))), 400, "bad_request");
  }, 60_000);
});
