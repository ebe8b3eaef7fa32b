/**
 * Requests that would cost a thousand times the others (decision 0034): a RunState import holds at most
 * `LIMITS.runStateCalls` tool calls (a larger one is refused whole with a 422 naming the limit and the value, nothing
 * stored) and writes in bounded transactions, so the embedded database's one connection answers other statements
 * while an import runs.
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
import { checkpoint } from "./support/custody-calls";
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
