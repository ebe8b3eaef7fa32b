/**
 * Tenancy and authentication over HTTP: a key of one tenant never reads or writes another's rows (404, not 403),
 * revoked keys and memberships stop working, people read but do not report events, and anonymous calls get 401.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, CheckpointResult, TaskList, TaskView } from "@/lib/contract/api";
import type { SystemActor } from "@/lib/domain/authz";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { revokeApiKey } from "@/lib/domain/tenancy/api-keys";
import {
  api,
  countRows,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  signIn,
  trySignIn,
  testDbForFile,
} from "./helpers";
import { revokeMembership } from "../support/tenants";

const handle = testDbForFile();

function expectErrorShape(body: unknown, code: string) {
  const b = body as ApiErrorBody;
  expect(b).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  expect(b.error.message.length).toBeGreaterThan(0);
}

async function snapshotTask(tenantId: string, taskId: string) {
  const [task] = await queryRows(
    handle.db,
    sql`select task_id, phase, principal, policy_version, latest_version, current_attempt, updated_at::text as updated_at
        from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return {
    task,
    events: await countRows(handle.db, "events", tenantId, taskId),
    checkpoints: await countRows(handle.db, "task_checkpoints", tenantId, taskId),
    artifacts: await countRows(handle.db, "artifacts", tenantId, taskId),
    sideEffects: await countRows(handle.db, "side_effects", tenantId, taskId),
    audit: await countRows(handle.db, "audit_log", tenantId),
  };
}

describe("tenancy", () => {
  it("gives a key of tenant A 404 on tenant B's task and leaves B's rows unchanged", async () => {
    const a = await createTestTenant(handle.db, { roles: [] });
    const b = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("b-only");
    const put = await api(b.apiKey).put<CheckpointResult>(`/api/v1/tasks/${taskId}`, makeRecord(taskId));
    expect(put.status).toBe(200);
    expect((await postEvents(b.apiKey, [makeEvent(taskId)])).body.results[0]!.status).toBe("stored");
    const before = await snapshotTask(b.tenantId, taskId);
    expect(before.checkpoints).toBe(1);
    expect(before.artifacts).toBe(1);

    for (const path of [
      `/api/v1/tasks/${taskId}`,
      `/api/v1/tasks/${taskId}/timeline`,
      `/api/v1/tasks/${taskId}/checkpoints`,
      `/api/v1/tasks/${taskId}/artifacts`,
    ]) {
      const res = await api(a.apiKey).get(path);
      expect(res.status, path).toBe(404);
      expectErrorShape(res.body, "not_found");
      // B's own key still sees it: the 404 is about tenancy, not a missing task
      expect((await api(b.apiKey).get(path)).status, path).toBe(200);
    }
    const listA = await api(a.apiKey).get<TaskList>("/api/v1/tasks");
    expect(listA.body.tasks.map((t) => t.task_id)).not.toContain(taskId);

    // Writing with the same task id through A's key lands in A's tenant only.
    const putA = await api(a.apiKey).put<CheckpointResult>(
      `/api/v1/tasks/${taskId}`,
      makeRecord(taskId, { phase: "a-phase" }),
    );
    expect(putA.status).toBe(200);
    expect(putA.body.version).toBe(1);
    expect((await postEvents(a.apiKey, [makeEvent(taskId)])).body.results[0]!.status).toBe("stored");

    expect(await snapshotTask(b.tenantId, taskId)).toEqual(before);
    const viewB = await api(b.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(viewB.body).toMatchObject({ version: 1, phase: "reading" });
  });

  it("keeps event ids unique per tenant, not across tenants", async () => {
    const a = await createTestTenant(handle.db, { roles: [] });
    const b = await createTestTenant(handle.db, { roles: [] });
    const ev = makeEvent(newTaskId());
    expect((await postEvents(a.apiKey, [ev])).body.results[0]!.status).toBe("stored");
    expect((await postEvents(b.apiKey, [ev])).body.results[0]!.status).toBe("stored");
    expect((await postEvents(b.apiKey, [ev])).body.results[0]!.status).toBe("duplicate");
    expect(await countRows(handle.db, "events", a.tenantId)).toBe(1);
    expect(await countRows(handle.db, "events", b.tenantId)).toBe(1);
  });

  it("answers 401 to a revoked key", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    expect((await api(t.apiKey).get("/api/v1/tasks")).status).toBe(200);
    const [key] = await queryRows<{ id: string }>(
      handle.db,
      sql`select id from api_keys where tenant_id = ${t.tenantId} and key_hash = ${sha256Hex(t.apiKey)}`,
    );
    const system: SystemActor = { kind: "system", tenantId: t.tenantId, label: "integration test" };
    await revokeApiKey({ db: handle.db, actor: system }, { keyId: key!.id });

    const list = await api(t.apiKey).get("/api/v1/tasks");
    expect(list.status).toBe(401);
    expectErrorShape(list.body, "unauthorized");
    const post = await postEvents(t.apiKey, [makeEvent(newTaskId())]);
    expect(post.status).toBe(401);
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(0);
  });

  it("lets a signed-in viewer read tasks but not report events (403)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId();
    await postEvents(t.apiKey, [makeEvent(taskId)]);
    const cookie = await signIn(t.users.viewer!.email, t.password);

    const list = await api({ cookie }).get<TaskList>("/api/v1/tasks");
    expect(list.status).toBe(200);
    expect(list.body.tasks.map((x) => x.task_id)).toEqual([taskId]);

    const post = await api({ cookie }).post("/api/v1/events", { events: [makeEvent(taskId)] });
    expect(post.status).toBe(403);
    expectErrorShape(post.body, "forbidden");
    expect(await countRows(handle.db, "events", t.tenantId)).toBe(1);
  });

  it("answers 401 with the error shape when there are no credentials", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/tasks"],
      ["GET", `/api/v1/tasks/${newTaskId()}`],
      ["POST", "/api/v1/events"],
    ] as const) {
      const res = await api().request(method, path, method === "POST" ? { json: { events: [] } } : {});
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/json");
      expectErrorShape(res.body, "unauthorized");
    }
    const badScheme = await api().request("GET", "/api/v1/tasks", { headers: { authorization: "Basic Zm9vOmJhcg==" } });
    expect(badScheme.status).toBe(401);
    const unknownKey = await api("rck_this-key-was-never-issued-0000000000").get("/api/v1/tasks");
    expect(unknownKey.status).toBe(401);
    expectErrorShape(unknownKey.body, "unauthorized");
  });

  it("refuses sign-in after the membership is revoked and ends existing sessions", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const responder = t.users.responder!;
    const wrong = await trySignIn(responder.email, `${t.password}-wrong`);
    expect(wrong.cookie).toBeNull();

    const cookie = await signIn(responder.email, t.password);
    expect((await api({ cookie }).get("/api/v1/tasks")).status).toBe(200);

    await revokeMembership(handle.db, t.tenantId, responder.userId);

    const again = await trySignIn(responder.email, t.password);
    expect(again.cookie).toBeNull();
    expect(again.url ?? "").toMatch(/error=/);

    const old = await api({ cookie }).get("/api/v1/tasks");
    expect(old.status).toBe(401);
    expectErrorShape(old.body, "unauthorized");
  });
});
