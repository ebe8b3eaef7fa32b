/**
 * Bodies nested far past the depth limits, on the runtime's routes other than the intent route the `hostile`
 * benchmark sends one to (decision 0009): each is refused with the route's own answer, writes nothing, and the next
 * request is served. Siblings of the case: another route (events, OTLP traces), another shape (deep and not JSON).
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { askGate, checkpoint } from "./support/custody-calls";
import { baseUrl, createTestTenant, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** Just under the 1 MiB body limit: valid JSON, 524,000 levels deep. */
const DEEP = "[".repeat(524_000) + "]".repeat(524_000);

async function send(method: string, path: string, apiKey: string, body: string) {
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body,
  });
  return {
    status: res.status,
    json: (await res.json()) as { error?: { code: string; message: string }; code?: number; message?: string },
  };
}

async function storedEvents(tenantId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from events where tenant_id = ${tenantId}`,
  );
  return row!.n;
}

describe("bodies nested past the limit", () => {
  it("refuses an event batch of 1 MiB of nesting (422) with nothing stored, and serves the next request", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const before = await storedEvents(t.tenantId);
    const res = await send("POST", "/api/v1/events", t.apiKey, DEEP);
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: "validation_failed" });
    expect(res.json.error!.message).toMatch(/nested deeper than 512 levels/);
    expect(await storedEvents(t.tenantId)).toBe(before);
    expect((await askGate(t.apiKey, taskId)).status).toBe(200);
  });

  it("refuses an OTLP JSON trace of 1 MiB of nesting (400) with nothing stored", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const before = await storedEvents(t.tenantId);
    const res = await send("POST", "/api/v1/traces", t.apiKey, DEEP);
    // OTLP/HTTP answers a google.rpc.Status: code 3 is INVALID_ARGUMENT.
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 3, message: expect.stringMatching(/nested deeper than 64 levels/) });
    expect(await storedEvents(t.tenantId)).toBe(before);
  });

  it("refuses a checkpoint deep and not JSON as too deep (422), creating no task", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const res = await send("PUT", `/api/v1/tasks/${taskId}`, t.apiKey, "[".repeat(500_000) + "}");
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: "validation_failed" });
    const tasks = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from tasks where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(tasks[0]!.n).toBe(0);
  });
});
