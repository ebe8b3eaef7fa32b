/**
 * Inputs the storage cannot hold, through the real HTTP API on PostgreSQL (decision 0028): a value past its boundary
 * limit is refused where it enters — per event `rejected` naming the field path with the rest of the batch stored, per
 * request 422 naming it — so nothing is stored that would make the task's next correct request fail. A B-tree entry
 * holds at most 2,704 bytes: before these limits, a 6,000-character call id was stored and every later step into a new
 * attempt answered 500.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { EventResult } from "@/lib/contract/api";
import { checkpoint, intentBody, newKey, postIntent } from "./support/custody-calls";
import { expectError } from "./support/responses";
import {
  api,
  countRows,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();
const fixtureDir = "/work/shared/fixtures/real";
const sample = (sdk: string, name: string) => JSON.parse(fs.readFileSync(path.join(fixtureDir, sdk, name), "utf8"));

const statuses = (results: EventResult[]) => results.map((r) => r.status);

describe("a tool call id too long for the tool-call index", () => {
  it("is rejected naming attrs.call_id, and attempt 2's sandbox event, checkpoint and intent then succeed", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("limits");
    await checkpoint(t, taskId, { attempt: 1 });
    const sandbox1 = makeEvent(taskId, { type: "sandbox.created", attempt: 1, environment_id: "sbx-1" });
    const longCall = makeEvent(taskId, {
      type: "tool.called",
      attempt: 1,
      attrs: { tool: "update_record", call_id: "c".repeat(6000), mutation: true },
    });
    const fine = makeEvent(taskId, {
      type: "tool.called",
      attempt: 1,
      attrs: { tool: "lookup", call_id: "call-1", mutation: false },
    });
    const first = await postEvents(t.apiKey, [sandbox1, longCall, fine]);
    expect(first.status, first.text).toBe(200);
    expect(statuses(first.body.results)).toEqual(["stored", "rejected", "stored"]);
    expect(first.body.results[1]).toMatchObject({
      id: longCall.id,
      error: { code: "invalid_event", path: "attrs.call_id" },
    });
    expect(first.body.results[1]!.error!.message).toMatch(/attrs\.call_id is too long \(6000 characters\)/);

    // Attempt 2 ends attempt 1: its open mutating calls become unknown effects. Every step of it succeeds.
    const sandbox2 = await postEvents(t.apiKey, [
      makeEvent(taskId, { type: "sandbox.created", attempt: 2, environment_id: "sbx-2" }),
    ]);
    expect(sandbox2.status, sandbox2.text).toBe(200);
    expect(statuses(sandbox2.body.results)).toEqual(["stored"]);
    const saved = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { attempt: 2 }));
    expect(saved.status, saved.text).toBe(200);
    const go = await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey(), { attempt: 2 }));
    expect(go.status, go.text).toBe(200);
    expect(go.body).toMatchObject({ decision: "go" });
    // The replaced sandbox gets no go.
    const old = await postIntent(t.apiKey, taskId, "send_mail", intentBody(newKey(), { attempt: 1 }));
    expectError(old, 409, "stale_attempt");
  });
});

describe("a RunState whose call id is too long", () => {
  it("answers 422 naming the path of the call id, and stores nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("limits-import");
    await checkpoint(t, taskId);
    const state = {
      ...sample("openai-agents-python", "v1_17.json"),
      current_agent: { name: "a" },
      current_step: { type: "next_step_run_again", data: {} },
      generated_items: [
        {
          type: "tool_call_item",
          agent: { name: "a" },
          raw_item: { type: "function_call", call_id: "c".repeat(6000), name: "charge_card", arguments: "{}" },
        },
      ],
    };
    const before = await countRows(handle.db, "events", t.tenantId);
    const res = await api(t.apiKey).post(
      `/api/v1/import/openai-agents/run-state?task_id=${encodeURIComponent(taskId)}`,
      state,
    );
    expectError(res, 422, "invalid_run_state");
    expect((res.body as { error: { details: unknown } }).error.details).toMatchObject({
      problem: "invalid_name",
      fields: [{ path: "generated_items[0].raw_item.call_id" }],
    });
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(before);
    expect(await countRows(handle.db, "side_effects", t.tenantId)).toBe(0);
  });
});

describe("a host or credential reference too long for its index", () => {
  it("rejects those events naming the path and stores the rest of the batch; a retry answers the same", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("limits-host");
    const batch = [
      makeEvent(taskId, { type: "egress.allowed", attrs: { host: `${"h".repeat(2700)}.example.com`, port: 443 } }),
      makeEvent(taskId, { type: "credential.used", attrs: { credential_ref: "r".repeat(2700) } }),
      makeEvent(taskId, { type: "egress.allowed", attrs: { host: "records.example.com", port: 443 } }),
    ];
    for (const expected of [
      ["rejected", "rejected", "stored"],
      ["rejected", "rejected", "duplicate"],
    ]) {
      const res = await postEvents(t.apiKey, batch);
      expect(res.status, res.text).toBe(200);
      expect(statuses(res.body.results)).toEqual(expected);
      expect(res.body.results.map((r) => r.error?.path)).toEqual(["attrs.host", "attrs.credential_ref", undefined]);
    }
    const rows = await queryRows<{ event_id: string }>(
      handle.db,
      sql`select event_id from events where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(rows.map((r) => r.event_id)).toEqual([batch[2]!.id]);
    // The task's search by host still works.
    const found = await api(t.apiKey).get<{ tasks: Array<{ task_id: string }> }>(
      `/api/v1/tasks?host=records.example.com`,
    );
    expect(found.status, found.text).toBe(200);
    expect(found.body.tasks.map((x) => x.task_id)).toContain(taskId);
  });
});
