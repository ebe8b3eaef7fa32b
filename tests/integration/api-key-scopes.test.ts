/**
 * Runtime API keys with an expiry and a scope (issue 24, "Settings"; decision 0044), through the real HTTP API on
 * PostgreSQL: each scope against a route it may and one it may not use, a task outside a prefix key's prefix, the
 * expiry's edge (the instant itself is expired), a key of another tenant, and what an owner may and may not create.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiKeyView } from "@/lib/domain/tenancy/api-keys";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, type FullTestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();

type Made = { id: string; key: string; scope: string; task_prefix: string | null; expires_at: string | null };

describe("runtime API key scopes and expiry", () => {
  let t: FullTestTenant;
  let owner: { cookie: string };
  const make = async (body: Record<string, unknown>): Promise<Made> => {
    const res = await api(owner).post<Made>("/api/v1/settings/api-keys", {
      name: `key ${body.scope ?? "full"}`,
      ...body,
    });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  let taskIn: string;
  let taskOut: string;

  beforeAll(async () => {
    t = await createTestTenant(handle.db);
    owner = await signInAs(t, "owner");
    taskIn = newTaskId("billing");
    taskOut = newTaskId("other");
    for (const id of [taskIn, taskOut]) {
      const put = await api(t.apiKey).put(`/api/v1/tasks/${id}`, makeRecord(id));
      expect(put.status, put.text).toBe(200);
    }
  });

  it("a key made without a scope is full and never expires, as keys made before scopes", async () => {
    const k = await make({});
    expect(k).toMatchObject({ scope: "full", task_prefix: null, expires_at: null });
    expect((await api(k.key).get("/api/v1/tasks")).status).toBe(200);
    expect((await api(k.key).post("/api/v1/policies/lint", { version: 1 })).status).not.toBe(403);
  });

  it("read_only: GET works, a write is 403 scope_read_only naming the scope, and nothing is written", async () => {
    const k = await make({ scope: "read_only" });
    expect((await api(k.key).get(`/api/v1/tasks/${taskIn}`)).status).toBe(200);
    expect((await api(k.key).get("/api/v1/tasks")).status).toBe(200);
    const id = newTaskId("ro");
    const put = await api(k.key).put(`/api/v1/tasks/${id}`, makeRecord(id));
    expectError(put, 403, "scope_read_only");
    expect((put.body as { error: { details: unknown } }).error.details).toEqual({ scope: "read_only" });
    const events = await api(k.key).post("/api/v1/events", { events: [makeEvent(taskIn)] });
    expectError(events, 403, "scope_read_only");
    const [row] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from tasks where tenant_id = ${t.tenantId} and task_id = ${id}`,
    );
    expect(row!.n).toBe(0);
  });

  it("runtime: the protocol's routes work; listing tasks or approvals is 403 scope_runtime_only", async () => {
    const k = await make({ scope: "runtime" });
    const id = newTaskId("rt");
    expect((await api(k.key).put(`/api/v1/tasks/${id}`, makeRecord(id))).status).toBe(200);
    const ev = await api(k.key).post<{ results: Array<{ status: string }> }>("/api/v1/events", {
      events: [makeEvent(id)],
    });
    expect(ev.status, ev.text).toBe(200);
    expect(ev.body.results[0]!.status).toBe("stored");
    expect((await api(k.key).post(`/api/v1/tasks/${id}/resume`, {})).status).toBe(200);
    expect((await api(k.key).get(`/api/v1/tasks/${id}`)).status).toBe(200);
    const list = await api(k.key).get("/api/v1/tasks");
    expectError(list, 403, "scope_runtime_only");
    expect((list.body as { error: { message: string } }).error.message).toContain("scope runtime");
    expectError(await api(k.key).get("/api/v1/approvals"), 403, "scope_runtime_only");
    expectError(await api(k.key).get(`/api/v1/tasks/${id}/export`), 403, "scope_runtime_only");
  });

  it("task_prefix: its tasks work, a task outside the prefix is 404 as if absent, other routes 403", async () => {
    const prefix = taskIn.slice(0, taskIn.indexOf("-") + 1); // "billing-…"'s "billing-"
    expect(taskIn.startsWith(prefix) && !taskOut.startsWith(prefix)).toBe(true);
    const k = await make({ scope: "task_prefix", task_prefix: prefix });
    expect(k.task_prefix).toBe(prefix);
    expect((await api(k.key).get(`/api/v1/tasks/${taskIn}`)).status).toBe(200);
    expect((await api(k.key).get(`/api/v1/tasks/${taskIn}/timeline`)).status).toBe(200);

    // Outside: the same answer as a task that does not exist.
    const outside = await api(k.key).get(`/api/v1/tasks/${taskOut}`);
    const absent = await api(t.apiKey).get(`/api/v1/tasks/${prefix}no-such-task`);
    expectError(outside, 404, "not_found");
    expect(absent.status).toBe(404);
    expectError(await api(k.key).put(`/api/v1/tasks/${taskOut}`, makeRecord(taskOut)), 404, "not_found");
    expectError(await api(k.key).post(`/api/v1/tasks/${encodeURIComponent(taskOut)}/resume`, {}), 404, "not_found");

    // Events: those for its tasks are stored, any other is rejected as not found; the batch goes on.
    const ev = await api(k.key).post<{ results: Array<{ status: string; error?: { code: string } }> }>(
      "/api/v1/events",
      { events: [makeEvent(taskIn), makeEvent(taskOut)] },
    );
    expect(ev.status, ev.text).toBe(200);
    expect(ev.body.results.map((r) => r.status)).toEqual(["stored", "rejected"]);
    expect(ev.body.results[1]!.error?.code).toBe("not_found");

    const list = await api(k.key).get("/api/v1/tasks");
    expectError(list, 403, "scope_task_prefix");
    expect((list.body as { error: { details: unknown } }).error.details).toEqual({
      scope: "task_prefix",
      task_prefix: prefix,
    });
    expectError(await api(k.key).get("/api/v1/approvals"), 403, "scope_task_prefix");
  });

  it("expiry: a key works before its expires_at and gets 401 api_key_expired from that instant on", async () => {
    const k = await make({ expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await api(k.key).get("/api/v1/tasks")).status).toBe(200);
    // The edge: one minute ahead still works; now() itself counts as expired.
    await handle.db.execute(sql`update api_keys set expires_at = now() + interval '1 minute' where id = ${k.id}`);
    expect((await api(k.key).get("/api/v1/tasks")).status).toBe(200);
    await handle.db.execute(sql`update api_keys set expires_at = now() where id = ${k.id}`);
    const res = await api(k.key).get("/api/v1/tasks");
    expectError(res, 401, "api_key_expired");
    expect((res.body as { error: { message: string } }).error.message).toMatch(/expired at \d{4}-/);
    const keys = await api(owner).get<{ keys: ApiKeyView[] }>("/api/v1/settings/api-keys");
    expect(keys.body.keys.find((x) => x.id === k.id)).toMatchObject({ expired: true });
    // Another key of the tenant is unaffected.
    expect((await api(t.apiKey).get("/api/v1/tasks")).status).toBe(200);
  });

  it("a scoped key of another tenant sees none of this tenant's tasks, even inside its prefix", async () => {
    const other = await createTestTenant(handle.db);
    const otherOwner = await signInAs(other, "owner");
    const prefix = taskIn.slice(0, taskIn.indexOf("-") + 1);
    const res = await api(otherOwner).post<Made>("/api/v1/settings/api-keys", {
      name: "theirs",
      scope: "task_prefix",
      task_prefix: prefix,
    });
    expect(res.status, res.text).toBe(200);
    expectError(await api(res.body.key).get(`/api/v1/tasks/${taskIn}`), 404, "not_found");
    const ro = await api(otherOwner).post<Made>("/api/v1/settings/api-keys", { name: "ro", scope: "read_only" });
    expectError(await api(ro.body.key).get(`/api/v1/tasks/${taskIn}`), 404, "not_found");
  });

  it("creation: scope and expiry are validated (422, nothing stored) and audited", async () => {
    const bad = [
      { scope: "task_prefix" },
      { scope: "runtime", task_prefix: "x-" },
      { scope: "admin" },
      { expires_at: new Date(Date.now() - 1000).toISOString() },
      { expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString() },
      { expires_at: "tomorrow" },
    ];
    const before = (await api(owner).get<{ keys: ApiKeyView[] }>("/api/v1/settings/api-keys")).body.keys.length;
    for (const body of bad) {
      const res = await api(owner).post("/api/v1/settings/api-keys", { name: "bad", ...body });
      expectError(res, 422, "validation_failed");
    }
    const after = (await api(owner).get<{ keys: ApiKeyView[] }>("/api/v1/settings/api-keys")).body.keys.length;
    expect(after).toBe(before);
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const k = await make({ scope: "task_prefix", task_prefix: "audit-", expires_at: expires });
    const created = (await auditRows(handle.db, t.tenantId, "api_key.created")).find(
      (r) => r.target === `api_key:${k.id}`,
    );
    expect(created?.details).toMatchObject({ scope: "task_prefix", task_prefix: "audit-" });
    expect(Date.parse(k.expires_at!)).toBe(Date.parse(expires));
  }, 30_000);
});
