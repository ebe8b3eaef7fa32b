/**
 * Facts in the order they arrived, restores and attempts that cannot be abused (decision 0032), over the real HTTP API
 * on PostgreSQL. Each case names the rule it checks:
 * - every fact that decides the gate follows the server's receive order (within a batch, the batch's order), never the
 *   runtime's clock; a revocation is final for its credential id; a runtime clock found behind is shown as skew;
 * - `snapshot_stale`: a restore that is not the snapshot the checkpoint to resume from names;
 * - an attempt moves ahead by at most 10 (`attempt_too_far_ahead`, on the checkpoint route, the intent route and the
 *   events path), and an owner or responder fences a stuck task to a new attempt (`POST …/fence`, audited);
 * - `sandbox_not_fresh`: a new attempt in an earlier attempt's sandbox, until `sandbox.verified` for that attempt.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { EventInput, GateVerdict } from "@/lib/contract/api";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { COPY_MIN_EVENTS } from "@/lib/domain/events/ingest";
import {
  askGate,
  checkpoint,
  getTask,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
  receiptBody,
  sendEvents,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, postEvents, rid, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function verdict(apiKey: string, taskId: string, body: unknown = {}): Promise<GateVerdict> {
  const res = await askGate(apiKey, taskId, body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const codes = (v: GateVerdict) => v.reasons.map((r) => r.code);

/** A write with its own payload (one payload under two names is a duplicate, decision 0029). */
const writeBody = (over: Record<string, unknown> = {}) => {
  const key = newKey();
  return intentBody(key, { payload_digest: sha256Hex(key), ...over });
};

const vault = (taskId: string, type: string, attrs: Record<string, unknown>, over: Partial<EventInput> = {}) =>
  makeEvent(taskId, { plane: "vault", type, occurred_at: new Date().toISOString(), attrs, ...over });

describe("facts follow the order the server received them, never the runtime's clock", () => {
  it("a revocation in a later batch dated 30 s before the issue stops the gate and the intent route", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("order");
    await checkpoint(t, taskId);
    await sendEvents(t, [vault(taskId, "credential.issued", { credential_ref: "records-api", credential_id: "c1" })]);
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
    // The revocation arrives later but the runtime dates it 30 s before the issue.
    await sendEvents(t, [
      vault(
        taskId,
        "credential.revoked",
        { credential_ref: "records-api", credential_id: "c1" },
        { occurred_at: ago(30_000) },
      ),
    ]);
    const v = await verdict(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["credential_revoked"]);
    expectError(await postIntent(t.apiKey, taskId, "update_record", writeBody()), 409, "gate_stop");
  });

  it("within one batch the batch's order decides, whatever the event ids and dates", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("order-batch");
    await checkpoint(t, taskId);
    // Ids sort the other way round, and the revocation is dated first: only the batch's order says issue, then revoke.
    await sendEvents(t, [
      vault(taskId, "credential.issued", { credential_ref: "records-api", credential_id: "c1" }, { id: `zz-${rid()}` }),
      vault(
        taskId,
        "credential.revoked",
        { credential_ref: "records-api", credential_id: "c1" },
        { id: `aa-${rid()}`, occurred_at: ago(60_000) },
      ),
    ]);
    expect(codes(await verdict(t.apiKey, taskId))).toEqual(["credential_revoked"]);
  });

  it("a batch large enough to go through COPY keeps its order too", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("order-copy");
    await checkpoint(t, taskId);
    const filler = Array.from({ length: COPY_MIN_EVENTS }, () => makeEvent(taskId));
    await sendEvents(t, [
      ...filler,
      vault(taskId, "credential.issued", { credential_ref: "records-api", credential_id: "c1" }, { id: `zz-${rid()}` }),
      vault(
        taskId,
        "credential.revoked",
        { credential_ref: "records-api", credential_id: "c1" },
        { id: `aa-${rid()}`, occurred_at: ago(60_000) },
      ),
    ]);
    expect(codes(await verdict(t.apiKey, taskId))).toEqual(["credential_revoked"]);
  });

  it("custody moves follow the batch's order too: an interruption sent after a write started, dated before it, leaves the write unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("order-moves");
    await checkpoint(t, taskId);
    const key = newKey();
    await sendEvents(t, [
      makeEvent(taskId, {
        type: "side_effect.intent",
        attempt: 1,
        occurred_at: new Date().toISOString(),
        attrs: {
          name: "update_record",
          idempotency_key: key,
          action: "records.update",
          payload_digest: sha256Hex(key),
        },
      }),
      // Sent after the intent, dated 30 s before it: the write started, then the run was interrupted.
      makeEvent(taskId, { type: "run.interrupted", attempt: 1, occurred_at: ago(30_000) }),
    ]);
    expect((await getTask(t.apiKey, taskId)).body.side_effects.update_record?.status).toBe("unknown");
    // The runtime cannot complete it by its own receipt now: a person reconciles it.
    expectError(await postReceipt(t.apiKey, taskId, "update_record", receiptBody(key)), 409, "reconcile_required");
  });

  it("a write reported from an attempt that had ended when the server received it is unknown, until run.resumed reopens the attempt", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const intentOf = (taskId: string) =>
      makeEvent(taskId, {
        type: "side_effect.intent",
        attempt: 1,
        occurred_at: ago(60_000),
        attrs: { name: "update_record", idempotency_key: newKey(), payload_digest: sha256Hex(rid()) },
      });
    const ended = newTaskId("ended");
    await checkpoint(t, ended);
    await sendEvents(t, [
      makeEvent(ended, { type: "run.interrupted", attempt: 1, occurred_at: new Date().toISOString() }),
    ]);
    // Dated before the interruption, received after it.
    const res = await postEvents(t.apiKey, [intentOf(ended)]);
    expect(res.body.results[0]?.effect).toMatchObject({ applied: false, code: "unknown" });
    expect((await getTask(t.apiKey, ended)).body.side_effects.update_record?.status).toBe("unknown");

    const resumed = newTaskId("resumed");
    await checkpoint(t, resumed);
    await sendEvents(t, [
      makeEvent(resumed, { type: "run.interrupted", attempt: 1 }),
      makeEvent(resumed, { type: "run.resumed", attempt: 1 }),
    ]);
    await sendEvents(t, [intentOf(resumed)]);
    expect((await getTask(t.apiKey, resumed)).body.side_effects.update_record?.status).toBe("in_flight");
  });

  it("a revocation is final for its credential id: announcing its issue again does not clear it", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("final");
    await checkpoint(t, taskId);
    const c1 = { credential_ref: "records-api", credential_id: "c1" };
    await sendEvents(t, [vault(taskId, "credential.issued", c1)]);
    await sendEvents(t, [vault(taskId, "credential.revoked", c1)]);
    await sendEvents(t, [vault(taskId, "credential.issued", c1), vault(taskId, "credential.attached", c1)]);
    const v = await verdict(t.apiKey, taskId);
    expect(codes(v)).toEqual(["credential_revoked"]);
    expectError(await postIntent(t.apiKey, taskId, "update_record", writeBody()), 409, "gate_stop");
    // A fresh credential id is a fresh credential.
    await sendEvents(t, [vault(taskId, "credential.issued", { credential_ref: "records-api", credential_id: "c2" })]);
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("a runtime clock found behind is shown as clock skew, like one found ahead", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("behind");
    await checkpoint(t, taskId);
    const body = writeBody();
    expect((await postIntent(t.apiKey, taskId, "update_record", body)).body.decision).toBe("go");
    // The write completed, by the runtime's clock, three minutes before the server registered its intent.
    const res = await postReceipt(
      t.apiKey,
      taskId,
      "update_record",
      receiptBody(body.idempotency_key as string, { completed_at: ago(180_000) }),
    );
    expect(res.status, res.text).toBe(200);
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.clock_skew!.ms).toBeLessThan(-150_000);
    expect(view.clock_skew!.note).toContain("behind");
  });
});

describe("snapshot_stale: a restore must bring back the snapshot the checkpoint it resumes from names", () => {
  const saved = (taskId: string, id: string, digest: string) =>
    makeEvent(taskId, { type: "snapshot.saved", attempt: 1, attrs: { snapshot_id: id, digest } });
  const restored = (taskId: string, attempt: number, id: string, digest: string) =>
    makeEvent(taskId, { type: "snapshot.restored", attempt, attrs: { snapshot_id: id, digest } });

  it("restoring an older snapshot does not resume at the newer phase", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("stale");
    const [d1, d2] = [`sha256:${"1".repeat(64)}`, `sha256:${"2".repeat(64)}`];
    await sendEvents(t, [makeEvent(taskId, { type: "sandbox.created", attempt: 1, environment_id: "sbx-a" })]);
    await sendEvents(t, [saved(taskId, "snap-1", d1)]);
    await checkpoint(t, taskId, { phase: "reading" });
    await sendEvents(t, [saved(taskId, "snap-2", d2)]);
    await checkpoint(t, taskId, { phase: "writing" });
    // Attempt 2 restores the older snapshot.
    await sendEvents(t, [
      makeEvent(taskId, { type: "sandbox.created", attempt: 2, environment_id: "sbx-b" }),
      restored(taskId, 2, "snap-1", d1),
    ]);
    const v = await verdict(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["snapshot_stale"]);
    expect(v.next_phase).toBe("writing");
    expect(v.reasons[0]!.message).toContain("snap-2");
    expectError(await postIntent(t.apiKey, taskId, "update_record", writeBody({ attempt: 2 })), 409, "gate_stop");
    // A checkpoint from the state restored (naming its snapshot) is the way on.
    await checkpoint(t, taskId, { phase: "reading", attempt: 2, snapshot: { digest: d1, snapshot_id: "snap-1" } });
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("without a named snapshot, one saved since the checkpoint counts too; an older one is stale", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("since");
    const [d0, d1, d2] = [`sha256:${"5".repeat(64)}`, `sha256:${"6".repeat(64)}`, `sha256:${"7".repeat(64)}`];
    await sendEvents(t, [saved(taskId, "snap-0", d0)]);
    await sendEvents(t, [saved(taskId, "snap-1", d1)]);
    await checkpoint(t, taskId, { phase: "writing" });
    // This runtime snapshots right after it checkpoints.
    await sendEvents(t, [saved(taskId, "snap-2", d2)]);
    await sendEvents(t, [restored(taskId, 1, "snap-2", d2)]);
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
    await sendEvents(t, [restored(taskId, 1, "snap-0", d0)]);
    expect(codes(await verdict(t.apiKey, taskId))).toEqual(["snapshot_stale"]);
  });

  it("a checkpoint that names its snapshot is held to that one; restoring it resumes", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("named");
    const [d1, d2] = [`sha256:${"3".repeat(64)}`, `sha256:${"4".repeat(64)}`];
    await sendEvents(t, [saved(taskId, "snap-1", d1), saved(taskId, "snap-2", d2)]);
    await checkpoint(t, taskId, { phase: "writing", snapshot: { digest: d1, snapshot_id: "snap-1" } });
    await sendEvents(t, [restored(taskId, 1, "snap-2", d2)]);
    expect(codes(await verdict(t.apiKey, taskId))).toEqual(["snapshot_stale"]);

    const other = newTaskId("named-ok");
    await sendEvents(t, [saved(other, "snap-1", d1), saved(other, "snap-2", d2)]);
    await checkpoint(t, other, { phase: "writing", snapshot: { digest: d1, snapshot_id: "snap-1" } });
    await sendEvents(t, [restored(other, 1, "snap-1", d1)]);
    expect((await verdict(t.apiKey, other)).verdict).toBe("resume");
  });
});

describe("an attempt moves ahead by at most 10 (attempt_too_far_ahead)", () => {
  it("a checkpoint with attempt 1000000 is refused, naming the attempt, and does not lock the task", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("far");
    await checkpoint(t, taskId);
    const res = await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId, { attempt: 1_000_000 }));
    expectError(res, 422, "attempt_too_far_ahead");
    expect(res.text).toContain("1000000");
    expect(res.body).toMatchObject({ error: { details: { attempt: 1_000_000, current_attempt: 1, max_attempt: 11 } } });
    // The task is not locked: the next attempt checkpoints.
    await checkpoint(t, taskId, { attempt: 2 });
    expect((await getTask(t.apiKey, taskId)).body.current_attempt).toBe(2);
    // Ten ahead is allowed.
    await checkpoint(t, taskId, { attempt: 12 });
  });

  it("the intent route refuses an attempt too far ahead", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("far-intent");
    await checkpoint(t, taskId);
    const res = await postIntent(t.apiKey, taskId, "update_record", writeBody({ attempt: 1_000_000 }));
    expectError(res, 422, "attempt_too_far_ahead");
    expect((await getTask(t.apiKey, taskId)).body.current_attempt).toBe(1);
  });

  it("the events path rejects that event with the field path and stores the rest", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("far-events");
    await checkpoint(t, taskId);
    const far = makeEvent(taskId, { type: "sandbox.created", attempt: 1_000_000, environment_id: "sbx-far" });
    const near = makeEvent(taskId, { type: "sandbox.created", attempt: 2, environment_id: "sbx-near" });
    const res = await postEvents(t.apiKey, [far, near]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0]).toMatchObject({
      id: far.id,
      status: "rejected",
      error: { code: "attempt_too_far_ahead", path: "attempt" },
    });
    expect(res.body.results[1]).toMatchObject({ id: near.id, status: "stored" });
    expect((await getTask(t.apiKey, taskId)).body.current_attempt).toBe(2);
  });
});

describe("fencing a task to a new attempt (POST /api/v1/tasks/{id}/fence)", () => {
  it("a responder fences: older attempts end, their writes become unknown, the old sandbox may no longer write; audited", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("fence");
    await checkpoint(t, taskId);
    expect((await postIntent(t.apiKey, taskId, "update_record", writeBody())).body.decision).toBe("go");
    const responder = await signInAs(t, "responder");
    const res = await api(responder).post<{ previous_attempt: number; current_attempt: number; ended: string[] }>(
      `/api/v1/tasks/${enc(taskId)}/fence`,
      { reason: "sandbox hangs" },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ previous_attempt: 1, current_attempt: 2, ended: ["update_record"] });
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.current_attempt).toBe(2);
    expect(view.side_effects["update_record"]!.status).toBe("unknown");
    expectError(await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId)), 409, "stale_attempt");
    await checkpoint(t, taskId, { attempt: 2 });
    const audit = await queryRows<{ details: { previous_attempt: number; current_attempt: number; reason: string } }>(
      handle.db,
      sql`select details from audit_log where tenant_id = ${t.tenantId} and action = 'task.fenced' and target = ${`task:${taskId}`}`,
    );
    expect(audit.map((a) => a.details)).toEqual([
      expect.objectContaining({ previous_attempt: 1, current_attempt: 2, reason: "sandbox hangs" }),
    ]);
  });

  it("is the way out of a task locked at attempt 1000000 (as an earlier server let happen)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("fence-locked");
    await checkpoint(t, taskId);
    await handle.db.execute(
      sql`update tasks set current_attempt = 1000000 where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    const owner = await signInAs(t, "owner");
    const res = await api(owner).post<{ current_attempt: number }>(`/api/v1/tasks/${enc(taskId)}/fence`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.current_attempt).toBe(1_000_001);
    await checkpoint(t, taskId, { attempt: 1_000_001 });
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("refuses the wrong role, a runtime key and another tenant", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("fence-who");
    await checkpoint(t, taskId);
    const path = `/api/v1/tasks/${enc(taskId)}/fence`;
    for (const role of ["viewer", "approver"] as const)
      expectError(await api(await signInAs(t, role)).post(path, {}), 403, "forbidden");
    expectError(await api(t.apiKey).post(path, {}), 403, "forbidden");
    expectError(await api(await signInAs(other, "owner")).post(path, {}), 404, "not_found");
    expectError(await api(other.apiKey).post(path, {}), 403, "forbidden");
    expect((await getTask(t.apiKey, taskId)).body.current_attempt).toBe(1);
  });
});

describe("sandbox_not_fresh: a new attempt in an earlier attempt's sandbox", () => {
  it("stops until the runtime reports the sandbox verified again for this attempt", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("fresh");
    await sendEvents(t, [makeEvent(taskId, { type: "sandbox.created", attempt: 1, environment_id: "sbx-live" })]);
    await checkpoint(t, taskId);
    // Attempt 2 re-attaches the live container of attempt 1.
    await sendEvents(t, [makeEvent(taskId, { type: "sandbox.created", attempt: 2, environment_id: "sbx-live" })]);
    const v = await verdict(t.apiKey, taskId);
    expect(codes(v)).toEqual(["sandbox_not_fresh"]);
    expect(v.reasons[0]!.message).toContain("sbx-live");
    expectError(await postIntent(t.apiKey, taskId, "update_record", writeBody({ attempt: 2 })), 409, "gate_stop");
    // A verification for another attempt does not count; one for this attempt does.
    await sendEvents(t, [makeEvent(taskId, { type: "sandbox.verified", attempt: 1, environment_id: "sbx-live" })]);
    expect(codes(await verdict(t.apiKey, taskId))).toEqual(["sandbox_not_fresh"]);
    await sendEvents(t, [
      makeEvent(taskId, {
        type: "sandbox.verified",
        attempt: 2,
        environment_id: "sbx-live",
        attrs: { identity: "verified", grants: "verified" },
      }),
    ]);
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
    // A fresh sandbox for attempt 3 needs nothing.
    await sendEvents(t, [makeEvent(taskId, { type: "sandbox.created", attempt: 3, environment_id: "sbx-new" })]);
    expect((await verdict(t.apiKey, taskId)).verdict).toBe("resume");
  });
});
