/**
 * Evidence a database writer changes, beyond the rows decision 0035 sealed
 * (docs/decisions/0036-sealed-decisions-and-bounded-reads.md), on real PostgreSQL through the built server. Each case
 * writes to the database as its owner, as someone with write access but without the server's signing key would:
 * - an approval request's decision flipped from pending to approved, or an approval's bound digest or decider changed,
 *   stops the gate with `evidence_mismatch` and the intent route refuses with the same reason;
 * - a side effect forged `completed` (or `in_flight`) gets no receipt replayed or completed by the receipt route or by
 *   `side_effect.*` events;
 * - the checkpoint views (task view, checkpoint history, task page) run the gate's placement rules and say `misplaced`;
 * - the bound of pending approval requests per task holds under concurrent asks.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, GateReason } from "@/lib/contract/api";
import { LIMITS } from "@/lib/domain/limits";
import {
  askGate,
  checkpoint,
  getTask,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
  RECEIPT_AT,
  receiptBody,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { unknownEffect } from "./support/seeding";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile, type TestTenant } from "./helpers";

const handle = testDbForFile();

type ErrorWithReasons = ApiErrorBody & { error: { details: { reasons?: GateReason[]; approval_id?: string } } };

const needsApproval = (key: string, over: Record<string, unknown> = {}) =>
  intentBody(key, { requires_approval: true, action: "records.publish", ...over });

/** A task with one write asked for under `requires_approval`: the request is pending. */
async function pendingRequest(t: TestTenant): Promise<{ taskId: string; key: string; approvalId: string }> {
  const taskId = newTaskId("sealed");
  const key = newKey();
  await checkpoint(t, taskId, { side_effects: {} });
  const res = await postIntent(t.apiKey, taskId, "publish", needsApproval(key));
  expectError(res, 403, "approval_required");
  return { taskId, key, approvalId: (res.body as unknown as ErrorWithReasons).error.details.approval_id! };
}

/** The intent is refused as the gate answers: 409 gate_stop with an evidence_mismatch reason for the approval. */
function expectForgedApproval(res: { status: number; body: unknown; text: string }, approvalId: string): void {
  expectError(res, 409, "gate_stop");
  const reasons = (res.body as ErrorWithReasons).error.details.reasons ?? [];
  expect(reasons.map((r) => r.code)).toEqual(["evidence_mismatch"]);
  expect(reasons[0]!.target).toBe(`/approvals/${approvalId}`);
}

describe("approval decisions are sealed", () => {
  it("a pending request flipped to approved in the database stops the gate and lets no write go", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, key, approvalId } = await pendingRequest(t);
    await handle.db.execute(sql`
      update approval_requests set decision = 'approve', decided_by = 'forged@example.com', decided_at = now(),
        expires_at = now() + interval '1 day'
      where tenant_id = ${t.tenantId} and id = ${approvalId}::uuid`);

    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.verdict).toBe("stop");
    const forged = gate.body.reasons.filter((r) => r.code === "evidence_mismatch");
    expect(forged).toHaveLength(1);
    expect(forged[0]!.target).toBe(`/approvals/${approvalId}`);
    expectForgedApproval(await postIntent(t.apiKey, taskId, "publish", needsApproval(key)), approvalId);
    // Nothing went: the approval is unused and the effect still waits.
    const [row] = await queryRows<{ consumed_at: string | null; status: string }>(
      handle.db,
      sql`select a.consumed_at, s.status from approval_requests a join side_effects s
            on s.tenant_id = a.tenant_id and s.task_id = a.task_id and s.name = a.side_effect
          where a.tenant_id = ${t.tenantId} and a.id = ${approvalId}::uuid`,
    );
    expect(row).toEqual({ consumed_at: null, status: "awaiting_approval" });
  });

  it("an approver's decision is sealed and lets the write go; its bound digest or decider changed afterwards does not", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const approver = await signInAs(t, "approver");
    const approve = async (id: string) => {
      const res = await api(approver).post(`/api/v1/approvals/${id}/decision`, { decision: "approve" });
      expect(res.status, res.text).toBe(200);
    };

    // Untouched: the gate has nothing to say about it and the write goes.
    const ok = await pendingRequest(t);
    await approve(ok.approvalId);
    const okGate = await askGate(t.apiKey, ok.taskId);
    expect(okGate.body.reasons.map((r) => r.code)).not.toContain("evidence_mismatch");
    const go = await postIntent(t.apiKey, ok.taskId, "publish", needsApproval(ok.key));
    expect(go.status, go.text).toBe(200);
    expect(go.body.decision).toBe("go");

    // The bound digest changed to the payload the writer wants sent.
    const digest = await pendingRequest(t);
    await approve(digest.approvalId);
    const other = "a".repeat(64);
    await handle.db.execute(sql`
      update approval_requests set payload_digest = ${other}
      where tenant_id = ${t.tenantId} and id = ${digest.approvalId}::uuid`);
    expect((await askGate(t.apiKey, digest.taskId)).body.reasons.map((r) => r.code)).toContain("evidence_mismatch");
    expectForgedApproval(
      await postIntent(t.apiKey, digest.taskId, "publish", needsApproval(digest.key, { payload_digest: other })),
      digest.approvalId,
    );

    // The decider (or the expiry) rewritten.
    const decider = await pendingRequest(t);
    await approve(decider.approvalId);
    await handle.db.execute(sql`
      update approval_requests set decided_by = 'someone-else@example.com', expires_at = now() + interval '30 days'
      where tenant_id = ${t.tenantId} and id = ${decider.approvalId}::uuid`);
    expectForgedApproval(
      await postIntent(t.apiKey, decider.taskId, "publish", needsApproval(decider.key)),
      decider.approvalId,
    );
  });

  it("a reported write under a forged approval (side_effect.intent event) is refused with evidence_mismatch", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const { taskId, key, approvalId } = await pendingRequest(t);
    await handle.db.execute(sql`
      update approval_requests set decision = 'approve', decided_by = 'forged@example.com', decided_at = now(),
        expires_at = now() + interval '1 day'
      where tenant_id = ${t.tenantId} and id = ${approvalId}::uuid`);
    await handle.db.execute(sql`
      update side_effects set status = 'approved', seal = 'legacy'
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = 'publish'`);
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attrs: { name: "publish", idempotency_key: key, payload_digest: "e".repeat(64), action: "records.publish" },
      }),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0]!.effect).toMatchObject({ applied: false });
    const [used] = await queryRows<{ consumed_at: string | null }>(
      handle.db,
      sql`select consumed_at from approval_requests where tenant_id = ${t.tenantId} and id = ${approvalId}::uuid`,
    );
    expect(used!.consumed_at).toBeNull();
  });
});

describe("a forged side-effect row gets no receipt replayed or completed", () => {
  const forgedReceipt = { external_operation_id: "op-forged", result_digest: null, completed_at: RECEIPT_AT };

  it("the receipt route does not replay a receipt forged onto a completed row", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const { taskId, key, name } = await unknownEffect(handle.db, t);
    await handle.db.execute(sql`
      update side_effects set status = 'completed', receipt = ${JSON.stringify(forgedReceipt)}::jsonb, lease_expires_at = null
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);
    const replay = await postReceipt(
      t.apiKey,
      taskId,
      name,
      receiptBody(key, { external_operation_id: "op-forged", result_digest: null }),
    );
    expectError(replay, 409, "gate_stop");
    expect(replay.text).not.toContain('"replayed"');
    const reasons = (replay.body as unknown as ErrorWithReasons).error.details.reasons ?? [];
    expect(reasons.map((r) => r.code)).toEqual(["evidence_mismatch"]);
    expect(reasons[0]!.target).toContain(`effect=${name}`);
  });

  it("the receipt route does not complete (and so seal) a row forged in flight", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const { taskId, key, name } = await unknownEffect(handle.db, t);
    await handle.db.execute(sql`
      update side_effects set status = 'in_flight', lease_expires_at = now() + interval '1 hour'
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);
    const res = await postReceipt(t.apiKey, taskId, name, receiptBody(key));
    expectError(res, 409, "gate_stop");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).toContain("evidence_mismatch");
    const [row] = await queryRows<{ status: string }>(
      handle.db,
      sql`select status from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`,
    );
    expect(row!.status).toBe("in_flight");
  });

  it("side_effect.receipt and side_effect.intent events reaching a forged row are refused with evidence_mismatch", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const { taskId, key, name } = await unknownEffect(handle.db, t);
    await handle.db.execute(sql`
      update side_effects set status = 'completed', receipt = ${JSON.stringify(forgedReceipt)}::jsonb, lease_expires_at = null
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);
    const at = new Date(Date.now() + 5_000).toISOString();
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        occurred_at: at,
        attrs: { name, idempotency_key: key, external_operation_id: "op-forged", completed_at: RECEIPT_AT },
      }),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0]!.effect).toMatchObject({ applied: false, code: "evidence_mismatch" });

    // The same row forged back to not_started: a reported write from it is not applied either.
    await handle.db.execute(sql`
      update side_effects set status = 'not_started', receipt = null
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);
    const intent = await postEvents(t.apiKey, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: at,
        attrs: { name, idempotency_key: key },
      }),
    ]);
    expect(intent.status, intent.text).toBe(200);
    expect(intent.body.results[0]!.effect).toMatchObject({ applied: false, code: "evidence_mismatch" });
  });
});

describe("the checkpoint views run the gate's placement rules", () => {
  type History = { checkpoints: Array<{ version: number; signature_valid: boolean; signature_check: string }> };

  async function expectMisplacedViews(t: TestTenant, taskId: string, newest: number): Promise<void> {
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).toContain("checkpoint_misplaced");
    const view = await getTask(t.apiKey, taskId);
    expect(view.status, view.text).toBe(200);
    expect(view.body).toMatchObject({ version: newest, signature_valid: false, signature_check: "misplaced" });
    const history = await api(t.apiKey).get<History>(`/api/v1/tasks/${encodeURIComponent(taskId)}/checkpoints`);
    expect(history.status, history.text).toBe(200);
    expect(history.body.checkpoints[0]).toMatchObject({
      version: newest,
      signature_valid: false,
      signature_check: "misplaced",
    });
    const owner = await signInAs(t, "owner");
    const page = await api(owner).get(`/tasks/${encodeURIComponent(taskId)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("signature misplaced");
  }

  it("the newest row deleted: the row left on top verifies by itself but is not the version the server wrote last", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("placed");
    await checkpoint(t, taskId, { phase: "reading" });
    await checkpoint(t, taskId, { phase: "writing" });
    expect((await getTask(t.apiKey, taskId)).body).toMatchObject({ signature_valid: true, signature_check: "valid" });
    await handle.db.execute(
      sql`delete from task_checkpoints where tenant_id = ${t.tenantId} and task_id = ${taskId} and version = 2`,
    );
    await expectMisplacedViews(t, taskId, 1);
  });

  it("an older record copied over the newest as a format-1 row: it verifies alone, but not above a format-2 row", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("placed");
    await checkpoint(t, taskId, { phase: "reading" });
    await checkpoint(t, taskId, { phase: "writing" });
    await handle.db.execute(sql`
      update task_checkpoints c
      set record = f.record, digest = f.digest, signature = f.signature, key_id = f.key_id, attempt = f.attempt,
          signature_format = 1, binding_signature = null
      from task_checkpoints f
      where f.tenant_id = ${t.tenantId} and f.task_id = ${taskId} and f.version = 1
        and c.tenant_id = ${t.tenantId} and c.task_id = ${taskId} and c.version = 2`);
    await expectMisplacedViews(t, taskId, 2);
    // The row below still verifies in its place.
    const history = await api(t.apiKey).get<History>(`/api/v1/tasks/${encodeURIComponent(taskId)}/checkpoints`);
    expect(history.body.checkpoints[1]).toMatchObject({ version: 1, signature_valid: true, signature_check: "valid" });
  });
});

describe("the pending approval bound under concurrency", () => {
  it(`${20} asks racing at ${LIMITS.pendingApprovals.max - 1} pending: exactly one is admitted, the task holds the limit`, async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("racing-approvals");
    await checkpoint(t, taskId, { side_effects: {} });
    const max = LIMITS.pendingApprovals.max;
    for (let i = 0; i < max - 1; i += 1) {
      const res = await postIntent(t.apiKey, taskId, `write-${i}`, needsApproval(`key-pending-${i}`));
      expectError(res, 403, "approval_required");
    }
    const racing = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postIntent(t.apiKey, taskId, `race-${i}`, needsApproval(`key-race-${i}`))),
    );
    const codes = racing.map((r) => (r.body as unknown as ApiErrorBody).error?.code);
    expect(codes.filter((c) => c === "approval_required")).toHaveLength(1);
    expect(codes.filter((c) => c === "too_many_pending_approvals")).toHaveLength(19);
    const [stored] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from approval_requests
          where tenant_id = ${t.tenantId} and task_id = ${taskId} and decision is null`,
    );
    expect(stored!.n).toBe(max);
  }, 120_000);
});
