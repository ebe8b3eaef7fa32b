/**
 * The intent and receipt API of side-effect custody (docs/concepts.md#intent, #receipt,
 * #state-transitions), on real PostgreSQL through the built server: go / replay / in_flight /
 * reconcile_required / idempotency_key_mismatch answers, exactly one `go` among fifty concurrent intents, lease
 * expiry, receipts stored once, one audit row per accepted call and nothing written by a refused one.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { describe, expect, it } from "vitest";
import type { IntentResult } from "@/lib/contract/api";
import {
  RECEIPT_AT,
  askGate,
  checkpoint,
  createTaskByEvent,
  getTask,
  hex,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
  receiptBody,
  sendEvents,
  withOffset,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorCode, expectError } from "./support/responses";
import { auditRows, custodySnapshot, effectRow, refusals } from "./support/stored-rows";
import { verifyAuditChain } from "@/lib/domain/audit/read";
import type { SystemActor } from "@/lib/domain/authz";
import { sleep } from "./support/waiting";
import { api, createTestTenant, makeEvent, newTaskId, type TestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();

const EFFECT = "update_record";

/** A tenant without people and a task created by a checkpoint with no declared side effects. */
async function tenantWithTask(): Promise<{ t: TestTenant; taskId: string }> {
  const t = await createTestTenant(handle.db, { roles: [] });
  const taskId = newTaskId();
  await checkpoint(t, taskId);
  return { t, taskId };
}

/** Registers an intent that must answer `go`; returns its key. */
async function go(t: TestTenant, taskId: string, name = EFFECT, key = newKey()): Promise<string> {
  const res = await postIntent(t.apiKey, taskId, name, intentBody(key));
  expect(res.status, res.text).toBe(200);
  expect(res.body.decision).toBe("go");
  return key;
}

/** Fires `n` identical intents at once and returns their answers. */
async function concurrentIntents(t: TestTenant, taskId: string, name: string, key: string, n = 50) {
  const body = intentBody(key, { payload_digest: hex("c") });
  return Promise.all(Array.from({ length: n }, () => postIntent(t.apiKey, taskId, name, body)));
}

describe("intent", () => {
  it("answers go with a lease for the first intent and makes the effect in_flight (one audit row)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = newKey();
    const before = Date.now();
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { tool: "records-api" }));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
    const body = res.body as Extract<IntentResult, { decision: "go" }>;
    expect(body.decision).toBe("go");
    const lease = Date.parse(body.lease_expires_at);
    // default lease: 300 s from now (server and tests share one clock)
    expect(lease - before).toBeGreaterThan(290_000);
    expect(lease - before).toBeLessThan(310_000);

    const view = await getTask(t.apiKey, taskId);
    expect(view.body.side_effects[EFFECT]).toMatchObject({
      idempotency_key: key,
      status: "in_flight",
      payload_digest: hex("e"),
      action: "records.update",
      tool: "records-api",
      mutation: true,
    });
    expect(Date.parse(view.body.side_effects[EFFECT]!.lease_expires_at!)).toBe(lease);

    const audit = await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded");
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target: `side_effect:${taskId}/${EFFECT}`, actor_kind: "api_key" });
    expect(audit[0]!.details).toMatchObject({ idempotency_key: key });
  });

  it("creates an effect the task record has not declared (tool defaults to the effect name)", async () => {
    const { t, taskId } = await tenantWithTask();
    expect((await getTask(t.apiKey, taskId)).body.side_effects).toEqual({});
    const key = await go(t, taskId, "send_email");
    const view = await getTask(t.apiKey, taskId);
    expect(Object.keys(view.body.side_effects)).toEqual(["send_email"]);
    expect(view.body.side_effects["send_email"]).toMatchObject({
      idempotency_key: key,
      status: "in_flight",
      tool: "send_email",
    });
  });

  it("answers 409 in_flight to a second identical intent while the lease is live, and changes nothing", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expectError(res, 409, "in_flight");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    // the refusal is audited, with what was asked
    expect((await refusals(handle.db, t.tenantId, taskId)).refused).toEqual(["in_flight"]);
  });

  it("replays a completed effect with the stored receipt and Idempotent-Replayed: true, writing nothing", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const stored = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { external_operation_id: "op-first" }));
    expect(stored.status, stored.text).toBe(200);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);

    for (let i = 0; i < 2; i++) {
      const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBe("true");
      expect(res.body).toEqual({
        decision: "replay",
        receipt: { external_operation_id: "op-first", result_digest: hex("f"), completed_at: RECEIPT_AT },
      });
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("a replay that expires another write's lease leaves that write unknown with no evidence mismatch, and replays again", async () => {
    // The replay's transaction seals nothing (it moved nothing of its own); the lease it expired on the way is a move to
    // unknown, which carries no seal. The gate must name the unknown write, never a seal that fails.
    const { t, taskId } = await tenantWithTask();
    const done = await go(t, taskId, "send_email");
    expect((await postReceipt(t.apiKey, taskId, "send_email", receiptBody(done))).status).toBe(200);
    // Another payload than the first write's: the same one would be refused as its duplicate (decision 0029).
    const expiring = newKey();
    const second = await postIntent(t.apiKey, taskId, EFFECT, intentBody(expiring, { payload_digest: hex("b") }));
    expect(second.body.decision, second.text).toBe("go");
    // Test set-up standing in for the clock: the second write's lease has run out.
    await handle.db.execute(
      sql`update side_effects set lease_expires_at = now() - interval '1 second'
          where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${EFFECT}`,
    );
    const replay = await postIntent(t.apiKey, taskId, "send_email", intentBody(done));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body.decision).toBe("replay");
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");

    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    expect(gate.body.reasons[0]!.target).toContain(EFFECT);
    const again = await postIntent(t.apiKey, taskId, "send_email", intentBody(done));
    expect(again.status, again.text).toBe(200);
    expect(again.body.decision).toBe("replay");
    expectError(
      await postIntent(t.apiKey, taskId, EFFECT, intentBody(expiring, { payload_digest: hex("b") })),
      409,
      "reconcile_required",
    );
  });

  it("refuses a replay from an older attempt once the task moved on (409 stale_attempt, no custody write); the current attempt replays", async () => {
    const { t, taskId } = await tenantWithTask();
    const done = await go(t, taskId, "send_email");
    expect((await postReceipt(t.apiKey, taskId, "send_email", receiptBody(done))).status).toBe(200);
    const newer = await postIntent(
      t.apiKey,
      taskId,
      EFFECT,
      intentBody(newKey(), { attempt: 2, payload_digest: hex("b") }),
    );
    expect(newer.body.decision, newer.text).toBe("go");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    expectError(await postIntent(t.apiKey, taskId, "send_email", intentBody(done)), 409, "stale_attempt");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    const current = await postIntent(t.apiKey, taskId, "send_email", intentBody(done, { attempt: 2 }));
    expect(current.status, current.text).toBe(200);
    expect(current.body.decision).toBe("replay");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("twelve concurrent replays that each find another write's lease run out: all replay, that write moves to unknown once", async () => {
    const { t, taskId } = await tenantWithTask();
    const done = await go(t, taskId, "send_email");
    expect((await postReceipt(t.apiKey, taskId, "send_email", receiptBody(done))).status).toBe(200);
    const other = await postIntent(t.apiKey, taskId, EFFECT, intentBody(newKey(), { payload_digest: hex("b") }));
    expect(other.body.decision, other.text).toBe("go");
    // Test set-up standing in for the clock.
    await handle.db.execute(
      sql`update side_effects set lease_expires_at = now() - interval '1 second'
          where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${EFFECT}`,
    );
    const replays = await Promise.all(
      Array.from({ length: 12 }, () => postIntent(t.apiKey, taskId, "send_email", intentBody(done))),
    );
    expect(replays.map((r) => [r.status, r.body.decision])).toEqual(replays.map(() => [200, "replay"]));
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");
    const expiries = (await auditRows(handle.db, t.tenantId, "side_effect.transitioned")).filter(
      (r) => r.target === `side_effect:${taskId}/${EFFECT}` && r.details.transition === "lease_expired",
    );
    expect(expiries).toHaveLength(1);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
  });

  it("rejects the same key with another payload digest (422 idempotency_key_mismatch), in flight or completed", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    let snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const inFlight = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { payload_digest: hex("9") }));
    expectError(inFlight, 422, "idempotency_key_mismatch");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);

    expect((await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key))).status).toBe(200);
    snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const completed = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { payload_digest: hex("9") }));
    expectError(completed, 422, "idempotency_key_mismatch");
    expect(completed.headers.get("idempotent-replayed")).toBeNull();
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("rejects a key that belongs to another effect (422) and does not create the second effect", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId, "first_effect");
    const otherTask = newTaskId();
    await checkpoint(t, otherTask);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const snapOther = await custodySnapshot(handle.db, t.tenantId, otherTask);

    const sameTask = await postIntent(t.apiKey, taskId, "second_effect", intentBody(key));
    expectError(sameTask, 422, "idempotency_key_mismatch");
    const crossTask = await postIntent(t.apiKey, otherTask, "first_effect", intentBody(key));
    expectError(crossTask, 422, "idempotency_key_mismatch");

    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect(await custodySnapshot(handle.db, t.tenantId, otherTask)).toEqual(snapOther);
    expect(await effectRow(handle.db, t.tenantId, taskId, "second_effect")).toBeUndefined();
  });

  it("rejects an effect bound to another key (422) — an effect keeps its key", async () => {
    const { t, taskId } = await tenantWithTask();
    await go(t, taskId);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(newKey())), 422, "idempotency_key_mismatch");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("answers 400 to a missing or malformed key, whatever else the body holds, and writes nothing", async () => {
    const { t, taskId } = await tenantWithTask();
    await checkpoint(t, taskId, {
      side_effects: { declared: { idempotency_key: "declared-key-1", status: "not_started" } },
    });
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const { idempotency_key: _omit, ...noKey } = intentBody("unused-key");
    const bodies: unknown[] = [
      noKey,
      { ...noKey, idempotency_key: null },
      { ...noKey, idempotency_key: 12345678 },
      { ...noKey, idempotency_key: "" },
      { ...noKey, idempotency_key: "short" },
      { ...noKey, idempotency_key: "has a space-in-it" },
      { ...noKey, idempotency_key: "slash/is/not/allowed" },
      { ...noKey, idempotency_key: "k".repeat(201) },
      { idempotency_key: "bad key" }, // other fields missing too: the key is judged first
      [],
    ];
    for (const name of [EFFECT, "declared"]) {
      for (const body of bodies) {
        const res = await postIntent(t.apiKey, taskId, name, body);
        expect(res.status, `${JSON.stringify(body).slice(0, 80)} → ${res.text}`).toBe(400);
        expect(errorCode(res)).toBe("bad_request");
        expect(res.text).toContain("idempotency_key");
      }
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("answers 422 naming the field when the key is fine but another field is not, and writes nothing", async () => {
    const { t, taskId } = await tenantWithTask();
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const key = newKey();
    const cases: Array<[Record<string, unknown>, string]> = [
      [intentBody(key, { mutation: "yes" }), "mutation"],
      [intentBody(key, { payload_digest: "" }), "payload_digest"],
      [intentBody(key, { action: undefined }), "action"],
      [intentBody(key, { lease_seconds: 4 }), "lease_seconds"],
      [intentBody(key, { unexpected: 1 }), "unexpected"],
    ];
    for (const [body, field] of cases) {
      const res = await postIntent(t.apiKey, taskId, EFFECT, body);
      expect(res.status, res.text).toBe(422);
      expect(errorCode(res)).toBe("validation_failed");
      expect(res.text).toContain(field);
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("answers 404 for an unknown task and for another tenant's task, and writes nothing there", async () => {
    const { t } = await tenantWithTask();
    const other = await createTestTenant(handle.db, { roles: [] });
    const otherTaskId = newTaskId("other");
    await checkpoint(other, otherTaskId);
    const otherKey = await go(other, otherTaskId);

    expectError(await postIntent(t.apiKey, newTaskId("missing"), EFFECT, intentBody(newKey())), 404, "not_found");

    const snapOther = await custodySnapshot(handle.db, other.tenantId, otherTaskId);
    expectError(await postIntent(t.apiKey, otherTaskId, "fresh_effect", intentBody(newKey())), 404, "not_found");
    expectError(await postIntent(t.apiKey, otherTaskId, EFFECT, intentBody(otherKey)), 404, "not_found");
    expectError(await postReceipt(t.apiKey, otherTaskId, EFFECT, receiptBody(otherKey)), 404, "not_found");
    expect(await custodySnapshot(handle.db, other.tenantId, otherTaskId)).toEqual(snapOther);
    expect(await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).toHaveLength(0);
  });

  it("answers 404 for a malformed effect name", async () => {
    const { t, taskId } = await tenantWithTask();
    const res = await postIntent(t.apiKey, taskId, "-starts-with-dash", intentBody(newKey()));
    expectError(res, 404, "not_found");
  });

  it("refuses intents and receipts from a signed-in person (403), whatever the role", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder", "admin"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = await go(t, taskId);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    for (const role of ["owner", "responder", "admin"] as const) {
      const person = await signInAs(t, role);
      expectError(await postIntent(person, taskId, "by_person", intentBody(newKey())), 403, "forbidden");
      expectError(await postReceipt(person, taskId, EFFECT, receiptBody(key)), 403, "forbidden");
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect(await effectRow(handle.db, t.tenantId, taskId, "by_person")).toBeUndefined();
  });

  it("answers 401 without credentials", async () => {
    const { taskId } = await tenantWithTask();
    const res = await postIntent(undefined, taskId, EFFECT, intentBody(newKey()));
    expectError(res, 401, "unauthorized");
  });

  it("gives exactly one go to 50 concurrent identical intents on a new effect (49 × 409 in_flight)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = newKey();
    const answers = await concurrentIntents(t, taskId, EFFECT, key);
    const gos = answers.filter((r) => r.status === 200 && r.body.decision === "go");
    const inFlight = answers.filter((r) => r.status === 409 && errorCode(r) === "in_flight");
    expect(gos).toHaveLength(1);
    expect(inFlight).toHaveLength(49);
    const audit = await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded");
    expect(audit.filter((a) => !("refused" in a.details))).toHaveLength(1);
    expect(audit.filter((a) => a.details.refused === "in_flight")).toHaveLength(49);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("in_flight");
  });

  it("gives one go to 50 concurrent reads on a new effect: the losers' inserts write no entry, the chain holds", async () => {
    // Not a mutation: no payload lock orders them, so the losers find out from their own insert (decision 0055: the
    // seal and the entry travel with it, and a lost insert writes neither).
    const { t, taskId } = await tenantWithTask();
    const key = newKey();
    const body = intentBody(key, { mutation: false, action: "records.read", payload_digest: hex("d") });
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => postIntent(t.apiKey, taskId, "read_record", body)),
    );
    expect(answers.filter((r) => r.status === 200 && r.body.decision === "go")).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409 && errorCode(r) === "in_flight")).toHaveLength(49);
    const entries = await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded");
    expect(entries.filter((a) => !("refused" in a.details))).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ idempotency_key: key, from: "created" }) }),
    ]);
    const actor: SystemActor = { kind: "system", tenantId: t.tenantId, label: "intents test" };
    expect(await verifyAuditChain({ db: handle.db, actor })).toMatchObject({ ok: true });
    // The row's seal is the server's: the gate stops for nothing but the write in flight.
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.reasons.map((r) => r.code)).not.toContain("evidence_mismatch");
  });

  it("seals a receipt dated before its intent, warnings and all, as the gate reads it back", async () => {
    // Decision 0055: the receipt's seal is computed before its update; a receipt that carries warnings is the shape
    // most likely to differ from what the jsonb column gives back.
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const early = new Date(Date.now() - 3_600_000).toISOString();
    const res = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { completed_at: early }));
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("completed_before_intent");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.reasons.map((r) => r.code)).not.toContain("evidence_mismatch");
    const replay = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body.decision).toBe("replay");
  });

  it("seals a write completed by a side_effect.receipt event as the gate reads it back", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    await sendEvents(t, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        attrs: { name: EFFECT, idempotency_key: key, external_operation_id: "op-by-event", result_digest: hex("f") },
      }),
    ]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("completed");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.reasons.map((r) => r.code)).not.toContain("evidence_mismatch");
    const replay = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toMatchObject({ decision: "replay", receipt: { external_operation_id: "op-by-event" } });
  });

  it("gives exactly one go to 50 concurrent identical intents on a declared, not started effect", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { [EFFECT]: { idempotency_key: key, status: "not_started" } } });
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("not_started");
    const answers = await concurrentIntents(t, taskId, EFFECT, key);
    expect(answers.filter((r) => r.status === 200 && r.body.decision === "go")).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409 && errorCode(r) === "in_flight")).toHaveLength(49);
    expect(
      (await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).filter((a) => !("refused" in a.details)),
    ).toHaveLength(1);
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(row).toMatchObject({ status: "in_flight", payload_digest: hex("c"), retry_status: "not_started" });
  });

  it("gives exactly one go to 50 concurrent intents on an approved effect (and keeps approved for a retry)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, {
      side_effects: {
        [EFFECT]: { idempotency_key: key, status: "approved", payload_digest: hex("c"), action: "records.update" },
      },
    });
    // A checkpoint cannot approve: the declared effect waits for an approver's decision, recorded here.
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("awaiting_approval");
    const [request] = await queryRows<{ id: string }>(
      handle.db,
      sql`select id from approval_requests where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    const decided = await api(await signInAs(t, "approver")).post(`/api/v1/approvals/${request!.id}/decision`, {
      decision: "approve",
    });
    expect(decided.status, decided.text).toBe(200);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("approved");
    const answers = await concurrentIntents(t, taskId, EFFECT, key);
    expect(answers.filter((r) => r.status === 200 && r.body.decision === "go")).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(49);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.retry_status).toBe("approved");
  });

  it("answers 403 approval_required for an effect awaiting approval, and writes nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { [EFFECT]: { idempotency_key: key, status: "awaiting_approval" } } });
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 403, "approval_required");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("answers 409 reconcile_required while the effect is unknown, and writes nothing", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    await sendEvents(t, [
      makeEvent(taskId, {
        type: "run.interrupted",
        occurred_at: new Date(Date.now() + 1000).toISOString(),
        attrs: { reason: "test" },
      }),
    ]);
    expect((await getTask(t.apiKey, taskId)).body.side_effects[EFFECT]?.status).toBe("unknown");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expectError(res, 409, "reconcile_required");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("makes an effect unknown when its lease expires: task view, gate and intent all agree", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = newKey();
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { lease_seconds: 5 }));
    expect(res.status, res.text).toBe(200);
    const body = res.body as Extract<IntentResult, { decision: "go" }>;
    expect(Date.parse(body.lease_expires_at) - Date.now()).toBeLessThanOrEqual(5_500);

    // still live: a newer attempt asking the gate is told replay (an older attempt's lease), a second intent is in_flight
    const live = await askGate(t.apiKey, taskId, { attempt: 2 });
    expect(live.body.verdict).toBe("replay");
    expect(live.body.reasons.map((r) => r.code)).toEqual(["side_effect_in_flight"]);
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 409, "in_flight");

    await sleep(Math.max(0, Date.parse(body.lease_expires_at) - Date.now()) + 1_000);

    const view = await getTask(t.apiKey, taskId);
    expect(view.body.side_effects[EFFECT]).toMatchObject({ status: "unknown" });
    expect(view.body.side_effects[EFFECT]!.status_reason).toMatch(/lease/i);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status).toBe(200);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    expect(gate.body.permitted_side_effects).toEqual([]);
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 409, "reconcile_required");
  }, 20_000);

  it("lets the intent API expire a lease by itself (no read in between)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = newKey();
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { lease_seconds: 5 }));
    expect(res.status).toBe(200);
    await sleep(6_000);
    // the refused intent rolls its transaction back (the lazy expiry included); the answer is what counts
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 409, "reconcile_required");
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 409, "reconcile_required");
    expect((await getTask(t.apiKey, taskId)).body.side_effects[EFFECT]?.status).toBe("unknown");
  }, 20_000);

  it("refuses a mutation on a task known only from its events (gate replay: no checkpoint), lets a read go", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("evt");
    await createTaskByEvent(t, taskId);
    const res = await postIntent(t.apiKey, taskId, EFFECT, intentBody(newKey()));
    expectError(res, 409, "gate_replay");
    expect(
      (res.body as unknown as { error: { details: { reasons: Array<{ code: string }> } } }).error.details.reasons.map(
        (r) => r.code,
      ),
    ).toEqual(["no_checkpoint"]);
    expect(await effectRow(handle.db, t.tenantId, taskId, EFFECT)).toBeUndefined();
    expect(
      (await postIntent(t.apiKey, taskId, "lookup", intentBody(newKey(), { mutation: false }))).body.decision,
    ).toBe("go");
    await checkpoint(t, taskId);
    await go(t, taskId);
    expect((await getTask(t.apiKey, taskId)).body.side_effects[EFFECT]?.status).toBe("in_flight");
  });
});

describe("receipt", () => {
  it("completes an effect after go, with the receipt stored and one audit row", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const res = await postReceipt(
      t.apiKey,
      taskId,
      EFFECT,
      receiptBody(key, { completed_at: withOffset(RECEIPT_AT, 2) }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      status: "completed",
      replayed: false,
      warnings: [],
      receipt: { external_operation_id: "op-771", result_digest: hex("f"), completed_at: RECEIPT_AT },
    });
    const view = await getTask(t.apiKey, taskId);
    expect(view.body.side_effects[EFFECT]).toMatchObject({
      status: "completed",
      lease_expires_at: null,
      receipt: { external_operation_id: "op-771", result_digest: hex("f"), completed_at: RECEIPT_AT },
    });
    const audit = await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded");
    expect(audit).toHaveLength(1);
    expect(audit[0]!.details).toMatchObject({
      idempotency_key: key,
      external_operation_id: "op-771",
      from: "in_flight",
    });
  });

  it("treats an identical second receipt as a no-op (replayed: true, no write, no audit row)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    expect((await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key))).status).toBe(200);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    // the same instant written with another offset is the same receipt
    const again = await postReceipt(
      t.apiKey,
      taskId,
      EFFECT,
      receiptBody(key, { completed_at: withOffset(RECEIPT_AT, 1) }),
    );
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({
      status: "completed",
      replayed: true,
      receipt: { external_operation_id: "op-771" },
    });
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect(await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded")).toHaveLength(1);
  });

  it("answers 409 receipt_conflict to a different receipt, keeping the stored one", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    expect((await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key))).status).toBe(200);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const variants = [
      { external_operation_id: "op-other" },
      { result_digest: hex("0") },
      { completed_at: new Date(Date.parse(RECEIPT_AT) + 60_000).toISOString() },
    ];
    for (const over of variants) {
      const res = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, over));
      expectError(res, 409, "receipt_conflict");
      expect(res.text).toContain("op-771");
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    // each conflicting receipt is kept as evidence and its refusal audited
    expect(await refusals(handle.db, t.tenantId, taskId)).toEqual({
      refused: Array(3).fill("receipt_conflict"),
      kept: Array(3).fill("receipt_conflict"),
    });
  });

  it("answers 409 no_intent for a declared effect that never had an intent, keeps the receipt, and its intent then replays it", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { [EFFECT]: { idempotency_key: key, status: "not_started" } } });
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key));
    expectError(res, 409, "no_intent");
    expect((res.body as unknown as { error: { details: unknown } }).error.details).toMatchObject({
      kept_as_evidence: true,
    });
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("not_started");
    expect((await refusals(handle.db, t.tenantId, taskId)).kept).toEqual(["no_intent"]);
    // the write happened: its intent is answered with the receipt, not a go
    const replay = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual({
      decision: "replay",
      receipt: { external_operation_id: "op-771", result_digest: hex("f"), completed_at: RECEIPT_AT },
    });
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("completed");
  });

  it("keeps a receipt for an effect the task does not have yet (409 no_intent), and answers 404 for an unknown task", async () => {
    const { t, taskId } = await tenantWithTask();
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    expectError(await postReceipt(t.apiKey, taskId, "never_declared", receiptBody(newKey())), 409, "no_intent");
    expectError(await postReceipt(t.apiKey, newTaskId("missing"), EFFECT, receiptBody(newKey())), 404, "not_found");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect((await refusals(handle.db, t.tenantId, taskId)).kept).toEqual(["no_intent"]);
  });

  it("answers 422 idempotency_key_mismatch for a receipt under another key, and 400 / 422 for bad bodies", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    expectError(await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(newKey())), 422, "idempotency_key_mismatch");
    const { idempotency_key: _k, ...noKey } = receiptBody(key);
    expectError(await postReceipt(t.apiKey, taskId, EFFECT, noKey), 400, "bad_request");
    expectError(await postReceipt(t.apiKey, taskId, EFFECT, receiptBody("bad key!")), 400, "bad_request");
    const noOp = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { external_operation_id: "" }));
    expectError(noOp, 422, "validation_failed");
    expect(noOp.text).toContain("external_operation_id");
    const noZone = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { completed_at: "2025-07-01 09:05" }));
    expectError(noZone, 422, "validation_failed");
    expect(noZone.text).toContain("completed_at");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("in_flight");
  });

  it("refuses a late receipt for an effect that became unknown: only a person settles it (API and event alike)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    await sendEvents(t, [
      makeEvent(taskId, { type: "run.interrupted", occurred_at: new Date(Date.now() + 1000).toISOString() }),
    ]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");
    const res = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key));
    expectError(res, 409, "reconcile_required");
    await sendEvents(t, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        occurred_at: new Date(Date.now() + 2000).toISOString(),
        attrs: { name: EFFECT, idempotency_key: key, external_operation_id: "op-late" },
      }),
    ]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");
    expect(
      (await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded")).filter((a) => !("refused" in a.details)),
    ).toHaveLength(0);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("stop");
    // both late receipts are kept as evidence for whoever reconciles
    const kept = (await getTask(t.apiKey, taskId)).body.side_effects[EFFECT]!.unapplied_receipts;
    expect(kept.map((k) => [k.source, k.external_operation_id, k.reason])).toEqual([
      ["route", "op-771", "reconcile_required"],
      ["event", "op-late", "reconcile_required"],
    ]);
  });

  it("stores one of 20 concurrent identical receipts; the others are replayed no-ops (one audit row)", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.body.replayed === false)).toHaveLength(1);
    expect(answers.filter((a) => a.body.replayed === true)).toHaveLength(19);
    expect(await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded")).toHaveLength(1);
  });

  it("keeps the first of two concurrent, different receipts; the other gets 409 receipt_conflict", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    const answers = await Promise.all([
      postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { external_operation_id: "op-a" })),
      postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key, { external_operation_id: "op-b" })),
    ]);
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && errorCode(a) === "receipt_conflict")).toHaveLength(1);
    const stored = (await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.receipt?.external_operation_id;
    expect(stored).toBe(ok[0]!.body.receipt.external_operation_id);
    const audit = await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded");
    expect(audit.map((a) => a.details.refused ?? "stored").sort()).toEqual(["receipt_conflict", "stored"]);
  });

  it("after a receipt the next intent replays, and after a replay a receipt is still a no-op", async () => {
    const { t, taskId } = await tenantWithTask();
    const key = await go(t, taskId);
    expect((await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key))).status).toBe(200);
    const replay = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key));
    expect(replay.body.decision).toBe("replay");
    const again = await postReceipt(t.apiKey, taskId, EFFECT, receiptBody(key));
    expect(again.body).toMatchObject({ replayed: true });
    const intents = await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded");
    const receipts = await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded");
    expect([intents.length, receipts.length]).toEqual([1, 1]);
  });
});
