/**
 * The resume gate over real stored facts (docs/concepts.md#resume-gate,
 * #gate-reason-codes): each reason is reached through the HTTP API (events, checkpoints, intents, settings) or, for an
 * altered record, by tampering with the stored row — never by calling the pure function. Also: replay while
 * another holder's lease is live, replay without a checkpoint, several reasons in the documented order,
 * tenancy, who may ask, and bad bodies.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ApiErrorBody, CheckpointSummary, EventInput, GateVerdict, TaskRecord } from "@/lib/contract/api";
import {
  api,
  baseUrl,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  type TestTenant,
  testDbForFile,
} from "./helpers";
import {
  askGate,
  checkpoint,
  createTaskByEvent,
  getTask,
  hex,
  intentBody,
  newKey,
  postIntent,
  sendEvents,
} from "./support/custody-calls";
import { signInAs } from "./support/people";
import { custodySnapshot } from "./support/stored-rows";

const handle = testDbForFile();

const PRINCIPAL = "tenant/acme:user/42";
/** Reporting order of the blocking codes these tests reach (docs/concepts.md#gate-reason-codes). */
const ORDER = [
  "record_signature_invalid",
  "principal_revoked",
  "side_effect_unknown",
  "snapshot_unverified",
  "credential_revoked",
  "credential_expired",
  "tool_definition_changed",
];

/** Event times: strictly increasing, starting a little after now (so they come after any checkpoint). */
function clock(startOffsetMs = 1_000) {
  let t = Date.now() + startOffsetMs;
  return () => new Date((t += 10)).toISOString();
}

function ev(
  taskId: string,
  plane: EventInput["plane"],
  type: string,
  at: string,
  attrs: Record<string, unknown>,
  attempt?: number,
): EventInput {
  return makeEvent(taskId, { plane, type, occurred_at: at, attrs, ...(attempt !== undefined ? { attempt } : {}) });
}

async function gate(auth: Parameters<typeof askGate>[0], taskId: string, body: unknown = {}): Promise<GateVerdict> {
  const res = await askGate(auth, taskId, body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const codes = (v: GateVerdict) => v.reasons.map((r) => r.code);

/** A tenant (owner and viewer) and a checkpointed task with no blocking facts. */
async function cleanTask(over: Partial<TaskRecord> = {}): Promise<{ t: TestTenant; taskId: string }> {
  const t = await createTestTenant(handle.db, { roles: ["owner", "viewer", "approver", "responder"] });
  const taskId = newTaskId("gate");
  await checkpoint(t, taskId, { principal: PRINCIPAL, phase: "record_updated", ...over });
  return { t, taskId };
}

/** Puts an effect in `unknown`: intent, then run.interrupted. */
async function makeUnknown(t: TestTenant, taskId: string, name: string): Promise<void> {
  const go = await postIntent(t.apiKey, taskId, name, intentBody(newKey()));
  expect(go.body.decision, go.text).toBe("go");
  await sendEvents(t, [
    ev(taskId, "session", "run.interrupted", new Date(Date.now() + 500).toISOString(), { reason: "test" }),
  ]);
}

/** Alters the stored latest checkpoint directly in the database (the record's phase). */
async function tamperLatestCheckpoint(t: TestTenant, taskId: string): Promise<void> {
  await handle.db.execute(sql`
    update task_checkpoints set record = jsonb_set(record, '{phase}', '"tampered"'::jsonb)
    where tenant_id = ${t.tenantId} and task_id = ${taskId}
      and version = (select max(version) from task_checkpoints where tenant_id = ${t.tenantId} and task_id = ${taskId})`);
}

describe("resume gate: clean facts", () => {
  it("resumes a clean checkpointed task and lists the effects that may start", async () => {
    const { t, taskId } = await cleanTask({
      side_effects: {
        b_send: { idempotency_key: newKey(), status: "not_started" },
        a_publish: { idempotency_key: newKey(), status: "failed" },
        c_done: {
          idempotency_key: newKey(),
          status: "completed",
          receipt: { external_operation_id: "op-1", completed_at: "2025-07-01T09:00:00Z" },
        },
      },
    });
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const v = await gate(t.apiKey, taskId);
    expect(v).toEqual({
      verdict: "resume",
      reasons: [],
      next_phase: "record_updated",
      permitted_side_effects: ["a_publish", "b_send"],
    });
    // asking writes nothing
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("answers replay with no_checkpoint for a task known only from events", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("nockpt");
    await createTaskByEvent(t, taskId);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("replay");
    expect(codes(v)).toEqual(["no_checkpoint"]);
    expect(v.next_phase).toBe("start");
    expect(v.permitted_side_effects).toEqual([]);
  });

  it("answers replay to a newer attempt while an older attempt's lease is live, and resume after its receipt", async () => {
    const { t, taskId } = await cleanTask();
    const key = newKey();
    const go = await postIntent(t.apiKey, taskId, "update_record", intentBody(key));
    expect(go.body.decision).toBe("go");
    // the attempt that holds the lease may keep writing side by side
    expect((await gate(t.apiKey, taskId, { attempt: 1 })).verdict).toBe("resume");
    const v = await gate(t.apiKey, taskId, { attempt: 2 });
    expect(v.verdict).toBe("replay");
    expect(codes(v)).toEqual(["side_effect_in_flight"]);
    expect(v.reasons[0]!.target).toContain("update_record");
    expect(v.reasons[0]!.message).toContain("attempt 1");
    expect(v.permitted_side_effects).toEqual([]);
    const receipt = await api(t.apiKey).post(`/api/v1/tasks/${taskId}/side-effects/update_record/receipt`, {
      idempotency_key: key,
      external_operation_id: "op-9",
      completed_at: new Date().toISOString(),
      attempt: 1,
    });
    expect(receipt.status, receipt.text).toBe(200);
    expect((await gate(t.apiKey, taskId, { attempt: 2 })).verdict).toBe("resume");
  });
});

describe("resume gate: each blocking reason", () => {
  it("side_effect_unknown: an intent followed by run.interrupted", async () => {
    const { t, taskId } = await cleanTask();
    await makeUnknown(t, taskId, "update_record");
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["side_effect_unknown"]);
    expect(v.reasons[0]!.message).toContain("update_record");
    expect(v.reasons[0]!.target).toBe(`/tasks/${taskId}?tab=side-effects&effect=update_record`);
    expect(v.permitted_side_effects).toEqual([]);
  });

  it("side_effect_unknown: an intent followed by a new sandbox (higher attempt)", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    await sendEvents(t, [ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-1" }, 1)]);
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()))).body.decision).toBe("go");
    await sendEvents(t, [ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-2" }, 2)]);
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["side_effect_unknown"]);
  });

  it("principal_revoked: an owner revokes the principal; restoring it lets the task resume", async () => {
    const { t, taskId } = await cleanTask();
    const owner = await signInAs(t, "owner");
    const responder = await signInAs(t, "responder");
    const denied = await api(responder).post("/api/v1/settings/principals/revoke", {
      principal: PRINCIPAL,
      reason: "left the company",
    });
    expect(denied.status).toBe(403);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");

    // another principal's revocation does not touch this task
    const other = await api(owner).post("/api/v1/settings/principals/revoke", {
      principal: "tenant/acme:user/99",
      reason: "offboarded",
    });
    expect(other.status, other.text).toBe(200);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");

    const revoked = await api(owner).post("/api/v1/settings/principals/revoke", {
      principal: PRINCIPAL,
      reason: "left the company",
    });
    expect(revoked.status, revoked.text).toBe(200);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["principal_revoked"]);
    expect(v.reasons[0]!.message).toContain(PRINCIPAL);
    expect(v.reasons[0]!.message).toContain("left the company");
    expect(v.reasons[0]!.target).toBe("/settings/members#principals");

    const twice = await api(owner).post("/api/v1/settings/principals/revoke", {
      principal: PRINCIPAL,
      reason: "again",
    });
    expect(twice.status).toBe(409);
    const restored = await api(owner).post("/api/v1/settings/principals/restore", { principal: PRINCIPAL });
    expect(restored.status, restored.text).toBe(200);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("principal_revoked: a revocation in another tenant changes nothing here", async () => {
    const { t, taskId } = await cleanTask();
    const otherTenant = await createTestTenant(handle.db, { roles: ["owner"] });
    const res = await api(await signInAs(otherTenant, "owner")).post("/api/v1/settings/principals/revoke", {
      principal: PRINCIPAL,
      reason: "their decision",
    });
    expect(res.status).toBe(200);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("snapshot_unverified: a restore whose digest matches no saved snapshot; a matching restore is fine", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    const a = hex("a");
    await sendEvents(t, [
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-1" }, 1),
      ev(taskId, "environment", "snapshot.saved", now(), { digest: a, snapshot_ref: "snap-a" }, 1),
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-2" }, 2),
    ]);
    const b = hex("b");
    await sendEvents(t, [
      ev(taskId, "environment", "snapshot.restored", now(), { digest: b, snapshot_id: "snap-a" }, 2),
    ]);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["snapshot_unverified"]);
    expect(v.reasons[0]!.message).toContain(b);

    // a later attempt that restores the saved digest: the earlier bad restore no longer counts
    await sendEvents(t, [
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-3" }, 3),
      ev(taskId, "environment", "snapshot.restored", now(), { digest: a, snapshot_id: "snap-a" }, 3),
    ]);
    expect(await gate(t.apiKey, taskId)).toMatchObject({ verdict: "resume", reasons: [] });
  });

  it("snapshot_unverified: a restore with no digest at all", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    await sendEvents(t, [
      ev(taskId, "environment", "snapshot.saved", now(), { digest: hex("a") }, 1),
      ev(taskId, "environment", "sandbox.created", now(), {}, 2),
      ev(taskId, "environment", "snapshot.restored", now(), { snapshot_id: "snap-x" }, 2),
    ]);
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["snapshot_unverified"]);
  });

  it("snapshot_unverified: among many saved snapshots only a saved digest string verifies a restore", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    // A long run's saves (the gate's facts statement no longer ships them; it looks up the restored digests).
    const saved = (i: number) => `sha256:${i.toString(16).padStart(64, "0")}`;
    await sendEvents(t, [
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-1" }, 1),
      ...Array.from({ length: 300 }, (_, i) =>
        ev(taskId, "environment", "snapshot.saved", now(), { digest: saved(i) }, 1),
      ),
    ]);
    // A digest is text: a number is refused where it enters (attrs.digest), so its text verifies nothing.
    const numeric = await postEvents(t.apiKey, [
      ev(taskId, "environment", "snapshot.saved", now(), { digest: 12345 }, 1),
    ]);
    expect(numeric.body.results[0]).toMatchObject({ status: "rejected", error: { path: "attrs.digest" } });
    await sendEvents(t, [
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-2" }, 2),
      ev(taskId, "environment", "snapshot.restored", now(), { digest: "12345", snapshot_id: "snap-n" }, 2),
    ]);
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["snapshot_unverified"]);
    // An early save verifies a restore as well as the latest does.
    await sendEvents(t, [
      ev(taskId, "environment", "sandbox.created", now(), { environment_id: "sbx-3" }, 3),
      ev(taskId, "environment", "snapshot.restored", now(), { digest: saved(3), snapshot_id: "snap-3" }, 3),
    ]);
    expect(await gate(t.apiKey, taskId)).toMatchObject({ verdict: "resume", reasons: [] });
  });

  it("credential_revoked: issued then revoked blocks; a fresh credential for the same ref unblocks", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "cred-1",
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    ]);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
    await sendEvents(t, [
      ev(taskId, "vault", "credential.revoked", now(), {
        credential_ref: "records-api",
        credential_id: "cred-1",
        reason: "leaked",
      }),
    ]);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["credential_revoked"]);
    expect(v.reasons[0]!.message).toContain("records-api");
    expect(v.reasons[0]!.target).toBe(`/tasks/${taskId}?plane=vault`);

    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "cred-2",
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    ]);
    expect(await gate(t.apiKey, taskId)).toMatchObject({ verdict: "resume", reasons: [] });

    // a late revocation of the OLD instance does not block the fresh one
    await sendEvents(t, [
      ev(taskId, "vault", "credential.revoked", now(), { credential_ref: "records-api", credential_id: "cred-1" }),
    ]);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("credential_revoked: a revocation reported by credential_id only is cleared by a fresh credential for the same ref", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "cred-1",
        expires_at: "2099-01-01T00:00:00Z",
      }),
      ev(taskId, "vault", "credential.revoked", now(), { credential_id: "cred-1", reason: "rotated by the vault" }),
    ]);
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["credential_revoked"]);
    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "cred-2",
        expires_at: "2099-01-01T00:00:00Z",
      }),
    ]);
    expect(await gate(t.apiKey, taskId)).toMatchObject({ verdict: "resume", reasons: [] });
  });

  it("credential_expired: an issued credential whose expires_at has passed, and a credential.expired event", async () => {
    const { t, taskId } = await cleanTask();
    const now = clock();
    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "cred-old",
        expires_at: "2020-01-01T00:00:00Z",
      }),
    ]);
    let v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["credential_expired"]);
    expect(v.reasons[0]!.message).toContain("2020-01-01");

    const second = await cleanTask();
    const now2 = clock();
    await sendEvents(second.t, [
      ev(second.taskId, "vault", "credential.issued", now2(), {
        credential_ref: "mail-api",
        credential_id: "cred-m",
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    ]);
    expect((await gate(second.t.apiKey, second.taskId)).verdict).toBe("resume");
    await sendEvents(second.t, [
      ev(second.taskId, "vault", "credential.expired", now2(), { credential_ref: "mail-api", credential_id: "cred-m" }),
    ]);
    v = await gate(second.t.apiKey, second.taskId);
    expect(codes(v)).toEqual(["credential_expired"]);
    expect(v.reasons[0]!.message).toContain("mail-api");
  });

  it("tool_definition_changed: the resume body names another digest than the last checkpoint", async () => {
    const { t, taskId } = await cleanTask({ tool_definitions: { read_document: hex("1"), update_record: hex("2") } });
    expect(
      (await gate(t.apiKey, taskId, { tool_definitions: { read_document: hex("1"), update_record: hex("2") } }))
        .verdict,
    ).toBe("resume");
    // a tool the checkpoint did not know is not a change
    expect((await gate(t.apiKey, taskId, { tool_definitions: { brand_new: hex("5") } })).verdict).toBe("resume");
    const v = await gate(t.apiKey, taskId, { tool_definitions: { read_document: hex("1"), update_record: hex("3") } });
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["tool_definition_changed"]);
    expect(v.reasons[0]!.message).toContain("update_record");
    expect(v.reasons[0]!.target).toBe(
      `/tasks/${taskId}?tab=checkpoints&tool=update_record&definition_digest=${hex("3")}`,
    );
  });

  it("tool_definition_changed: a tool.definition_changed event received after the checkpoint; a new checkpoint with the new digest does not clear it, a person's acceptance does (decision 0033)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["approver"] });
    const taskId = newTaskId("gate");
    // a change the server received BEFORE the checkpoint is already part of it, however the runtime dates it
    await sendEvents(t, [
      ev(taskId, "tools", "tool.definition_changed", new Date(Date.now() + 60_000).toISOString(), {
        tool: "update_record",
        definition_digest: hex("7"),
      }),
    ]);
    await checkpoint(t, taskId, { principal: PRINCIPAL, tool_definitions: { update_record: hex("2") } });
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");

    // one received after it counts, even dated long before it (the runtime's clock does not decide)
    await sendEvents(t, [
      ev(taskId, "tools", "tool.definition_changed", "2024-01-01T00:00:00.000Z", {
        tool: "update_record",
        definition_digest: hex("8"),
      }),
    ]);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["tool_definition_changed"]);

    await checkpoint(t, taskId, { principal: PRINCIPAL, tool_definitions: { update_record: hex("8") } });
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["tool_definition_changed"]);
    const approver = await signInAs(t, "approver");
    const accepted = await api(approver).post(`/api/v1/tasks/${taskId}/tool-definitions/update_record/accept`, {
      definition_digest: hex("8"),
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("record_signature_invalid: a stored checkpoint altered in the database", async () => {
    const { t, taskId } = await cleanTask();
    expect((await getTask(t.apiKey, taskId)).body.signature_valid).toBe(true);
    // The gate has verified (and remembered) the stored row before it is altered: the altered row must be read afresh.
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
    await tamperLatestCheckpoint(t, taskId);
    const view = await getTask(t.apiKey, taskId);
    expect(view.body.signature_valid).toBe(false);
    const history = await api(t.apiKey).get<{ checkpoints: CheckpointSummary[] }>(
      `/api/v1/tasks/${taskId}/checkpoints`,
    );
    expect(history.body.checkpoints[0]!.signature_valid).toBe(false);
    const v = await gate(t.apiKey, taskId);
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["record_signature_invalid"]);
    expect(v.reasons[0]!.target).toBe(`/tasks/${taskId}?tab=checkpoints`);
    expect(v.permitted_side_effects).toEqual([]);

    // a new, honestly signed checkpoint is the way out
    await checkpoint(t, taskId, { principal: PRINCIPAL });
    expect((await gate(t.apiKey, taskId)).verdict).toBe("resume");
  });

  it("record_signature_invalid: a stored signature replaced by another", async () => {
    const { t, taskId } = await cleanTask();
    await handle.db.execute(sql`
      update task_checkpoints set signature = ${"A".repeat(86)} where tenant_id = ${t.tenantId} and task_id = ${taskId}`);
    expect((await getTask(t.apiKey, taskId)).body.signature_valid).toBe(false);
    expect(codes(await gate(t.apiKey, taskId))).toEqual(["record_signature_invalid"]);
  });
});

describe("resume gate: several reasons", () => {
  it("lists every blocking reason, in the documented order, with effects ordered by target", async () => {
    const { t, taskId } = await cleanTask({
      tool_definitions: { update_record: hex("2") },
      side_effects: { z_other: { idempotency_key: newKey(), status: "not_started" } },
    });
    const owner = await signInAs(t, "owner");
    const now = clock();
    // two unknown effects, named so that creation order and name order differ (both in flight before the interruption:
    // once one is unknown the gate stops every new write)
    for (const [i, name] of ["b_update", "a_email"].entries())
      expect(
        (await postIntent(t.apiKey, taskId, name, intentBody(newKey(), { payload_digest: hex(String(i)) }))).body
          .decision,
      ).toBe("go");
    await sendEvents(t, [
      ev(taskId, "session", "run.interrupted", new Date(Date.now() + 500).toISOString(), { reason: "test" }),
    ]);
    // a second checkpoint, so the altered one below is not the only one (the gate compares tools with the last that verifies)
    await checkpoint(t, taskId, {
      principal: PRINCIPAL,
      phase: "record_updated",
      tool_definitions: { update_record: hex("2") },
    });
    await sendEvents(t, [
      ev(taskId, "environment", "snapshot.saved", now(), { digest: hex("a") }, 1),
      ev(taskId, "environment", "sandbox.created", now(), {}, 7),
      ev(taskId, "environment", "snapshot.restored", now(), { digest: hex("b") }, 7),
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "records-api",
        credential_id: "c1",
        expires_at: "2099-01-01T00:00:00Z",
      }),
      ev(taskId, "vault", "credential.revoked", now(), { credential_ref: "records-api", credential_id: "c1" }),
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "mail-api",
        credential_id: "m1",
        expires_at: "2020-01-01T00:00:00Z",
      }),
    ]);
    expect(
      (await api(owner).post("/api/v1/settings/principals/revoke", { principal: PRINCIPAL, reason: "offboarded" }))
        .status,
    ).toBe(200);
    await tamperLatestCheckpoint(t, taskId);

    const v = await gate(t.apiKey, taskId, { tool_definitions: { update_record: hex("3") } });
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual([
      "record_signature_invalid",
      "principal_revoked",
      "side_effect_unknown",
      "side_effect_unknown",
      "snapshot_unverified",
      "credential_revoked",
      "credential_expired",
      "tool_definition_changed",
    ]);
    expect([...new Set(codes(v))]).toEqual(ORDER);
    const unknown = v.reasons.filter((r) => r.code === "side_effect_unknown");
    expect(unknown.map((r) => r.target)).toEqual([
      `/tasks/${taskId}?tab=side-effects&effect=a_email`,
      `/tasks/${taskId}?tab=side-effects&effect=b_update`,
    ]);
    for (const r of v.reasons) {
      expect(r.message.length).toBeGreaterThan(20);
      expect(r.target.startsWith("/")).toBe(true);
    }
    expect(v.permitted_side_effects).toEqual([]);
    // the same facts give the same answer
    expect(await gate(t.apiKey, taskId, { tool_definitions: { update_record: hex("3") } })).toEqual(v);
  });

  it("a blocking reason wins over a replay reason (stop, not replay) and lists only blocking reasons", async () => {
    const { t, taskId } = await cleanTask();
    expect((await postIntent(t.apiKey, taskId, "live_one", intentBody(newKey()))).body.decision).toBe("go");
    expect((await gate(t.apiKey, taskId, { attempt: 2 })).verdict).toBe("replay");
    const now = clock();
    await sendEvents(t, [
      ev(taskId, "vault", "credential.issued", now(), {
        credential_ref: "r",
        credential_id: "c",
        expires_at: "2020-01-01T00:00:00Z",
      }),
    ]);
    const v = await gate(t.apiKey, taskId, { attempt: 2 });
    expect(v.verdict).toBe("stop");
    expect(codes(v)).toEqual(["credential_expired"]);
  });
});

describe("resume gate: access and input", () => {
  it("answers 404 for another tenant's task and for an unknown task", async () => {
    const { taskId } = await cleanTask();
    const stranger = await createTestTenant(handle.db, { roles: ["viewer"] });
    const res = await askGate(stranger.apiKey, taskId);
    expect(res.status).toBe(404);
    expect((res.body as unknown as ApiErrorBody).error.code).toBe("not_found");
    expect((await askGate(await signInAs(stranger, "viewer"), taskId)).status).toBe(404);
    expect((await askGate(stranger.apiKey, newTaskId("missing"))).status).toBe(404);
  });

  it("lets any signed-in role ask (a viewer gets 200)", async () => {
    const { t, taskId } = await cleanTask();
    for (const role of ["viewer", "approver", "responder", "owner"] as const) {
      const res = await askGate(await signInAs(t, role), taskId);
      expect(res.status, `${role}: ${res.text}`).toBe(200);
      expect(res.body.verdict).toBe("resume");
    }
    expect((await askGate(undefined, taskId)).status).toBe(401);
  });

  it("answers 422 to a bad body, 400 to invalid JSON, and accepts an empty body", async () => {
    const { t, taskId } = await cleanTask();
    for (const body of [
      { tool_definitions: { update_record: "not-a-sha" } },
      { tool_definitions: { update_record: hex("A") } },
      { tool_definitions: "update_record" },
      { unexpected: true },
      [1, 2],
    ]) {
      const res = await askGate(t.apiKey, taskId, body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(422);
      expect((res.body as unknown as ApiErrorBody).error.code).toBe("validation_failed");
    }
    const bad = await api(t.apiKey).request("POST", `/api/v1/tasks/${taskId}/resume`, { raw: "{nope" });
    expect(bad.status).toBe(400);
    const empty = await fetch(`${baseUrl()}/api/v1/tasks/${taskId}/resume`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as GateVerdict).verdict).toBe("resume");
  });
});
