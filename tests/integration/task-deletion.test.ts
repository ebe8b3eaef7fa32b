/**
 * Deleting a whole task (decision 0054): an owner or admin deletes a task's events, checkpoints, side effects,
 * artifacts (with their bytes) and approvals in one transaction, after an export when the workspace requires one; the
 * task row stays as a tombstone, one audit entry `task.deleted` says what went, and the audit chain still verifies.
 * From then on every path for the id answers 410 `task_deleted` (events: rejected with that code), so a stale
 * runtime cannot bring the task back.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { toolCallDigest } from "@/lib/domain/crypto/canonical";
import {
  askGate,
  checkpoint,
  getTask,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
  postReconcile,
  receiptBody,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import {
  api,
  baseUrl,
  countRows,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  testDbForFile,
  type Auth,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;
const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };
type Tombstone = {
  task_id: string;
  deleted_at: string;
  deleted_by: string;
  reason: string;
  summary: {
    counts: Record<string, number>;
    latest_checkpoint: { version: number; digest: string } | null;
    artifacts: Array<{ object_ref: string; sha256: string }>;
    artifacts_truncated: boolean;
    last_change: string | null;
  };
};

function deleteTask(auth: Auth, taskId: string, body: unknown) {
  return api(auth).request<Tombstone & ErrorBody>("DELETE", `/api/v1/tasks/${enc(taskId)}`, { json: body });
}

async function uploadBytes(apiKey: string, taskId: string, bytes: Buffer): Promise<number> {
  const res = await fetch(`${baseUrl()}/api/v1/tasks/${enc(taskId)}/artifacts/${sha(bytes)}/content`, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream", authorization: `Bearer ${apiKey}` },
    body: new Uint8Array(bytes),
  });
  await res.text();
  return res.status;
}

const BYTES = Buffer.from("# Report\n\nThe customer's data.\n");

/**
 * A task with something of every kind: events, two checkpoints listing an artifact whose bytes were uploaded, a side
 * effect with an intent (and its payload), an unapplied receipt, an approval request (a checkpoint that declares an
 * effect approved) and a gate ask.
 */
async function fullTask(t: TestTenant) {
  const taskId = newTaskId("del");
  const ev = await postEvents(t.apiKey, [
    makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } }),
    makeEvent(taskId, { plane: "tools", type: "tool.called", attrs: { tool: "search" } }),
  ]);
  expect(ev.body.results.map((r) => r.status)).toEqual(["stored", "stored"]);
  const artifacts = [{ ref: "out/report.md", sha256: sha(BYTES), size: BYTES.length, media_type: "text/markdown" }];
  await checkpoint(t, taskId, { artifacts });
  expect(await uploadBytes(t.apiKey, taskId, BYTES)).toBe(201);
  const key = newKey();
  const payload = { to: "customer@example.com", subject: "Your report" };
  const intent = await postIntent(
    t.apiKey,
    taskId,
    "send_email",
    intentBody(key, { attempt: 1, payload, payload_digest: toolCallDigest("send_email", payload) }),
  );
  expect(intent.status, intent.text).toBe(200);
  // A receipt for an effect with no intent is kept as evidence (an unapplied receipt).
  const orphan = await postReceipt(t.apiKey, taskId, "other_write", receiptBody(newKey()));
  expect([200, 202, 409], orphan.text).toContain(orphan.status);
  expect((await askGate(t.apiKey, taskId)).status).toBe(200);
  // Last, a checkpoint that declares an effect approved: a pending approval request (it stops new writes).
  const publishKey = `publish-${taskId}`;
  const second = await checkpoint(t, taskId, {
    artifacts,
    side_effects: { publish_report: { idempotency_key: publishKey, status: "approved", action: "publish_report" } },
  });
  return { taskId, key, checkpointDigest: second.digest, version: second.version };
}

async function contentRows(tenantId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from artifact_contents where tenant_id = ${tenantId}`,
  );
  return row!.n;
}

async function tombstone(tenantId: string, taskId: string) {
  const [row] = await queryRows<{
    deleted_at: string | null;
    deleted_by: string | null;
    deletion_reason: string | null;
  }>(
    handle.db,
    sql`select deleted_at::text, deleted_by, deletion_reason from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return row;
}

async function deletedEntries(tenantId: string, taskId: string) {
  return queryRows<{ seq: string; actor_label: string; details: Record<string, unknown> }>(
    handle.db,
    sql`select seq::text, actor_label, details from audit_log
        where tenant_id = ${tenantId} and action = 'task.deleted' and target = ${`task:${taskId}`}`,
  );
}

const TASK_TABLES = [
  "events",
  "task_checkpoints",
  "side_effects",
  "side_effect_payloads",
  "unapplied_receipts",
  "artifacts",
  "approval_requests",
  "gate_asks",
] as const;

async function taskRowCounts(tenantId: string, taskId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TASK_TABLES) {
    const [row] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from ${sql.identifier(table)} where tenant_id = ${tenantId} and task_id = ${taskId}`,
    );
    out[table] = row!.n;
  }
  return out;
}

describe("DELETE /api/v1/tasks/{task_id}", () => {
  it("deletes every row of the task, keeps the tombstone and one audit entry, and the chain verifies", async () => {
    const t = await createTestTenant(handle.db);
    const { taskId, checkpointDigest, version } = await fullTask(t);
    const before = await taskRowCounts(t.tenantId, taskId);
    for (const table of TASK_TABLES) expect(before[table], table).toBeGreaterThan(0);
    // Another task lists the same bytes: they stay for it.
    const sharing = newTaskId("share");
    await checkpoint(t, sharing, {
      artifacts: [{ ref: "copy.md", sha256: sha(BYTES), size: BYTES.length }],
    });

    const owner = await signInAs(t, "owner");
    const res = await deleteTask(owner, taskId, { reason: "customer asked for erasure" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      task_id: taskId,
      deleted_by: t.users.owner!.email,
      reason: "customer asked for erasure",
    });
    const c = res.body.summary.counts;
    expect(c).toMatchObject({
      events: before.events,
      checkpoints: before.task_checkpoints,
      side_effects: before.side_effects,
      side_effect_payloads: before.side_effect_payloads,
      unapplied_receipts: before.unapplied_receipts,
      artifacts: 1,
      approval_requests: before.approval_requests,
      gate_asks: before.gate_asks,
      // The bytes are shared with the other task: kept.
      artifact_contents: 0,
    });
    expect(res.body.summary.latest_checkpoint).toEqual({ version, digest: checkpointDigest });
    expect(res.body.summary.artifacts).toEqual([{ object_ref: "out/report.md", sha256: sha(BYTES) }]);

    expect(Object.values(await taskRowCounts(t.tenantId, taskId)).every((n) => n === 0)).toBe(true);
    expect(await tombstone(t.tenantId, taskId)).toMatchObject({
      deleted_by: t.users.owner!.email,
      deletion_reason: "customer asked for erasure",
    });
    expect(await contentRows(t.tenantId)).toBe(1);

    const entries = await deletedEntries(t.tenantId, taskId);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.actor_label).toBe(t.users.owner!.email);
    expect(entries[0]!.details).toMatchObject({
      reason: "customer asked for erasure",
      counts: c,
      latest_checkpoint: { version, digest: checkpointDigest },
      artifacts: [{ object_ref: "out/report.md", sha256: sha(BYTES) }],
    });
    // The task's earlier audit entries stay, and the chain still verifies.
    const verify = await api(owner).get<{ valid: boolean; checked: number }>("/api/v1/audit/verify");
    expect(verify.body.valid, verify.text).toBe(true);

    // Deleting the other task now removes the bytes nobody lists any more.
    const second = await deleteTask(owner, sharing, { reason: "test run" });
    expect(second.status, second.text).toBe(200);
    expect(second.body.summary.counts).toMatchObject({
      artifacts: 1,
      artifact_contents: 1,
      artifact_bytes: BYTES.length,
    });
    expect(await contentRows(t.tenantId)).toBe(0);
    expect((await api(owner).get<{ valid: boolean }>("/api/v1/audit/verify")).body.valid).toBe(true);

    // Settings → Retention's API lists nothing new; the page lists the tombstones (e2e).
    const list = await api(owner).get<{ tasks: Array<{ task_id: string }> }>("/api/v1/tasks");
    expect(list.body.tasks.map((x) => x.task_id)).not.toContain(taskId);
  });

  it("an admin may delete; approver, responder, viewer and a runtime key may not (403, nothing written)", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("roles");
    await checkpoint(t, taskId);
    for (const role of ["approver", "responder", "viewer"] as const) {
      const res = await deleteTask(await signInAs(t, role), taskId, { reason: "not mine to delete" });
      expect(res.status, role).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const runtime = await deleteTask(t.apiKey, taskId, { reason: "the runtime tries" });
    expect(runtime.status).toBe(403);
    expect((await tombstone(t.tenantId, taskId))!.deleted_at).toBeNull();
    expect(await deletedEntries(t.tenantId, taskId)).toHaveLength(0);
    const admin = await deleteTask(await signInAs(t, "admin"), taskId, { reason: "admin cleans up" });
    expect(admin.status, admin.text).toBe(200);
  });

  it("another tenant's owner gets 404 and the task stays", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("wall");
    await checkpoint(t, taskId);
    const res = await deleteTask(await signInAs(other, "owner"), taskId, { reason: "not my workspace" });
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(t.slug);
    expect((await tombstone(t.tenantId, taskId))!.deleted_at).toBeNull();
    expect((await getTask(t.apiKey, taskId)).status).toBe(200);
  });

  it("a missing, short or control-character reason is 422 and nothing is written", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("reason");
    await checkpoint(t, taskId);
    const owner = await signInAs(t, "owner");
    for (const body of [
      {},
      { reason: "no" },
      { reason: "bad\u0007bell" },
      { reason: "x".repeat(1001) },
      { reason: "ok?", extra: 1 },
    ]) {
      const res = await deleteTask(owner, taskId, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe("validation_failed");
    }
    expect((await tombstone(t.tenantId, taskId))!.deleted_at).toBeNull();
    expect(await countRows(handle.db, "task_checkpoints", t.tenantId)).toBe(1);
    expect(await deletedEntries(t.tenantId, taskId)).toHaveLength(0);
  });

  it("export_before_delete: 409 export_required until a workspace export is taken after the task's last change", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "viewer"] });
    const owner = await signInAs(t, "owner");
    const put = await api(owner).put("/api/v1/settings/retention", {
      event_retention_days: 400,
      export_before_delete: true,
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ event_retention_days: 400, export_before_delete: true });
    const taskId = newTaskId("export");
    await checkpoint(t, taskId);

    const refused = await deleteTask(owner, taskId, { reason: "after an export only" });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("export_required");
    expect((await tombstone(t.tenantId, taskId))!.deleted_at).toBeNull();

    const exported = await api(owner).get("/api/v1/export");
    expect(exported.status).toBe(200);
    // A change after the export: the export no longer covers the task.
    await checkpoint(t, taskId);
    expect((await deleteTask(owner, taskId, { reason: "after an export only" })).body.error.code).toBe(
      "export_required",
    );
    expect((await api(owner).get("/api/v1/export")).status).toBe(200);
    const ok = await deleteTask(owner, taskId, { reason: "after an export only" });
    expect(ok.status, ok.text).toBe(200);

    // The settings: read by every role, changed by owners and admins only, validated, audited.
    const viewer = await signInAs(t, "viewer");
    expect((await api(viewer).get("/api/v1/settings/retention")).body).toMatchObject({
      event_retention_days: 400,
      export_before_delete: true,
    });
    expect(
      (await api(viewer).put("/api/v1/settings/retention", { event_retention_days: null, export_before_delete: false }))
        .status,
    ).toBe(403);
    for (const body of [
      { event_retention_days: 0, export_before_delete: false },
      { event_retention_days: 36501, export_before_delete: false },
      { event_retention_days: 1.5, export_before_delete: false },
      { event_retention_days: null },
    ]) {
      expect((await api(owner).put("/api/v1/settings/retention", body)).status, JSON.stringify(body)).toBe(422);
    }
    const [changes] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId} and action = 'settings.retention_changed'`,
    );
    expect(changes!.n).toBe(1);
  });

  it("after deletion the id is dead on every path: reads, writes, the gate and events answer task_deleted", async () => {
    const t = await createTestTenant(handle.db);
    const { taskId, key } = await fullTask(t);
    const owner = await signInAs(t, "owner");
    expect((await deleteTask(owner, taskId, { reason: "dead on every path" })).status).toBe(200);
    const gone = (res: { status: number; body: unknown; text: string }, what: string) => {
      expect(res.status, `${what}: ${res.text}`).toBe(410);
      expect((res.body as ErrorBody).error.code, what).toBe("task_deleted");
    };
    gone(await getTask(t.apiKey, taskId), "GET task");
    gone(await getTask(owner, taskId), "GET task (person)");
    gone(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/timeline`), "timeline");
    gone(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/checkpoints`), "checkpoints");
    gone(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/artifacts`), "artifacts");
    gone(await api(t.apiKey).get(`/api/v1/tasks/${enc(taskId)}/export`), "export");
    // The stale runtime: a checkpoint (also at a newer attempt), an intent, a receipt, the gate, bytes.
    gone(await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId)), "checkpoint");
    gone(
      await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId, { attempt: 2 })),
      "checkpoint attempt 2",
    );
    gone(await postIntent(t.apiKey, taskId, "send_email", intentBody(newKey())), "intent");
    gone(await postReceipt(t.apiKey, taskId, "send_email", receiptBody(key)), "receipt");
    gone(await askGate(t.apiKey, taskId), "resume gate");
    const bytesRes = await fetch(`${baseUrl()}/api/v1/tasks/${enc(taskId)}/artifacts/${sha(BYTES)}/content`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream", authorization: `Bearer ${t.apiKey}` },
      body: new Uint8Array(BYTES),
    });
    expect(bytesRes.status).toBe(410);
    // People: reconcile, fence, end, delete again.
    gone(
      await postReconcile(owner, taskId, "send_email", { outcome: "not_applied", evidence: "checked the tool" }),
      "reconcile",
    );
    gone(await api(owner).post(`/api/v1/tasks/${enc(taskId)}/fence`, { reason: "try again" }), "fence");
    gone(await api(owner).post(`/api/v1/tasks/${enc(taskId)}/terminate`, { reason: "end it" }), "terminate");
    const again = await deleteTask(owner, taskId, { reason: "delete twice" });
    expect(again.status).toBe(409);
    // Events: those for the deleted task are rejected with task_deleted, the rest of the batch is stored.
    const live = newTaskId("live");
    const batch = await postEvents(t.apiKey, [
      makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } }),
      makeEvent(live, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } }),
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attempt: 1,
        attrs: { name: "x", idempotency_key: newKey() },
      }),
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r) => [r.status, r.error?.code ?? null])).toEqual([
      ["rejected", "task_deleted"],
      ["stored", null],
      ["rejected", "task_deleted"],
    ]);
    // Nothing came back under the id, and the tombstone is unchanged.
    expect(Object.values(await taskRowCounts(t.tenantId, taskId)).every((n) => n === 0)).toBe(true);
    expect(await deletedEntries(t.tenantId, taskId)).toHaveLength(1);
    expect((await api(owner).get<{ valid: boolean }>("/api/v1/audit/verify")).body.valid).toBe(true);
  });

  it("an approval decision for a deleted task's request finds nothing", async () => {
    const t = await createTestTenant(handle.db);
    const { taskId } = await fullTask(t);
    const list = await api(t.apiKey).get<{ approvals: Array<{ id: string }> }>(
      `/api/v1/approvals?task_id=${enc(taskId)}`,
    );
    const approvalId = list.body.approvals[0]!.id;
    expect((await deleteTask(await signInAs(t, "owner"), taskId, { reason: "with its approvals" })).status).toBe(200);
    const decide = await api(await signInAs(t, "approver")).post(`/api/v1/approvals/${approvalId}/decision`, {
      decision: "approve",
    });
    expect([404, 410]).toContain(decide.status);
  });

  it("two deletions at once: one tombstone, one audit entry; the other gets 409", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "admin"] });
    const { taskId } = await fullTask(t);
    const [a, b] = await Promise.all([
      deleteTask(await signInAs(t, "owner"), taskId, { reason: "first of two" }),
      deleteTask(await signInAs(t, "admin"), taskId, { reason: "second of two" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(await deletedEntries(t.tenantId, taskId)).toHaveLength(1);
    const winner = a.status === 200 ? a : b;
    expect((await tombstone(t.tenantId, taskId))!.deletion_reason).toBe(winner.body.reason);
  });
});
