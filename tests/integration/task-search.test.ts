/**
 * Task search (`GET /api/v1/tasks?q=`, the /tasks page): part of a task id, or exactly an idempotency key, a
 * sandbox id (an event's environment_id) or a host (an event's attrs.host, any case) — inside the caller's tenant
 * only, from indexes that lead with tenant_id. And page sizes: 1..max, anything else a 400 that names the max.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { listTasksQuery } from "@/db/queries/tasks";
import type { TaskList } from "@/lib/contract/api";
import { MAX_PAGE } from "@/lib/domain/tasks/read";
import { checkpoint, newKey, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { api, baseUrl, createTestTenant, makeEvent, newTaskId, rid, type TestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();

async function search(t: TestTenant, q: string): Promise<string[]> {
  const res = await api(t.apiKey).get<TaskList>(`/api/v1/tasks?q=${encodeURIComponent(q)}`);
  expect(res.status, res.text).toBe(200);
  return res.body.tasks.map((x) => x.task_id).sort();
}

describe("task search", () => {
  let a: TestTenant;
  let b: TestTenant;
  const ids = { sandboxTask: "", keyTask: "", credentialTask: "", plainTask: "", bTask: "" };
  const sandbox = `sbx-${rid()}`;
  const host = `records-${rid(4)}.example.com`;
  const vaultHost = `vault-${rid(4)}.example.net`;
  const key = newKey("search");

  beforeAll(async () => {
    a = await createTestTenant(handle.db, { roles: ["viewer"] });
    b = await createTestTenant(handle.db, { roles: [] });
    ids.sandboxTask = newTaskId("sb");
    ids.keyTask = newTaskId("key");
    ids.credentialTask = newTaskId("cred");
    ids.plainTask = newTaskId("plain");
    ids.bTask = newTaskId("other");
    await sendEvents(a, [
      makeEvent(ids.sandboxTask, {
        plane: "environment",
        type: "sandbox.created",
        environment_id: sandbox,
        attempt: 1,
        attrs: { image: "x" },
      }),
      makeEvent(ids.sandboxTask, {
        plane: "tools",
        type: "egress.allowed",
        environment_id: sandbox,
        attempt: 1,
        attrs: { host: host.toUpperCase(), method: "PUT" },
      }),
      makeEvent(ids.credentialTask, {
        plane: "vault",
        type: "credential.used",
        attrs: { credential_ref: "records-api", host: vaultHost },
      }),
      makeEvent(ids.plainTask, { attrs: { note: `mentions ${sandbox} and ${host} but only as text`, hostname: host } }),
    ]);
    await checkpoint(a, ids.keyTask, {
      side_effects: { update_record: { idempotency_key: key, status: "not_started" } },
    });
    // Tenant B uses the same sandbox id, host and key on its own task.
    await sendEvents(b, [
      makeEvent(ids.bTask, { plane: "environment", type: "sandbox.created", environment_id: sandbox, attempt: 1 }),
      makeEvent(ids.bTask, { plane: "tools", type: "egress.allowed", attrs: { host } }),
    ]);
    await checkpoint(b, newTaskId("b-key"), {
      side_effects: { update_record: { idempotency_key: key, status: "not_started" } },
    });
  });

  it("finds the task by an exact sandbox id", async () => {
    expect(await search(a, sandbox)).toEqual([ids.sandboxTask]);
    expect(await search(a, sandbox.slice(0, -2)), "sandbox ids match exactly").toEqual([]);
  });

  it("finds the task by a host of an egress or credential event, in any case", async () => {
    expect(await search(a, host)).toEqual([ids.sandboxTask]);
    expect(await search(a, host.toUpperCase())).toEqual([ids.sandboxTask]);
    expect(await search(a, vaultHost)).toEqual([ids.credentialTask]);
    expect(await search(a, host.split(".")[0]!), "hosts match exactly").toEqual([]);
  });

  it("finds the task by an exact idempotency key", async () => {
    expect(await search(a, key)).toEqual([ids.keyTask]);
    expect(await search(a, key.slice(0, -1))).toEqual([]);
  });

  it("still finds tasks by part of their id", async () => {
    expect(await search(a, ids.plainTask)).toEqual([ids.plainTask]);
    expect(await search(a, ids.plainTask.slice(0, 9))).toEqual([ids.plainTask]);
    expect(await search(a, "%")).toEqual([]); // LIKE wildcards are literal
  });

  it("never finds another tenant's task, though it shares the sandbox id, host and key", async () => {
    for (const q of [sandbox, host, key]) {
      expect(await search(a, q)).not.toContain(ids.bTask);
    }
    expect(await search(b, sandbox)).toEqual([ids.bTask]);
    expect(await search(b, vaultHost)).toEqual([]);
  });

  it("serves the same search on the /tasks page", async () => {
    const viewer = await signInAs(a, "viewer");
    const res = await fetch(`${baseUrl()}/tasks?q=${encodeURIComponent(host)}`, { headers: { cookie: viewer.cookie } });
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html.match(/data-testid="task-row"/g)).toHaveLength(1);
    expect(html).toContain(ids.sandboxTask);
  });

  it("answers from indexes that lead with tenant_id (the plan has no sequential scan)", async () => {
    const plan = await handle.db.transaction(async (tx) => {
      // With a table this small the planner may prefer to scan; forbidding it shows whether an index path exists.
      await tx.execute(sql`set local enable_seqscan = off`);
      const rows = await queryRows<{ "QUERY PLAN": string }>(
        tx,
        sql`explain ${listTasksQuery(a.tenantId, { limit: 51, q: host })}`,
      );
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    // events is partitioned (decision 0054): each partition's copy of the index is named after the partition.
    expect(plan).toMatch(/events_\w+_tenant_id_environment_id_task_id_idx/);
    expect(plan).toMatch(/events_\w+_tenant_id_lower_task_id_idx/);
    // (side_effects has several indexes leading with tenant_id; with tiny tables the planner may pick any of them)
    expect(plan).not.toMatch(/Seq Scan on (events|side_effects|tasks)/);
  });
});

describe("page sizes", () => {
  it(`accepts 1 to ${MAX_PAGE} and refuses 0, more than ${MAX_PAGE}, fractions and text with a 400 naming the range`, async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    for (const limit of ["1", String(MAX_PAGE)]) {
      expect((await api(t.apiKey).get(`/api/v1/tasks?limit=${limit}`)).status, limit).toBe(200);
    }
    for (const limit of ["0", "-1", String(MAX_PAGE + 1), "100000", "2.5", "ten"]) {
      const res = await api(t.apiKey).get(`/api/v1/tasks?limit=${limit}`);
      expectError(res, 400, "bad_request");
      expect(errorOf(res).message, limit).toContain(`from 1 to ${MAX_PAGE}`);
    }
    // The timeline has its own maximum, enforced the same way.
    const taskId = newTaskId();
    await sendEvents(t, [makeEvent(taskId)]);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}/timeline?limit=1000`)).status).toBe(200);
    const over = await api(t.apiKey).get(`/api/v1/tasks/${taskId}/timeline?limit=1001`);
    expectError(over, 400, "bad_request");
    expect(errorOf(over).message).toContain("from 1 to 1000");
  });

  it("documents the maximum in the OpenAPI document", async () => {
    const res = await api().get<{
      paths: Record<string, { get?: { parameters?: Array<{ name: string; schema: { maximum?: number } }> } }>;
    }>("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const limit = res.body.paths["/api/v1/tasks"]!.get!.parameters!.find((p) => p.name === "limit");
    expect(limit?.schema.maximum).toBe(MAX_PAGE);
  });
});
