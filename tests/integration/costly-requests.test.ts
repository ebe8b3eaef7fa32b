/**
 * Requests that would cost a thousand times the others (decision 0034): a RunState import holds at most
 * `LIMITS.runStateCalls` tool calls (a larger one is refused whole with a 422 naming the limit and the value, nothing
 * stored) and writes in bounded transactions, so the embedded database's one connection answers other statements
 * while an import runs. A task holds at most `LIMITS.pendingApprovals` pending approval requests (a new one answers
 * 409 `too_many_pending_approvals`), and the gate reads only a task's live requests, whatever its history holds.
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
import type { ApiErrorBody } from "@/lib/contract/api";
import { askGate, checkpoint, intentBody, postIntent } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, newTaskId, testDbForFile, type FullTestTenant } from "./helpers";

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
      const importing = importRunState(ctx, { taskId, body: stateWithCalls(300, 300) }).finally(() => {
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
      expect(result.receipts).toHaveLength(300);
      expect(result.unknown).toHaveLength(300);
      expect(await eventCount(lite.db, tenant.tenantId, taskId)).toBe(1 + 300 * 2 + 300);
      const longest = Math.max(...waits);
      expect(waits.length).toBeGreaterThan(5);
      expect(longest, `longest wait ${longest.toFixed(0)} ms of an import of ${took.toFixed(0)} ms`).toBeLessThan(
        took / 4,
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
