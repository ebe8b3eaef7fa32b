/**
 * One write, one go (decision 0029), on real PostgreSQL through the built server: a second write of the same payload
 * under a new name or key is refused on every path that starts a write (intent route, `side_effect.intent` event,
 * RunState import) unless it says which write it repeats; concurrent intents for one payload give one go; a tool owner's
 * `not_applied` receipt settles an in-flight write (route and event) so the same key goes again; an approval authorizes
 * one go on every path, a retry after not_applied needing a fresh one unless the workspace says otherwise; a payload
 * sent with an intent must match its digest.
 */
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { DuplicatePayloadDetails, IntentResult, SideEffectView } from "@/lib/contract/api";
import { toolCallDigest } from "@/lib/domain/crypto/canonical";
import {
  checkpoint,
  getTask,
  hex,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
  postReconcile,
  receiptBody,
  sendEvents,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import { errorOf, expectError } from "./support/responses";
import { auditRows, effectRow, refusals } from "./support/stored-rows";
import {
  api,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  testDbForFile,
  type Auth,
  type TestTenant,
} from "./helpers";

const handle = testDbForFile();

/** The tried case's names: our own client's default `<tool>.<call id>`. */
const FIRST = "CreatePayment.call_1";
const SECOND = "CreatePayment.call_2";
const CHARGE = { amount: 4200, currency: "EUR", customer: "cus_918" };
const DIGEST = toolCallDigest("CreatePayment", CHARGE);
const charge = (key: string, over: Record<string, unknown> = {}) =>
  intentBody(key, { action: "payments.create", tool: "CreatePayment", payload_digest: DIGEST, ...over });

async function taskOf(t: TestTenant): Promise<string> {
  const taskId = newTaskId("write");
  await checkpoint(t, taskId);
  return taskId;
}

async function go(t: TestTenant, taskId: string, name: string, body: Record<string, unknown>): Promise<void> {
  const res = await postIntent(t.apiKey, taskId, name, body);
  expect(res.status, res.text).toBe(200);
  expect(res.body.decision).toBe("go");
}

const view = async (t: TestTenant, taskId: string, name: string): Promise<SideEffectView | undefined> =>
  (await getTask(t.apiKey, taskId)).body.side_effects[name];

async function interrupt(t: TestTenant, taskId: string): Promise<void> {
  await sendEvents(t, [makeEvent(taskId, { type: "run.interrupted", occurred_at: new Date().toISOString() })]);
}

const notApplied = (key: string, over: Record<string, unknown> = {}) => ({
  idempotency_key: key,
  outcome: "not_applied",
  error: "card_declined: the issuer refused the charge; nothing was captured",
  attempt: 1,
  ...over,
});

const putApprovalSettings = (auth: Auth, body: unknown) => api(auth).put("/api/v1/settings/approvals", body);
const decide = (auth: Auth, id: string) =>
  api(auth).post<{ id: string; status: string }>(`/api/v1/approvals/${id}/decision`, { decision: "approve" });

describe("a second write of the same payload (decision 0029, docs/concepts.md#a-second-write-of-the-same-payload)", () => {
  it("the tried case: CreatePayment.call_2 under a fresh key and the same digest while call_1 is in flight is 409 duplicate_payload naming call_1, its key and status, and writes nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const keyA = newKey("pay");
    await go(t, taskId, FIRST, charge(keyA));
    const keyB = newKey("pay");
    const res = await postIntent(t.apiKey, taskId, SECOND, charge(keyB));
    expectError(res, 409, "duplicate_payload");
    expect(errorOf(res).details).toMatchObject({
      side_effect: FIRST,
      idempotency_key: keyA,
      status: "in_flight",
      same_writes: [{ side_effect: FIRST, idempotency_key: keyA, status: "in_flight" }],
    } satisfies Partial<DuplicatePayloadDetails>);
    expect(errorOf(res).message).toContain('"repeats": "CreatePayment.call_1"');
    expect(await effectRow(handle.db, t.tenantId, taskId, SECOND)).toBeUndefined();
    // The refusal is a custody decision: audited, naming the write it duplicates.
    const refused = (await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).filter(
      (r) => r.details.refused,
    );
    expect(refused.map((r) => [r.target, r.details.refused, r.details.duplicate_of])).toEqual([
      [`side_effect:${taskId}/${SECOND}`, "duplicate_payload", FIRST],
    ]);
  });

  it("a completed first write: 409 duplicate_payload offering its receipt for replay; an unknown one: 409 too", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const keyA = newKey("pay");
    await go(t, taskId, FIRST, charge(keyA));
    const stored = await postReceipt(t.apiKey, taskId, FIRST, receiptBody(keyA, { external_operation_id: "pi_1" }));
    expect(stored.status, stored.text).toBe(200);
    const res = await postIntent(t.apiKey, taskId, SECOND, charge(newKey("pay")));
    expectError(res, 409, "duplicate_payload");
    expect(errorOf(res).details).toMatchObject({
      side_effect: FIRST,
      status: "completed",
      receipt: { external_operation_id: "pi_1" },
    });

    const other = await taskOf(t);
    await go(t, other, FIRST, charge(newKey("pay")));
    await interrupt(t, other);
    expect((await view(t, other, FIRST))?.status).toBe("unknown");
    const unknown = await postIntent(t.apiKey, other, SECOND, charge(newKey("pay")));
    expectError(unknown, 409, "duplicate_payload");
    expect(errorOf(unknown).details).toMatchObject({ side_effect: FIRST, status: "unknown" });
  });

  it("other spellings of the same digest and action are the same payload; another payload, another action or a read is not", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    await go(t, taskId, FIRST, charge(newKey("pay")));
    for (const spelled of [`sha256:${DIGEST.toUpperCase()}`, `SHA256:${DIGEST}`, DIGEST.toUpperCase()]) {
      const res = await postIntent(
        t.apiKey,
        taskId,
        SECOND,
        charge(newKey("pay"), { payload_digest: spelled, action: "Payments.Create" }),
      );
      expectError(res, 409, "duplicate_payload");
    }
    await go(t, taskId, "CreatePayment.call_3", charge(newKey("pay"), { payload_digest: hex("3") }));
    await go(t, taskId, "Refund.call_4", charge(newKey("pay"), { action: "payments.refund" }));
    await go(t, taskId, "ReadPayment.call_5", charge(newKey("pay"), { mutation: false }));
  });

  it("a deliberate repeat names the write it repeats: it goes, and the repeat is recorded on the effect, in its audit entry and on the timeline", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const keyA = newKey("pay");
    await go(t, taskId, FIRST, charge(keyA));
    await postReceipt(t.apiKey, taskId, FIRST, receiptBody(keyA));
    const keyB = newKey("pay");
    await go(t, taskId, SECOND, charge(keyB, { repeats: FIRST }));
    expect(await view(t, taskId, SECOND)).toMatchObject({ status: "in_flight", repeats: FIRST });
    const entry = (await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).find(
      (r) => r.target === `side_effect:${taskId}/${SECOND}`,
    );
    expect(entry?.details).toMatchObject({ idempotency_key: keyB, repeats: FIRST });
    const timeline = await api(t.apiKey).get<{
      events: Array<{ type: string; plane: string; attrs: Record<string, unknown> }>;
    }>(`/api/v1/tasks/${taskId}/timeline`);
    expect(timeline.body.events.filter((e) => e.type === "decision.recorded").map((e) => [e.plane, e.attrs])).toEqual([
      ["session", { kind: "repeat", side_effect: SECOND, repeats: FIRST, idempotency_key: keyB }],
    ]);
    // Asking again under the same key is the same effect's own answer (in flight), not a third write.
    expectError(await postIntent(t.apiKey, taskId, SECOND, charge(keyB, { repeats: FIRST })), 409, "in_flight");
    // A third identical write must name the latest of them: call_2, not call_1.
    const third = await postIntent(t.apiKey, taskId, "CreatePayment.call_3", charge(newKey("pay"), { repeats: FIRST }));
    expectError(third, 409, "duplicate_payload");
    expect(errorOf(third).details).toMatchObject({ side_effect: SECOND, repeats_named: FIRST });
  });

  it("repeats must name another effect of the task with the same action and payload: else 422 repeats_mismatch", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    await go(t, taskId, FIRST, charge(newKey("pay")));
    await go(t, taskId, "Other.call_9", charge(newKey("pay"), { payload_digest: hex("9") }));
    for (const repeats of ["Nothing.call_0", "Other.call_9", SECOND]) {
      const res = await postIntent(t.apiKey, taskId, SECOND, charge(newKey("pay"), { repeats }));
      expectError(res, 422, "repeats_mismatch");
    }
    expect(await effectRow(handle.db, t.tenantId, taskId, SECOND)).toBeUndefined();
  });

  it("a repeat meets the approval rules of the write it repeats: it needs an approval of its own", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = await taskOf(t);
    const keyA = newKey("pay");
    const first = await postIntent(t.apiKey, taskId, FIRST, charge(keyA, { requires_approval: true, payload: CHARGE }));
    expectError(first, 403, "approval_required");
    const approver = await signInAs(t, "approver");
    expect((await decide(approver, (errorOf(first).details as { approval_id: string }).approval_id)).status).toBe(200);
    await go(t, taskId, FIRST, charge(keyA, { requires_approval: true, payload: CHARGE }));
    await postReceipt(t.apiKey, taskId, FIRST, receiptBody(keyA));
    // The repeat does not say requires_approval: it needs one anyway, like the write it repeats.
    const repeat = await postIntent(
      t.apiKey,
      taskId,
      SECOND,
      charge(newKey("pay"), { repeats: FIRST, payload: CHARGE }),
    );
    expectError(repeat, 403, "approval_required");
    expect(await view(t, taskId, SECOND)).toMatchObject({ status: "awaiting_approval" });
  });

  it("twenty concurrent intents under different names and keys for one payload: exactly one go, the others 409 duplicate_payload", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postIntent(t.apiKey, taskId, `CreatePayment.call_${i}`, charge(newKey("pay"))),
      ),
    );
    const codes = answers.map((r) => (r.status === 200 ? (r.body as IntentResult).decision : errorOf(r).code));
    expect(codes.filter((c) => c === "go")).toHaveLength(1);
    expect(codes.filter((c) => c === "duplicate_payload")).toHaveLength(19);
    const [row] = await queryRows<{ n: string }>(
      handle.db,
      sql`select count(*) as n from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(Number(row!.n)).toBe(1);
  });

  it("the events path: a reported second write of the same payload becomes unknown (refused as the route refuses it); one that names its repeat is in flight", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const keyA = newKey("pay");
    await go(t, taskId, FIRST, charge(keyA));
    const report = (name: string, key: string, extra: Record<string, unknown> = {}) =>
      makeEvent(taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: { name, idempotency_key: key, action: "payments.create", payload_digest: DIGEST, ...extra },
      });
    const res = await postEvents(t.apiKey, [report(SECOND, newKey("pay"))]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: SECOND, applied: false, code: "duplicate_payload" },
    });
    expect(await view(t, taskId, SECOND)).toMatchObject({ status: "unknown" });
    // Without an action it still matches (an effect reported without one matches any).
    const bare = makeEvent(taskId, {
      type: "side_effect.intent",
      occurred_at: new Date().toISOString(),
      attrs: { name: "CreatePayment.call_7", idempotency_key: newKey("pay"), payload_digest: `sha256:${DIGEST}` },
    });
    expect((await postEvents(t.apiKey, [bare])).body.results[0]?.effect).toMatchObject({ code: "duplicate_payload" });

    const other = await taskOf(t);
    await go(t, other, FIRST, charge(newKey("pay")));
    const named = makeEvent(other, {
      type: "side_effect.intent",
      occurred_at: new Date().toISOString(),
      attrs: {
        name: SECOND,
        idempotency_key: newKey("pay"),
        action: "payments.create",
        payload_digest: DIGEST,
        repeats: FIRST,
      },
    });
    expect((await postEvents(t.apiKey, [named])).body.results[0]?.effect).toMatchObject({
      name: SECOND,
      applied: true,
    });
    expect(await view(t, other, SECOND)).toMatchObject({ status: "in_flight", repeats: FIRST });
  });

  it("the checkpoint path: a write a checkpoint declares with its payload digest counts as written: the same payload under a new name is 409 duplicate_payload", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("write");
    const keyA = newKey("pay");
    await checkpoint(t, taskId, {
      side_effects: {
        [FIRST]: {
          idempotency_key: keyA,
          status: "completed",
          receipt: { external_operation_id: "pi_declared", completed_at: new Date().toISOString() },
          action: "payments.create",
          payload_digest: `sha256:${DIGEST.toUpperCase()}`,
        },
      },
    });
    const res = await postIntent(t.apiKey, taskId, SECOND, charge(newKey("pay")));
    expectError(res, 409, "duplicate_payload");
    expect(errorOf(res).details).toMatchObject({
      side_effect: FIRST,
      idempotency_key: keyA,
      status: "completed",
      receipt: { external_operation_id: "pi_declared" },
    });
  });

  it("the RunState import: a state that executed the same call twice records the second as unknown (a person looks at it), with a warning", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const sample = JSON.parse(
      fs.readFileSync(path.join("/work/shared/fixtures/real/openai-agents-python", "v1_17.json"), "utf8"),
    ) as Record<string, unknown>;
    const call = (id: string) => ({
      type: "tool_call_item",
      agent: { name: "a" },
      raw_item: {
        type: "function_call",
        call_id: id,
        name: "CreatePayment",
        arguments: JSON.stringify(CHARGE),
        id: `fc_${id}`,
      },
    });
    const output = (id: string) => ({
      type: "tool_call_output_item",
      agent: { name: "a" },
      output: "ok",
      raw_item: { type: "function_call_output", call_id: id, output: "ok" },
    });
    const state = {
      ...sample,
      current_agent: { name: "a" },
      current_step: { type: "next_step_run_again", data: {} },
      generated_items: [call("c1"), output("c1"), call("c2"), output("c2")],
    };
    const res = await api(t.apiKey).post<{ receipts: string[]; warnings: string[] }>(
      `/api/v1/import/openai-agents/run-state?task_id=${taskId}`,
      state,
    );
    expect(res.status, res.text).toBe(200);
    const statuses = await Promise.all(res.body.receipts.map(async (n) => (await view(t, taskId, n))?.status));
    expect(statuses.sort()).toEqual(["completed", "unknown"]);
    expect(res.body.warnings.join("\n")).toContain("duplicate_payload");
  });
});

describe("a not_applied receipt (decision 0029, docs/concepts.md#receipt)", () => {
  it("settles an in-flight write as not applied with the tool's message (audited), and the next intent under the same key gets a fresh go", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    await go(t, taskId, FIRST, charge(key));
    const res = await postReceipt(t.apiKey, taskId, FIRST, notApplied(key));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "not_started", outcome: "not_applied", replayed: false, warnings: [] });
    expect(await view(t, taskId, FIRST)).toMatchObject({
      status: "not_started",
      lease_expires_at: null,
      last_not_applied: { error: notApplied(key).error, attempt: 1, source: "route" },
    });
    const entry = (await auditRows(handle.db, t.tenantId, "side_effect.receipt_recorded")).at(-1);
    expect(entry?.details).toMatchObject({ outcome: "not_applied", error: notApplied(key).error, from: "in_flight" });
    // The same receipt again (a client's retry) is a replay and changes nothing.
    const again = await postReceipt(t.apiKey, taskId, FIRST, notApplied(key));
    expect(again.body).toMatchObject({ replayed: true });
    await go(t, taskId, FIRST, charge(key));
  });

  it("the tool's message is typed text: credentials redacted, length bounded, refused nowhere", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    await go(t, taskId, FIRST, charge(key));
    const secret = `sk_live_${"4eC39HqLyjWDarjtT1zdp7dc".repeat(2)}`;
    const res = await postReceipt(
      t.apiKey,
      taskId,
      FIRST,
      notApplied(key, { error: `401 from the API with key ${secret}\u202e ${"x".repeat(3000)}` }),
    );
    expect(res.status, res.text).toBe(200);
    const kept = (await view(t, taskId, FIRST))!.last_not_applied!.error;
    expect(kept).not.toContain(secret);
    expect(kept).toContain("[REDACTED]");
    expect(kept).not.toContain("\u202e");
    expect([...kept].length).toBeLessThanOrEqual(1000);
    expect(res.body).toMatchObject({ warnings: ["error_truncated"] });
    const audit = JSON.stringify((await auditRows(handle.db, t.tenantId)).map((r) => r.details));
    expect(audit).not.toContain(secret);
  });

  it("after a person reconciled the write it is kept as evidence and changes nothing; on an unknown effect it waits for the person", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    await go(t, taskId, FIRST, charge(key));
    await interrupt(t, taskId);
    const early = await postReceipt(t.apiKey, taskId, FIRST, notApplied(key));
    expectError(early, 409, "reconcile_required");
    expect((await view(t, taskId, FIRST))?.status).toBe("unknown");
    const responder = await signInAs(t, "responder");
    const settled = await postReconcile(responder, taskId, FIRST, {
      outcome: "not_applied",
      evidence: "The payments dashboard shows no charge for this key.",
    });
    expect(settled.status, settled.text).toBe(200);
    const before = await view(t, taskId, FIRST);
    const late = await postReceipt(t.apiKey, taskId, FIRST, notApplied(key, { error: "declined (late report)" }));
    expectError(late, 409, "no_intent");
    expect(errorOf(late).message).toContain("already settled as not applied");
    const after = await view(t, taskId, FIRST);
    expect(after?.status).toBe(before?.status);
    expect(after?.last_not_applied).toBeNull();
    expect(after?.unapplied_receipts.map((r) => [r.outcome, r.reason, r.error])).toEqual([
      ["not_applied", "reconcile_required", notApplied(key).error],
      ["not_applied", "no_intent", "declined (late report)"],
    ]);
  });

  it("a not_applied receipt before any intent is kept and never taken for the intent: the intent then goes", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    expectError(await postReceipt(t.apiKey, taskId, FIRST, notApplied(key)), 409, "no_intent");
    await go(t, taskId, FIRST, charge(key));
    expect((await refusals(handle.db, t.tenantId, taskId)).kept).toEqual(["no_intent"]);
  });

  it("the events path: a side_effect.receipt event with outcome not_applied settles the write the same way (own audit entry); tool.failed naming the key does not", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    await go(t, taskId, FIRST, charge(key));
    await sendEvents(t, [
      makeEvent(taskId, {
        type: "tool.failed",
        occurred_at: new Date().toISOString(),
        attrs: { tool: "CreatePayment", call_id: "call_1", idempotency_key: key, error: "timeout" },
      }),
    ]);
    expect((await view(t, taskId, FIRST))?.status).toBe("in_flight");
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.receipt",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: key, outcome: "not_applied", error: "card_declined" },
      }),
    ]);
    expect(res.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: FIRST, applied: true, code: "not_applied" },
    });
    expect(await view(t, taskId, FIRST)).toMatchObject({
      status: "not_started",
      last_not_applied: { error: "card_declined", source: "event" },
    });
    const moved = (await auditRows(handle.db, t.tenantId, "side_effect.transitioned")).at(-1);
    expect(moved?.details).toMatchObject({ transition: "receipt_not_applied", from: "in_flight", to: "not_started" });
    await go(t, taskId, FIRST, charge(key));
    // A not_applied receipt event must name the tool's message, and no operation (as on the route).
    const bad = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.receipt",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: key, outcome: "not_applied" },
      }),
      makeEvent(taskId, {
        type: "side_effect.receipt",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: key, outcome: "not_applied", error: "x", external_operation_id: "pi_1" },
      }),
    ]);
    expect(bad.body.results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("a receipt without outcome, or with outcome applied, completes the write as before; not_applied takes no operation id", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    await go(t, taskId, FIRST, charge(key));
    expectError(
      await postReceipt(t.apiKey, taskId, FIRST, notApplied(key, { external_operation_id: "pi_1" })),
      422,
      "validation_failed",
    );
    const res = await postReceipt(t.apiKey, taskId, FIRST, receiptBody(key, { outcome: "applied" }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("completed");
  });
});

describe("an approval authorizes one go on every path (decision 0029, docs/concepts.md#approvals)", () => {
  /** A task whose approved write went once (the approval used) and was then found not applied. */
  async function usedThenNotApplied(t: TestTenant, via: "reconcile" | "receipt") {
    const taskId = await taskOf(t);
    const key = newKey("pay");
    const body = charge(key, { requires_approval: true, payload: CHARGE });
    const first = await postIntent(t.apiKey, taskId, FIRST, body);
    expectError(first, 403, "approval_required");
    const approvalId = (errorOf(first).details as { approval_id: string }).approval_id;
    expect((await decide(await signInAs(t, "approver"), approvalId)).status).toBe(200);
    await go(t, taskId, FIRST, body);
    if (via === "reconcile") {
      await interrupt(t, taskId);
      const res = await postReconcile(await signInAs(t, "responder"), taskId, FIRST, {
        outcome: "not_applied",
        evidence: "The payments dashboard shows no charge for this key.",
      });
      expect(res.status, res.text).toBe(200);
    } else {
      const res = await postReceipt(t.apiKey, taskId, FIRST, notApplied(key));
      expect(res.status, res.text).toBe(200);
    }
    return { taskId, key, body, approvalId };
  }

  for (const via of ["reconcile", "receipt"] as const) {
    it(`the tried case (${via}): after not_applied, the intent route wants a fresh approval instead of a second go under the used one`, async () => {
      const t = await createTestTenant(handle.db, { roles: ["approver", "responder"] });
      const { taskId, body, approvalId } = await usedThenNotApplied(t, via);
      expect((await view(t, taskId, FIRST))?.status).toBe("not_started");
      const retry = await postIntent(t.apiKey, taskId, FIRST, body);
      expectError(retry, 403, "approval_required");
      const fresh = (errorOf(retry).details as { approval_id: string }).approval_id;
      expect(fresh).not.toBe(approvalId);
      const old = await api(t.apiKey).get<{ superseded_by: string | null }>(`/api/v1/approvals/${approvalId}`);
      expect(old.body.superseded_by).toBe(fresh);
      // Once approved again, the retry goes once.
      expect((await decide(await signInAs(t, "approver"), fresh)).status).toBe(200);
      await go(t, taskId, FIRST, body);
    });
  }

  it("the events path refuses the same retry: the effect becomes unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "responder"] });
    const { taskId, key } = await usedThenNotApplied(t, "receipt");
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: key, action: "payments.create", payload_digest: DIGEST },
      }),
    ]);
    expect(res.body.results[0]?.effect).toMatchObject({ applied: false, code: "approval_required" });
    expect((await view(t, taskId, FIRST))?.status).toBe("unknown");
  });

  it("a reported write the route would hold for an approval (a Settings rule on its action, or requires_approval) is not in flight without one: it becomes unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    const rule = await api(owner).put("/api/v1/settings/approval-rules/payments.create", { requires_approval: true });
    expect(rule.status, rule.text).toBe(200);
    // The route holds the write for an approver.
    expectError(await postIntent(t.apiKey, await taskOf(t), FIRST, charge(newKey("pay"))), 403, "approval_required");
    // The events path reports such writes (each in its own task: an unknown write stops its task's gate): no approval,
    // so no write in flight.
    const reportIn = async (attrs: Record<string, unknown>) => {
      const taskId = await taskOf(t);
      const res = await postEvents(t.apiKey, [
        makeEvent(taskId, {
          type: "side_effect.intent",
          occurred_at: new Date().toISOString(),
          attrs: { name: SECOND, idempotency_key: newKey("pay"), ...attrs },
        }),
      ]);
      expect(res.status, res.text).toBe(200);
      return { note: res.body.results[0]?.effect, status: (await view(t, taskId, SECOND))?.status };
    };
    expect(await reportIn({ action: "payments.create", payload_digest: DIGEST })).toMatchObject({
      note: { applied: false, code: "approval_required" },
      status: "unknown",
    });
    expect(
      await reportIn({ action: "reports.publish", payload_digest: DIGEST, requires_approval: true }),
    ).toMatchObject({ note: { applied: false, code: "approval_required" }, status: "unknown" });
    expect(await reportIn({ action: "records.update", payload_digest: DIGEST })).toMatchObject({
      note: { applied: true },
      status: "in_flight",
    });
  });

  it("a reported write under an approval must name the payload digest and action the approval binds: one that leaves them out is unknown and uses nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = await taskOf(t);
    const key = newKey("pay");
    const body = charge(key, { requires_approval: true, payload: CHARGE });
    const first = await postIntent(t.apiKey, taskId, FIRST, body);
    expectError(first, 403, "approval_required");
    const approvalId = (errorOf(first).details as { approval_id: string }).approval_id;
    expect((await decide(await signInAs(t, "approver"), approvalId)).status).toBe(200);
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: key },
      }),
    ]);
    expect(res.body.results[0]?.effect).toMatchObject({ applied: false, code: "approval_mismatch" });
    expect((await view(t, taskId, FIRST))?.status).toBe("unknown");
    const [row] = await queryRows<{ consumed_at: string | null }>(
      handle.db,
      sql`select consumed_at from approval_requests where tenant_id = ${t.tenantId} and id = ${approvalId}::uuid`,
    );
    expect(row!.consumed_at).toBeNull();
  });

  it("with retry_after_not_applied_reuses_approval on (Settings → Approvals), the retry goes under the used approval on both paths, named as reused", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver", "responder", "admin"] });
    const admin = await signInAs(t, "admin");
    const set = await putApprovalSettings(admin, { retry_after_not_applied_reuses_approval: true });
    expect(set.status, set.text).toBe(200);
    const read = await api(admin).get<{ retry_after_not_applied_reuses_approval: boolean }>(
      "/api/v1/settings/approvals",
    );
    expect(read.body.retry_after_not_applied_reuses_approval).toBe(true);

    const { taskId, body, approvalId } = await usedThenNotApplied(t, "reconcile");
    expect((await view(t, taskId, FIRST))?.status).toBe("approved");
    await go(t, taskId, FIRST, body);
    const entry = (await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).at(-1);
    expect(entry?.details).toMatchObject({ approval_id: approvalId, approval_reused: true });

    const events = await usedThenNotApplied(t, "receipt");
    const res = await postEvents(t.apiKey, [
      makeEvent(events.taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: { name: FIRST, idempotency_key: events.key, action: "payments.create", payload_digest: DIGEST },
      }),
    ]);
    expect(res.body.results[0]?.effect).toMatchObject({ applied: true });
    expect((await view(t, events.taskId, FIRST))?.status).toBe("in_flight");
  });

  it("only owners and admins change the setting", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const res = await putApprovalSettings(await signInAs(t, "approver"), {
      retry_after_not_applied_reuses_approval: true,
    });
    expectError(res, 403, "forbidden");
    expectError(
      await putApprovalSettings(t.apiKey, { retry_after_not_applied_reuses_approval: true }),
      403,
      "forbidden",
    );
  });
});

describe("a payload that matches its digest (decision 0029, docs/concepts.md#payload-digest)", () => {
  it("the tried case: payload_digest sha256:abc with a real payload is 422 payload_digest_mismatch naming both digests, and no approval request is made", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const res = await postIntent(
      t.apiKey,
      taskId,
      FIRST,
      charge(newKey("pay"), { payload_digest: "sha256:abc", requires_approval: true, payload: CHARGE }),
    );
    expectError(res, 422, "payload_digest_mismatch");
    expect(errorOf(res).details).toMatchObject({ payload_digest: "sha256:abc", computed_payload_digest: DIGEST });
    const [row] = await queryRows<{ n: string }>(
      handle.db,
      sql`select count(*) as n from approval_requests where tenant_id = ${t.tenantId}`,
    );
    expect(Number(row!.n)).toBe(0);
    expect(await effectRow(handle.db, t.tenantId, taskId, FIRST)).toBeUndefined();
  });

  it("the client's formula matches in any spelling of the digest; the tool defaults to the effect's name", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    await go(
      t,
      taskId,
      FIRST,
      charge(newKey("pay"), { payload: CHARGE, payload_digest: `sha256:${DIGEST.toUpperCase()}` }),
    );
    const named = toolCallDigest("CreatePayment.call_2", { note: 1 });
    const { tool: _tool, ...noTool } = charge(newKey("pay"), { payload: { note: 1 }, payload_digest: named });
    await go(t, taskId, SECOND, noTool);
  });

  it("the events path: a side_effect.intent event whose payload does not match its digest is rejected", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = await taskOf(t);
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        type: "side_effect.intent",
        occurred_at: new Date().toISOString(),
        attrs: {
          name: FIRST,
          idempotency_key: newKey("pay"),
          tool: "CreatePayment",
          payload_digest: "sha256:abc",
          payload: CHARGE,
        },
      }),
    ]);
    expect(res.body.results[0]).toMatchObject({ status: "rejected" });
    expect(res.body.results[0]?.error?.message).toContain("payload_digest_mismatch");
  });
});
