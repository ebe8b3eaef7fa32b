/**
 * A run's authority and evidence cannot be bent (found by a reviewer trying to break the service), on real
 * PostgreSQL through the built server:
 * - a checkpoint cannot change the task's principal, so a revocation cannot be sidestepped;
 * - a reconcile cannot call a write "not applied" when the lookup it asked found it;
 * - a receipt event must carry the external operation id: no receipt is made up;
 * - an intent reported as an event carries the default lease, so its effect turns unknown when no receipt comes,
 *   and a later intent event does not rewrite the payload digest;
 * - a late receipt after the lease ran out gets `reconcile_required` whether or not anyone looked in between;
 * - an effect waiting for approval stops the gate with `approval_missing`, as the intent route refuses it;
 * - receipt and reconcile times outside 2000…now+1 day are refused; a lookup's implausible time is dropped;
 * - a lookup answer keeps only its four fields, and link-local targets are never called;
 * - reconcile evidence refuses control and bidirectional override characters (several lines are fine);
 * and, from a second review: a receipt event that happened after the lease does not complete the write; an intent
 * event on a revoked principal's task leaves the effect unknown; blank operation ids are refused; principals, phases
 * and policy versions must be plain names a person can type; "not applied" always asks a registered lookup; a lookup
 * answer with NUL or bidi characters is ambiguous; the task list reports approval waits and revoked principals.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { TaskView } from "@/lib/contract/api";
import { DEFAULT_LEASE_SECONDS } from "@/lib/domain/side-effects/intent";
import {
  askGate,
  checkpoint,
  hex,
  intentBody,
  newKey,
  postIntent,
  postLookup,
  postReceipt,
  postReconcile,
  receiptBody,
  registerLookup,
  sendEvents,
} from "./support/custody-calls";
import { localServer } from "./support/local-servers";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { sealAsServer, unknownEffect as makeUnknownEffect } from "./support/seeding";
import { auditRows, custodySnapshot, effectRow } from "./support/stored-rows";
import { sleep } from "./support/waiting";
import {
  api,
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  type TestTenant,
  cleanupsAfterEachTest,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();
/** Servers started by a test; closed after it whatever happened. */
const cleanups = cleanupsAfterEachTest();

const EFFECT = "update_record";

/** An unknown update_record effect of `tool` (see support/seeding.ts `unknownEffect`). */
const unknownEffect = (t: TestTenant, tool = EFFECT) => makeUnknownEffect(handle.db, t, { name: EFFECT, tool });

describe("the principal of a task is fixed", () => {
  it("refuses a checkpoint naming another principal (409), so a revocation keeps stopping the run", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    const principal = `tenant/acme:user/${taskId}`;
    await checkpoint(t, taskId, { principal });
    const owner = await signInAs(t, "owner");
    expect(
      (await api(owner).post("/api/v1/settings/principals/revoke", { principal, reason: "left the company" })).status,
    ).toBe(200);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);

    const res = await api(t.apiKey).put(
      `/api/v1/tasks/${taskId}`,
      makeRecord(taskId, { principal: "tenant/acme:user/someone-else" }),
    );
    expectError(res, 409, "conflict");
    expect(res.text).toContain(principal);
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);

    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toContain("principal_revoked");
    expectError(await postIntent(t.apiKey, taskId, "publish", intentBody(newKey())), 403, "principal_revoked");
    // the same principal may checkpoint again
    expect((await checkpoint(t, taskId, { principal })).version).toBe(2);
  });
});

describe("reconcile against the lookup it asked", () => {
  it("refuses not_applied when the lookup found the write (422) and settles nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const server = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ found: true, external_operation_id: "op-REAL-123" }));
    });
    cleanups.push(server.close);
    expect((await registerLookup(await signInAs(t, "owner"), "publisher", `${server.url}/lookup`)).status).toBe(200);
    const { taskId } = await unknownEffect(t, "publisher");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postReconcile(await signInAs(t, "responder"), taskId, EFFECT, {
      outcome: "not_applied",
      evidence: "I think it did not go through",
      use_lookup: true,
    });
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain("op-REAL-123");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect(await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).toHaveLength(0);
  });
});

describe("evidence is plain text", () => {
  it("refuses evidence with a bidirectional override (422), keeps several lines", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postReconcile(responder, taskId, EFFECT, {
      outcome: "not_applied",
      evidence: "no write found \u202Edeificer",
    });
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain("U+202E");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    const ok = await postReconcile(responder, taskId, EFFECT, {
      outcome: "not_applied",
      evidence: "checked the records system:\n\tno write under this key",
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe("side-effect events", () => {
  it("rejects a receipt event without external_operation_id and leaves the effect in flight", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    const intent = makeEvent(taskId, {
      plane: "tools",
      type: "side_effect.intent",
      attrs: { name: EFFECT, idempotency_key: key },
    });
    const receipt = makeEvent(taskId, {
      plane: "tools",
      type: "side_effect.receipt",
      attrs: { name: EFFECT, idempotency_key: key },
    });
    const res = await postEvents(t.apiKey, [intent, receipt]);
    expect(res.body.results.map((r) => r.status)).toEqual(["stored", "rejected"]);
    expect(res.body.results[1]!.error!.message).toContain("attrs.external_operation_id");
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(row?.status).toBe("in_flight");
    expect(row?.receipt ?? null).toBeNull();
  });

  it("gives a reported intent the default lease from the server's clock, whatever the runtime dates it", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    const dated = new Date(Date.now() - 2 * DEFAULT_LEASE_SECONDS * 1000);
    const before = Date.now();
    await sendEvents(t, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: dated.toISOString(),
        attrs: { name: EFFECT, idempotency_key: key, payload_digest: hex("a") },
      }),
    ]);
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(row?.status).toBe("in_flight");
    const [lease] = await queryRows<{ ms: string }>(
      handle.db,
      sql`select (extract(epoch from lease_expires_at) * 1000)::bigint::text as ms from side_effects
          where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${EFFECT}`,
    );
    expect(Number(lease?.ms)).toBeGreaterThanOrEqual(before + DEFAULT_LEASE_SECONDS * 1000 - 1000);
    expect(Number(lease?.ms)).toBeLessThanOrEqual(Date.now() + DEFAULT_LEASE_SECONDS * 1000 + 1000);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    // once the server's clock passes the lease, the gate stops and the intent route sees an unknown effect
    await handle.db.execute(
      sql`update side_effects set lease_expires_at = now() - interval '1 second' where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    expectError(
      await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { payload_digest: hex("a") })),
      409,
      "reconcile_required",
    );
  });

  it("does not let a later intent event rewrite the payload digest of an effect, and says so in the event's result", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { [EFFECT]: { idempotency_key: key, status: "not_started" } } });
    const intent = (digest: string, minute: number) =>
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: new Date(Date.now() - 60_000 + minute * 1000).toISOString(),
        attrs: { name: EFFECT, idempotency_key: key, payload_digest: digest },
      });
    await sendEvents(t, [intent(hex("a"), 1)]);
    // The write failed; a retry under the same key with another payload is what the intent route refuses (422).
    await handle.db.execute(
      sql`update side_effects set status = 'failed' where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    // It stands in for the server's move, so it carries the server's seal (decision 0035).
    await sealAsServer(handle.db, t.tenantId, taskId, EFFECT);
    const res = await postEvents(t.apiKey, [intent(hex("b"), 2)]);
    expect(res.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: EFFECT, applied: false, code: "idempotency_key_mismatch" },
    });
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(row?.status).toBe("failed");
    expect(row?.payload_digest).toBe(hex("a"));
    // the same payload retries
    await sendEvents(t, [intent(hex("a"), 3)]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("in_flight");
  });
});

describe("late receipts", () => {
  it("answers reconcile_required for a receipt after the lease ran out, whether or not the gate was asked first", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const keys = [newKey(), newKey()];
    for (const [i, key] of keys.entries()) {
      // Two different writes, each its own payload (one payload twice is a duplicate, decision 0029).
      const body = intentBody(key, { lease_seconds: 5, payload_digest: hex(String(i)) });
      expect((await postIntent(t.apiKey, taskId, `e${i}`, body)).body.decision).toBe("go");
    }
    await sleep(6_000);
    expectError(await postReceipt(t.apiKey, taskId, "e0", receiptBody(keys[0]!)), 409, "reconcile_required");
    await askGate(t.apiKey, taskId);
    expectError(await postReceipt(t.apiKey, taskId, "e1", receiptBody(keys[1]!)), 409, "reconcile_required");
    for (const name of ["e0", "e1"])
      expect((await effectRow(handle.db, t.tenantId, taskId, name))?.status).toBe("unknown");
  });
});

describe("approval waits", () => {
  it("stop the gate with approval_missing, as the intent route refuses the write", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, {
      side_effects: {
        publish: { idempotency_key: key, status: "awaiting_approval" },
        send: { idempotency_key: newKey(), status: "not_started" },
      },
    });
    expectError(await postIntent(t.apiKey, taskId, "publish", intentBody(key)), 403, "approval_required");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body).toMatchObject({ verdict: "stop", permitted_side_effects: [] });
    // The checkpoint's declaration became a request in the approvals queue; the reason links to it.
    expect(gate.body.reasons.map((r) => [r.code, r.target])).toEqual([
      ["approval_missing", expect.stringMatching(/^\/approvals\/[0-9a-f-]{36}$/)],
    ]);
  });
});

describe("times a clock could not have written", () => {
  it("refuses a receipt or a reconcile completed in 2999 (422) and stores nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    const res = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { completed_at: "2999-01-01T00:00:00Z" }));
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain("completed_at");
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("in_flight");

    const unknown = await unknownEffect(t);
    const snap = await custodySnapshot(handle.db, t.tenantId, unknown.taskId);
    const rec = await postReconcile(await signInAs(t, "responder"), unknown.taskId, EFFECT, {
      outcome: "completed",
      external_operation_id: "op-1",
      completed_at: "2999-01-01T00:00:00Z",
      evidence: "seen in the records system",
    });
    expectError(rec, 422, "validation_failed");
    expect(await custodySnapshot(handle.db, t.tenantId, unknown.taskId)).toEqual(snap);
  });
});

describe("what a lookup may reach and keep", () => {
  it("keeps only found, external_operation_id, result_digest and completed_at, and drops an implausible time", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const server = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          found: true,
          external_operation_id: "op-9",
          completed_at: "2999-01-01T00:00:00Z",
          internal: { db_password: "hunter2", hosts: ["10.0.0.5"] },
        }),
      );
    });
    cleanups.push(server.close);
    expect((await registerLookup(await signInAs(t, "owner"), "records", `${server.url}/lookup`)).status).toBe(200);
    const { taskId } = await unknownEffect(t, "records");
    const responder = await signInAs(t, "responder");
    const looked = await postLookup(responder, taskId, EFFECT);
    expect(looked.body).toMatchObject({ outcome: "found", external_operation_id: "op-9", completed_at: null });
    expect((looked.body as { answer: unknown }).answer).toEqual({
      found: true,
      external_operation_id: "op-9",
      completed_at: "2999-01-01T00:00:00Z",
    });
    expect(looked.text).not.toContain("hunter2");
    const rec = await postReconcile(responder, taskId, EFFECT, {
      outcome: "completed",
      evidence: "lookup found it",
      use_lookup: true,
    });
    expect(rec.status, rec.text).toBe(200);
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(JSON.stringify(row)).not.toContain("hunter2");
    expect(Date.parse(String(row?.receipt?.completed_at))).toBeLessThan(Date.now() + 60_000);
  });

  it.each(["http://169.254.169.254/latest/meta-data", "http://[fe80::1]/x", "http://0xA9FEA9FE/x"])(
    "never calls the link-local target %s",
    async (url) => {
      const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
      expect((await registerLookup(await signInAs(t, "owner"), "meta", url)).status).toBe(200);
      const { taskId } = await unknownEffect(t, "meta");
      const started = Date.now();
      const looked = await postLookup(await signInAs(t, "responder"), taskId, EFFECT);
      expect(looked.status, looked.text).toBe(200);
      expect(looked.body).toMatchObject({ configured: true, outcome: "error", http_status: null });
      expect(looked.text).toContain("link-local");
      expect(Date.now() - started).toBeLessThan(2_000); // refused before any connection attempt and its timeout
    },
  );
});

describe("second review: the event path follows the route's rules", () => {
  it("a receipt event that arrives after the lease ran out (by the server's clock) does not complete the write; it is kept as evidence", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    await sendEvents(t, [
      makeEvent(taskId, { plane: "tools", type: "side_effect.intent", attrs: { name: "pay", idempotency_key: key } }),
    ]);
    await handle.db.execute(
      sql`update side_effects set lease_expires_at = now() - interval '1 second' where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        // dated inside the lease by the runtime: the server's order decides
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        attrs: { name: "pay", idempotency_key: key, external_operation_id: "op-late" },
      }),
    ]);
    expect(res.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: "pay", applied: false, code: "reconcile_required" },
    });
    const row = await effectRow(handle.db, t.tenantId, taskId, "pay");
    expect(row?.status).toBe("unknown");
    expect(row?.receipt ?? null).toBeNull();
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    const view = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view.body.side_effects["pay"]!.unapplied_receipts).toEqual([
      expect.objectContaining({ source: "event", external_operation_id: "op-late", reason: "reconcile_required" }),
    ]);
  });

  it("an intent event on a revoked principal's task leaves the effect unknown, and a receipt event cannot complete it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    const principal = `tenant/acme:user/${taskId}`;
    await checkpoint(t, taskId, { principal });
    expect(
      (
        await api(await signInAs(t, "owner")).post("/api/v1/settings/principals/revoke", {
          principal,
          reason: "left the company",
        })
      ).status,
    ).toBe(200);
    const key = newKey();
    await sendEvents(t, [
      makeEvent(taskId, { plane: "tools", type: "side_effect.intent", attrs: { name: "send", idempotency_key: key } }),
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        occurred_at: new Date(Date.now() + 1000).toISOString(),
        attrs: { name: "send", idempotency_key: key, external_operation_id: "op-1" },
      }),
    ]);
    const row = await effectRow(handle.db, t.tenantId, taskId, "send");
    expect(row?.status).toBe("unknown");
    expect(row?.status_reason).toContain("revoked");
  });

  it("refuses blank operation ids on the receipt route and in receipt events", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expectError(
      await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { external_operation_id: "   " })),
      422,
      "validation_failed",
    );
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        attrs: { name: EFFECT, idempotency_key: key, external_operation_id: " " },
      }),
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        attrs: {
          name: EFFECT,
          idempotency_key: key,
          external_operation_id: "op-2",
          completed_at: "1970-01-01T00:00:00Z",
        },
      }),
    ]);
    expect(res.body.results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("in_flight");
  });
});

describe("second review: names a person must be able to revoke", () => {
  it.each([
    ["principal", "tenant/acme:user/mallory "],
    ["principal", "tenant/acme:user/\u202eevil"],
    ["principal", "tenant/acme:user/bell\u0007"],
    ["phase", "drafting\u202e"],
    ["policy_version", " pv-2"],
  ])("refuses a checkpoint whose %s is %j (422) and stores nothing", async (field, value) => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const res = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { [field]: value }));
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain(field);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}`)).status).toBe(404);
  });
});

describe("second review: not applied always asks a registered lookup", () => {
  it("refuses not_applied without use_lookup when the lookup finds the write; keeps a not-found answer with the decision", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    let found = true;
    const server = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(found ? { found: true, external_operation_id: "op-found-1" } : { found: false }));
    });
    cleanups.push(server.close);
    expect((await registerLookup(await signInAs(t, "owner"), "ledger", `${server.url}/lookup`)).status).toBe(200);
    const responder = await signInAs(t, "responder");
    const first = await unknownEffect(t, "ledger");
    const refused = await postReconcile(responder, first.taskId, EFFECT, {
      outcome: "not_applied",
      evidence: "checked the logs",
    });
    expectError(refused, 422, "validation_failed");
    expect(refused.text).toContain("op-found-1");
    expect((await effectRow(handle.db, t.tenantId, first.taskId, EFFECT))?.status).toBe("unknown");

    found = false;
    const second = await unknownEffect(t, "ledger");
    const ok = await postReconcile(responder, second.taskId, EFFECT, {
      outcome: "not_applied",
      evidence: "checked the logs",
    });
    expect(ok.status, ok.text).toBe(200);
    const row = await effectRow(handle.db, t.tenantId, second.taskId, EFFECT);
    expect((row?.last_reconcile as { lookup?: { outcome?: string } })?.lookup?.outcome).toBe("not_found");
  });

  it("treats a lookup answer with NUL or bidi characters in its operation id as ambiguous: a 422, not a 500", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const server = await localServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ found: true, external_operation_id: "op\u202eevil\u0000x", result_digest: "d\u0000" }));
    });
    cleanups.push(server.close);
    expect((await registerLookup(await signInAs(t, "owner"), "weird", `${server.url}/lookup`)).status).toBe(200);
    const { taskId } = await unknownEffect(t, "weird");
    const responder = await signInAs(t, "responder");
    const looked = await postLookup(responder, taskId, EFFECT);
    expect(looked.body).toMatchObject({ outcome: "ambiguous" });
    expect(looked.text).not.toContain("\\u0000");
    expect(looked.text).not.toContain("\\u202e");
    const rec = await postReconcile(responder, taskId, EFFECT, {
      outcome: "completed",
      evidence: "lookup",
      use_lookup: true,
    });
    expectError(rec, 422, "validation_failed");
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");
  });
});

describe("second review: the task list agrees with the attention queue", () => {
  it("reports approval waits and a revoked principal per task", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    const principal = `tenant/acme:user/${taskId}`;
    await checkpoint(t, taskId, {
      principal,
      side_effects: { publish: { idempotency_key: newKey(), status: "awaiting_approval" } },
    });
    expect(
      (
        await api(await signInAs(t, "owner")).post("/api/v1/settings/principals/revoke", {
          principal,
          reason: "left the company",
        })
      ).status,
    ).toBe(200);
    const list = await api(t.apiKey).get<{ tasks: Array<Record<string, unknown>> }>(`/api/v1/tasks?q=${taskId}`);
    expect(list.body.tasks[0]).toMatchObject({
      task_id: taskId,
      awaiting_approval_side_effects: 1,
      principal_revoked: true,
      unknown_side_effects: 0,
    });
  });
});
