/**
 * Rows that nothing signs (docs/decisions/0035-rows-a-database-writer-changes.md), on real PostgreSQL through the built
 * server. Each case writes to the database as its owner, as someone with write access but without the server's signing
 * key would, and checks that the server notices: a signed checkpoint copied to another version or tenant stops the gate
 * with `checkpoint_misplaced`; a side-effect row whose state is not what the server sealed stops the gate with
 * `evidence_mismatch` and replays no receipt; a cut-off audit log is reported at once.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  askGate,
  checkpoint,
  getTask,
  intentBody,
  newKey,
  postIntent,
  postReconcile,
  RECEIPT_AT,
} from "./support/custody-calls";
import { unknownEffect } from "./support/seeding";
import { signInAs } from "./support/people";
import { api, createTestTenant, makeEvent, newTaskId, postEvents, testDbForFile } from "./helpers";

const handle = testDbForFile();

type Verify = {
  valid: boolean;
  checked: number;
  message?: string;
  first_bad_entry?: { seq: number };
  truncated?: { recorded_seq: number; last_seq: number };
};

/** Copies the stored checkpoint `from` (every column the server signs or reads) over the row `to`. */
async function copyCheckpoint(
  from: { tenantId: string; taskId: string; version: number },
  to: { tenantId: string; taskId: string; version: number },
): Promise<void> {
  await handle.db.execute(sql`
    update task_checkpoints c
    set record = f.record, digest = f.digest, signature = f.signature, key_id = f.key_id, attempt = f.attempt,
        signature_format = f.signature_format, binding_signature = f.binding_signature
    from task_checkpoints f
    where f.tenant_id = ${from.tenantId} and f.task_id = ${from.taskId} and f.version = ${from.version}
      and c.tenant_id = ${to.tenantId} and c.task_id = ${to.taskId} and c.version = ${to.version}`);
}

/** The gate says stop with `code`, a mutation is refused with gate_stop, and the task view says the record fails. */
async function expectStopped(t: { apiKey: string }, taskId: string, code: string, attempt = 1): Promise<void> {
  const gate = await askGate(t.apiKey, taskId);
  expect(gate.status, gate.text).toBe(200);
  expect(gate.body.verdict).toBe("stop");
  expect(gate.body.reasons.map((r) => r.code)).toContain(code);
  const intent = await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey(), { attempt }));
  expect(intent.status, intent.text).toBe(409);
  expect((intent.body as unknown as { error: { code: string } }).error.code).toBe("gate_stop");
}

describe("rows a database writer changes", () => {
  it("checkpoint signatures cover the version: an older signed checkpoint copied over the newest stops the gate", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "reading" });
    await checkpoint(t, taskId, { phase: "writing" });
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");

    await copyCheckpoint({ ...t, taskId, version: 1 }, { ...t, taskId, version: 2 });
    await expectStopped(t, taskId, "checkpoint_misplaced");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons[0]!.message).toMatch(/Checkpoint v2 is signed, but not for this place/);
    // The copied row does not verify where it is, in the task view either.
    expect((await getTask(t.apiKey, taskId)).body.signature_valid).toBe(false);
  });

  it("checkpoint signatures cover the tenant: another tenant's signed checkpoint of the same task id stops the gate", async () => {
    const a = await createTestTenant(handle.db, { roles: ["owner"] });
    const b = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(a, taskId, { phase: "tenant_a_phase" });
    await checkpoint(b, taskId, { phase: "tenant_b_phase" });
    expect((await askGate(b.apiKey, taskId)).body.verdict).toBe("resume");

    await copyCheckpoint({ tenantId: a.tenantId, taskId, version: 1 }, { tenantId: b.tenantId, taskId, version: 1 });
    await expectStopped(b, taskId, "checkpoint_misplaced");
    expect((await askGate(b.apiKey, taskId)).body.next_phase).toBe("start");
  });

  it("checkpoint signatures cover the attempt: a record signed for attempt 1 copied over attempt 2's stops the gate", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "reading", attempt: 1 });
    await checkpoint(t, taskId, { phase: "reading", attempt: 2 });
    // The writer keeps the row's attempt column and version, and takes attempt 1's signed record and binding.
    await handle.db.execute(sql`
      update task_checkpoints c set record = f.record, digest = f.digest, signature = f.signature,
        binding_signature = f.binding_signature
      from task_checkpoints f
      where f.tenant_id = ${t.tenantId} and f.task_id = ${taskId} and f.version = 1
        and c.tenant_id = ${t.tenantId} and c.task_id = ${taskId} and c.version = 2`);
    await expectStopped(t, taskId, "checkpoint_misplaced", 2);
  });

  it("a format-1 signature (written before bindings) still verifies, but not above a format-2 row of its task", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const legacy = newTaskId();
    await checkpoint(t, legacy, { phase: "reading" });
    // A row as the server wrote it before signature format 2: the record's signature only.
    await handle.db.execute(sql`
      update task_checkpoints set signature_format = 1, binding_signature = null
      where tenant_id = ${t.tenantId} and task_id = ${legacy}`);
    const ok = await askGate(t.apiKey, legacy);
    expect(ok.body, ok.text).toMatchObject({ verdict: "resume", next_phase: "reading" });
    expect((await getTask(t.apiKey, legacy)).body.signature_valid).toBe(true);

    // Downgrading the newest row to format 1 with an older signed record does not slip past the binding.
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "reading" });
    await checkpoint(t, taskId, { phase: "writing" });
    await copyCheckpoint({ ...t, taskId, version: 1 }, { ...t, taskId, version: 2 });
    await handle.db.execute(sql`
      update task_checkpoints set signature_format = 1, binding_signature = null
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and version = 2`);
    await expectStopped(t, taskId, "checkpoint_misplaced");
  });

  it("deleting the newest checkpoint rows stops the gate: the latest row is not the version the server wrote last", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "reading" });
    await checkpoint(t, taskId, { phase: "writing" });
    await handle.db.execute(
      sql`delete from task_checkpoints where tenant_id = ${t.tenantId} and task_id = ${taskId} and version = 2`,
    );
    await expectStopped(t, taskId, "checkpoint_misplaced");
  });

  it("a side effect flipped from unknown to completed with a forged receipt stops the gate; the intent replays nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const { taskId, key, name } = await unknownEffect(handle.db, t);
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);

    const forged = { external_operation_id: "op-forged", result_digest: null, completed_at: RECEIPT_AT };
    await handle.db.execute(sql`
      update side_effects set status = 'completed', receipt = ${JSON.stringify(forged)}::jsonb, lease_expires_at = null
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);

    // The audit chain still verifies: it never held the row's state. The seal did.
    const owner = await signInAs(t, "owner");
    expect((await api(owner).get<Verify>("/api/v1/audit/verify")).body.valid).toBe(true);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["evidence_mismatch"]);
    expect(gate.body.reasons[0]!.target).toContain(`effect=${name}`);
    const replay = await postIntent(t.apiKey, taskId, name, intentBody(key));
    expect(replay.status, replay.text).toBe(409);
    expect(replay.text).not.toContain("op-forged");
    expect((replay.body as unknown as { error: { code: string } }).error.code).toBe("gate_stop");
  });

  it("the same move made by the server (a responder's reconcile) is sealed: the gate resumes and the intent replays it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId, key, name } = await unknownEffect(handle.db, t);
    const responder = await signInAs(t, "responder");
    const settled = await postReconcile(responder, taskId, name, {
      outcome: "completed",
      external_operation_id: "op-found-1",
      evidence: "Records system shows the update under this key.",
    });
    expect(settled.status, settled.text).toBe(200);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    const replay = await postIntent(t.apiKey, taskId, name, intentBody(key));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toMatchObject({ decision: "replay", receipt: { external_operation_id: "op-found-1" } });

    // Changing the sealed receipt afterwards is noticed too.
    await handle.db.execute(sql`
      update side_effects set receipt = jsonb_set(receipt, '{external_operation_id}', '"op-other"')
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`);
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toEqual(["evidence_mismatch"]);
    expect((await postIntent(t.apiKey, taskId, name, intentBody(key))).status).toBe(409);
  });

  it("an unknown effect flipped to not_started, or an effect awaiting approval flipped to approved, stops the gate", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const a = await unknownEffect(handle.db, t);
    await handle.db.execute(sql`
      update side_effects set status = 'not_started'
      where tenant_id = ${t.tenantId} and task_id = ${a.taskId} and name = ${a.name}`);
    const gate = await askGate(t.apiKey, a.taskId);
    expect(gate.body).toMatchObject({ verdict: "stop", permitted_side_effects: [] });
    expect(gate.body.reasons.map((r) => r.code)).toEqual(["evidence_mismatch"]);
    expect((await postIntent(t.apiKey, a.taskId, a.name, intentBody(a.key))).status).toBe(409);

    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, {
      side_effects: { publish: { idempotency_key: key, status: "awaiting_approval", payload_digest: "e".repeat(64) } },
    });
    await handle.db.execute(sql`
      update side_effects set status = 'approved' where tenant_id = ${t.tenantId} and task_id = ${taskId}`);
    await handle.db.execute(sql`
      update approval_requests set decision = 'approve', decided_by = 'forged', decided_at = now(),
        expires_at = now() + interval '1 day', action = 'records.update'
      where tenant_id = ${t.tenantId} and task_id = ${taskId}`);
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toContain("evidence_mismatch");
    const go = await postIntent(t.apiKey, taskId, "publish", intentBody(key));
    expect(go.status, go.text).toBe(409);
  });

  it("one batch of events that moves several effects of a task is not stopped by its own moves before they are sealed", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const keyA = newKey();
    const keyB = newKey();
    await checkpoint(t, taskId, { side_effects: { write_a: { idempotency_key: keyA, status: "not_started" } } });
    const base = Date.now() - 60_000;
    const ev = (id: string, type: string, attrs: Record<string, unknown>, ms: number) =>
      makeEvent(taskId, { id, plane: "tools", type, occurred_at: new Date(base + ms).toISOString(), attrs });
    const res = await postEvents(t.apiKey, [
      ev(`${taskId}:ia`, "side_effect.intent", { name: "write_a", idempotency_key: keyA }, 1),
      ev(
        `${taskId}:ra`,
        "side_effect.receipt",
        { name: "write_a", idempotency_key: keyA, external_operation_id: "op-a" },
        2,
      ),
      ev(`${taskId}:ib`, "side_effect.intent", { name: "write_b", idempotency_key: keyB }, 3),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r) => r.effect?.applied)).toEqual([true, true, true]);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).not.toContain("evidence_mismatch");
  });

  it("audit verification compares the chain's end with its recorded head: deleting the newest entries is reported at once", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await checkpoint(t, taskId, { phase: "two" });
    await checkpoint(t, taskId, { phase: "three" });
    const owner = await signInAs(t, "owner");
    const before = await api(owner).get<Verify>("/api/v1/audit/verify");
    expect(before.body, before.text).toMatchObject({ valid: true });
    const total = before.body.checked;
    expect(total).toBeGreaterThanOrEqual(3);

    // The writer deletes the two newest entries (the trigger that forbids it is the owner's to disable).
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`alter table audit_log disable trigger audit_log_no_update_delete`);
      await tx.execute(sql`delete from audit_log where tenant_id = ${t.tenantId} and seq > ${total - 2}`);
      await tx.execute(sql`alter table audit_log enable trigger audit_log_no_update_delete`);
    });

    const after = await api(owner).get<Verify>("/api/v1/audit/verify");
    expect(after.status, after.text).toBe(200);
    expect(after.body.valid).toBe(false);
    expect(after.body.checked).toBe(total - 2);
    expect(after.body.first_bad_entry?.seq).toBe(total - 1);
    expect(after.body.truncated).toMatchObject({ recorded_seq: total, last_seq: total - 2 });
    expect(after.body.message).toMatch(/2 entries were deleted from the end of the log/);
  });
});
