/**
 * Reconcile and lookup (docs/concepts.md#reconcile, #state-transitions), on
 * real PostgreSQL through the built server: only responders, owners and admins settle an `unknown` effect,
 * never a runtime key; every reconcile names its evidence, writes one audit row and one timeline event in the
 * same transaction, and nothing partial on an error; two responders racing → one wins, the other is told who
 * did; the tool owner's lookup endpoint is asked by idempotency key with a timeout, and a timeout or an
 * ambiguous answer settles nothing.
 */
import http from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiErrorBody, IntentResult, TimelinePage } from "@/lib/contract/api";
import { resultDigest, type RecordUpdateResult } from "@/scripts/records-service";
import {
  askGate,
  checkpoint,
  getTask,
  intentBody,
  newKey,
  postIntent,
  postLookup,
  postReconcile,
  registerLookup,
  sendEvents,
} from "./support/custody-calls";
import { localServer, startTempRecords, type LocalServer } from "./support/local-servers";
import { addPerson, signInAs } from "./support/people";
import { errorCode, errorOf, expectError } from "./support/responses";
import { approveDirectly, unknownEffect as makeUnknownEffect } from "./support/seeding";
import { auditRows, custodySnapshot, effectRow } from "./support/stored-rows";
import { sleep } from "./support/waiting";
import {
  api,
  createTestTenant,
  makeEvent,
  newTaskId,
  signIn,
  type FullTestTenant,
  type TestTenant,
  cleanupsAfterEachTest,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();

/** Servers started by a test; closed after it whatever happened. */
const cleanups = cleanupsAfterEachTest();

const EFFECT = "update_record";
const TOOL = "records-api";

/** An unknown effect of tool records-api (see support/seeding.ts `unknownEffect`). */
const unknownEffect = (t: TestTenant, opts: { declared?: "not_started" | "approved"; name?: string } = {}) =>
  makeUnknownEffect(handle.db, t, { tool: TOOL, ...opts });

const completedBody = (over: Record<string, unknown> = {}) => ({
  outcome: "completed",
  external_operation_id: "op-found-1",
  evidence: "Records system shows the update under this key (ticket OPS-12).",
  ...over,
});
const notAppliedBody = (over: Record<string, unknown> = {}) => ({
  outcome: "not_applied",
  evidence: "Records system has no write under this key; checked the audit trail.",
  ...over,
});

function fieldPaths(res: { body: unknown }): string[] {
  const details = (res.body as ApiErrorBody).error.details as { fields?: Array<{ path: string }> } | undefined;
  return (details?.fields ?? []).map((f) => f.path);
}

describe("reconcile: who may settle", () => {
  let t: FullTestTenant;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
  });

  it("refuses a runtime API key (403): settling is a human decision", async () => {
    const { taskId, name } = await unknownEffect(t);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postReconcile(t.apiKey, taskId, name, completedBody());
    expectError(res, 403, "forbidden");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    // the lookup is for people too
    expectError(await postLookup(t.apiKey, taskId, name), 403, "forbidden");
  });

  it("refuses viewer and approver sessions (403) and writes nothing", async () => {
    const { taskId, name } = await unknownEffect(t);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    for (const role of ["viewer", "approver"] as const) {
      const person = await signInAs(t, role);
      const res = await postReconcile(person, taskId, name, completedBody());
      expectError(res, 403, "forbidden");
      expect(errorOf(res).message).toContain(role);
      expectError(await postLookup(person, taskId, name), 403, "forbidden");
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("lets a responder, an owner and an admin settle", async () => {
    for (const role of ["responder", "owner", "admin"] as const) {
      const { taskId, name } = await unknownEffect(t);
      const person = await signInAs(t, role);
      const res = await postReconcile(person, taskId, name, completedBody());
      expect(res.status, `${role}: ${res.text}`).toBe(200);
      expect(res.body).toMatchObject({
        name,
        status: "completed",
        reconcile: { by: t.users[role].email, outcome: "completed" },
      });
    }
  });

  it("answers 404 to another tenant's responder and writes nothing", async () => {
    const { taskId, name } = await unknownEffect(t);
    const other = await createTestTenant(handle.db, { roles: ["responder"] });
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const stranger = await signInAs(other, "responder");
    expectError(await postReconcile(stranger, taskId, name, completedBody()), 404, "not_found");
    expectError(await postLookup(stranger, taskId, name), 404, "not_found");
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect(await auditRows(handle.db, other.tenantId, "side_effect.reconciled")).toHaveLength(0);
  });

  it("answers 404 for an unknown task or effect", async () => {
    const { taskId } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    expectError(await postReconcile(responder, newTaskId("missing"), EFFECT, completedBody()), 404, "not_found");
    expectError(await postReconcile(responder, taskId, "no_such_effect", completedBody()), 404, "not_found");
  });
});

describe("reconcile: bad input writes nothing", () => {
  it("names `evidence` when it is missing or blank, and `external_operation_id` when completed lacks it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);

    const { evidence: _e, ...noEvidence } = completedBody();
    for (const body of [
      noEvidence,
      completedBody({ evidence: "" }),
      completedBody({ evidence: "   " }),
      notAppliedBody({ evidence: null }),
    ]) {
      const res = await postReconcile(responder, taskId, name, body);
      expectError(res, 422, "validation_failed");
      expect(fieldPaths(res)).toContain("evidence");
      expect(errorOf(res).message).toContain("evidence");
    }

    const { external_operation_id: _x, ...noOperation } = completedBody();
    for (const body of [noOperation, completedBody({ external_operation_id: "  " })]) {
      const res = await postReconcile(responder, taskId, name, body);
      expectError(res, 422, "validation_failed");
      expect(fieldPaths(res)).toContain("external_operation_id");
    }

    const badOutcome = await postReconcile(responder, taskId, name, completedBody({ outcome: "done" }));
    expectError(badOutcome, 422, "validation_failed");
    expect(fieldPaths(badOutcome)).toContain("outcome");

    const notJson = await api(responder).request("POST", `/api/v1/tasks/${taskId}/side-effects/${name}/reconcile`, {
      raw: "{not json",
    });
    expect(notJson.status).toBe(400);

    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect((await effectRow(handle.db, t.tenantId, taskId, name))?.status).toBe("unknown");
  });

  it("answers 409 for an effect that is not unknown (in flight, completed, not started) and writes nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const responder = await signInAs(t, "responder");
    const taskId = newTaskId();
    const keys = { fresh: newKey(), flying: newKey(), done: newKey() };
    await checkpoint(t, taskId, {
      side_effects: {
        fresh: { idempotency_key: keys.fresh, status: "not_started" },
        flying: { idempotency_key: keys.flying, status: "not_started" },
        done: {
          idempotency_key: keys.done,
          status: "completed",
          receipt: { external_operation_id: "op-done", completed_at: "2025-07-01T09:00:00Z" },
        },
      },
    });
    expect((await postIntent(t.apiKey, taskId, "flying", intentBody(keys.flying))).body.decision).toBe("go");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    for (const [name, status] of [
      ["fresh", "not started"],
      ["flying", "in flight"],
      ["done", "completed"],
    ] as const) {
      for (const body of [completedBody(), notAppliedBody()]) {
        const res = await postReconcile(responder, taskId, name, body);
        expectError(res, 409, "conflict");
        expect(errorOf(res).message).toContain(status);
      }
    }
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });
});

describe("reconcile: outcomes", () => {
  it("completed: stores the receipt and the decision, one audit row with the evidence, one timeline event; the gate resumes and the intent replays", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId, key, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const auditBefore = (await auditRows(handle.db, t.tenantId)).length;
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);

    const res = await postReconcile(
      responder,
      taskId,
      name,
      completedBody({ result_digest: "d".repeat(64), completed_at: "2025-07-01T09:30:00+00:00" }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name,
      status: "completed",
      reconcile: { outcome: "completed", external_operation_id: "op-found-1", by: t.users.responder!.email },
    });
    expect(res.body.reconcile.evidence).toContain("OPS-12");

    const view = (await getTask(t.apiKey, taskId)).body.side_effects[name]!;
    expect(view).toMatchObject({
      status: "completed",
      receipt: {
        external_operation_id: "op-found-1",
        result_digest: "d".repeat(64),
        completed_at: "2025-07-01T09:30:00.000Z",
      },
      last_reconcile: { outcome: "completed", external_operation_id: "op-found-1", by: t.users.responder!.email },
    });
    expect(view.last_reconcile!.evidence).toContain("OPS-12");

    const audit = await auditRows(handle.db, t.tenantId);
    expect(audit).toHaveLength(auditBefore + 1);
    const row = audit[audit.length - 1]!;
    expect(row).toMatchObject({
      action: "side_effect.reconciled",
      target: `side_effect:${taskId}/${name}`,
      actor_kind: "user",
      actor_label: t.users.responder!.email,
    });
    expect(row.details).toMatchObject({
      outcome: "completed",
      external_operation_id: "op-found-1",
      new_status: "completed",
    });
    expect(String(row.details.evidence)).toContain("OPS-12");
    expect(res.body.audit_seq).toBe(row.seq);

    const timeline = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline?limit=1000`);
    const decisions = timeline.body.events.filter((e) => e.type === "decision.recorded");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ plane: "session", actor: t.users.responder!.email });
    expect(decisions[0]!.attrs).toMatchObject({
      kind: "reconcile",
      side_effect: name,
      outcome: "completed",
      new_status: "completed",
      audit_seq: row.seq,
    });

    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    const replay = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool: TOOL }));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((replay.body as Extract<IntentResult, { decision: "replay" }>).receipt.external_operation_id).toBe(
      "op-found-1",
    );
  });

  it("not_applied: back to not_started, the gate resumes with the effect permitted, and the same key gets go", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const { taskId, key, name } = await unknownEffect(t);
    const owner = await signInAs(t, "owner");
    const res = await postReconcile(owner, taskId, name, notAppliedBody());
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: "not_started",
      reconcile: { outcome: "not_applied", external_operation_id: null },
    });
    const view = (await getTask(t.apiKey, taskId)).body.side_effects[name]!;
    expect(view).toMatchObject({
      status: "not_started",
      lease_expires_at: null,
      intent_at: null,
      last_reconcile: { outcome: "not_applied" },
    });
    expect(view.receipt).toBeUndefined();
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body).toMatchObject({ verdict: "resume", permitted_side_effects: [name] });
    const retry = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool: TOOL }));
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.decision).toBe("go");
    expect(await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).toHaveLength(1);
  });

  it("not_applied: an effect whose first go used its approval returns to not_started, and its retry needs a fresh approval (an approval authorizes one go, decision 0029)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["admin"] });
    const { taskId, key, name } = await unknownEffect(t, { declared: "approved" });
    const admin = await signInAs(t, "admin");
    const res = await postReconcile(admin, taskId, name, notAppliedBody());
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("not_started");
    expect((await getTask(t.apiKey, taskId)).body.side_effects[name]?.status).toBe("not_started");
    const retry = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool: TOOL }));
    expectError(retry, 403, "approval_required");
  });

  it("not_applied: when the workspace lets a retry reuse the approval, an approved effect returns to approved and its retry goes (decision 0029)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["admin"] });
    const admin = await signInAs(t, "admin");
    const set = await api(admin).put("/api/v1/settings/approvals", { retry_after_not_applied_reuses_approval: true });
    expect(set.status, set.text).toBe(200);
    const { taskId, key, name } = await unknownEffect(t, { declared: "approved" });
    const res = await postReconcile(admin, taskId, name, notAppliedBody());
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("approved");
    const retry = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool: TOOL }));
    expect(retry.body.decision).toBe("go");
  });

  it("not_applied: an approved effect whose intent was reported as an event (using the approval) returns to not_started", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, {
      side_effects: { [EFFECT]: { idempotency_key: key, status: "approved", tool: TOOL } },
    });
    // a checkpoint cannot approve (it waits for an approver); an approver's decision stands in here
    await approveDirectly(handle.db, t.tenantId, taskId, EFFECT);
    const at = Date.now() + 1_000;
    await sendEvents(t, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: new Date(at).toISOString(),
        attrs: { name: EFFECT, idempotency_key: key, payload_digest: "e".repeat(64), action: "records.update" },
      }),
      makeEvent(taskId, { type: "run.interrupted", occurred_at: new Date(at + 10).toISOString() }),
    ]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("unknown");
    const res = await postReconcile(await signInAs(t, "responder"), taskId, EFFECT, notAppliedBody());
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("not_started");
  });

  it("refuses a credential pasted into the evidence (422 naming evidence): the audit chain would keep it for good", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const token = `Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${"x".repeat(43)}`;
    const auditBefore = (await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).length;
    const res = await postReconcile(
      responder,
      taskId,
      name,
      notAppliedBody({ evidence: `Checked with ${token} — nothing there.` }),
    );
    expect(res.status, res.text).toBe(422);
    expect(res.text).toContain("evidence");
    const row = await effectRow(handle.db, t.tenantId, taskId, name);
    expect(row?.status).toBe("unknown");
    expect(JSON.stringify(row?.last_reconcile ?? null)).not.toContain("eyJhbGciOiJIUzI1NiJ9");
    const audit = await auditRows(handle.db, t.tenantId, "side_effect.reconciled");
    expect(audit.length).toBe(auditBefore);
    expect(JSON.stringify(audit)).not.toContain("eyJhbGciOiJIUzI1NiJ9");
  });

  it("settles an effect whose lease expired even when nothing read the task in between", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const responder = await signInAs(t, "responder");
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    const go = await postIntent(t.apiKey, taskId, EFFECT, intentBody(key, { lease_seconds: 5 }));
    expect(go.status).toBe(200);
    await sleep(6_000);
    // the API already treats the effect as unknown: the intent says reconcile_required
    expectError(await postIntent(t.apiKey, taskId, EFFECT, intentBody(key)), 409, "reconcile_required");
    const res = await postReconcile(responder, taskId, EFFECT, notAppliedBody());
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe("not_started");
  }, 20_000);
});

describe("reconcile: racing responders", () => {
  it("lets exactly one of two responders win each round; the loser is told who settled it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const secondEmail = await addPerson(handle.db, t, "responder");
    const first = await signInAs(t, "responder");
    const second = { cookie: await signIn(secondEmail, t.password) };
    const emails = [t.users.responder!.email, secondEmail];

    for (let round = 0; round < 6; round++) {
      const { taskId, name } = await unknownEffect(t);
      const auditBefore = (await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).length;
      // alternate the outcomes so both kinds of update race
      const bodies =
        round % 2 === 0
          ? [completedBody(), notAppliedBody()]
          : [notAppliedBody(), completedBody({ external_operation_id: "op-2" })];
      const answers = await Promise.all([
        postReconcile(first, taskId, name, bodies[0]),
        postReconcile(second, taskId, name, bodies[1]),
      ]);
      const winners = answers.filter((r) => r.status === 200);
      const losers = answers.filter((r) => r.status === 409);
      expect(winners, `round ${round}: ${answers.map((a) => a.text).join(" | ")}`).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const winnerIndex = answers.indexOf(winners[0]!);
      const winnerEmail = emails[winnerIndex]!;
      const loser = losers[0]!;
      expect(errorCode(loser)).toBe("conflict");
      const message = errorOf(loser).message;
      expect(message).toContain(winnerEmail);
      expect(message).toMatch(/already settled/i);
      expect(errorOf(loser).details).toMatchObject({ settled_by: winnerEmail });

      const row = await effectRow(handle.db, t.tenantId, taskId, name);
      expect(row?.last_reconcile).toMatchObject({
        by: winnerEmail,
        outcome: (bodies[winnerIndex] as { outcome: string }).outcome,
      });
      expect(await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).toHaveLength(auditBefore + 1);
      const timeline = await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline?limit=1000`);
      expect(timeline.body.events.filter((e) => e.type === "decision.recorded")).toHaveLength(1);
    }
  }, 60_000);
});

describe("lookup endpoints", () => {
  it("lets owners register a lookup; responders get 403; bad urls and timeouts get 422", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder", "admin"] });
    const owner = await signInAs(t, "owner");
    const responder = await signInAs(t, "responder");
    const ok = await registerLookup(owner, TOOL, "http://127.0.0.1:9/lookup", 1500);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ tool: TOOL, url: "http://127.0.0.1:9/lookup", timeout_ms: 1500 });
    const replaced = await registerLookup(await signInAs(t, "admin"), TOOL, "https://records.example.com/lookup");
    expect(replaced.body).toMatchObject({ url: "https://records.example.com/lookup", timeout_ms: 3000 });
    const auditAfterOk = (await auditRows(handle.db, t.tenantId)).length;

    expectError(await registerLookup(responder, TOOL, "http://127.0.0.1:9/other"), 403, "forbidden");
    expectError(await registerLookup(t.apiKey, TOOL, "http://127.0.0.1:9/other"), 403, "forbidden");
    for (const [url, timeout, field] of [
      ["ftp://records.example.com/lookup", undefined, "url"],
      ["https://user:secret@records.example.com/lookup", undefined, "url"],
      ["https://records.example.com/lookup", 50, "timeout_ms"],
      ["https://records.example.com/lookup", 60_000, "timeout_ms"],
    ] as const) {
      const res = await registerLookup(owner, TOOL, url, timeout);
      expectError(res, 422, "validation_failed");
      expect(fieldPaths(res)).toContain(field);
    }
    const list = await api(owner).get<{ lookups: Array<{ tool: string; url: string }> }>("/api/v1/settings/lookups");
    expect(list.body.lookups).toEqual([
      expect.objectContaining({ tool: TOOL, url: "https://records.example.com/lookup" }),
    ]);
    expect(await auditRows(handle.db, t.tenantId)).toHaveLength(auditAfterOk);
  });

  it("answers 422 (not 500) to a lookup url that is not a URL at all, and stores nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    for (const url of ["not a url", "/relative/lookup", "http://"]) {
      const res = await registerLookup(owner, TOOL, url);
      expectError(res, 422, "validation_failed");
      expect(fieldPaths(res)).toContain("url");
    }
    const list = await api(owner).get<{ lookups: unknown[] }>("/api/v1/settings/lookups");
    expect(list.body.lookups).toEqual([]);
    expect(await auditRows(handle.db, t.tenantId)).toHaveLength(0);
  });

  it("refuses a lookup url that carries a credential (user info, a token in the query, a bearer-like key)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = await signInAs(t, "owner");
    for (const url of [
      "https://user:pw@records.example.com/lookup",
      "https://records.example.com/lookup?token=abc123",
      "https://records.example.com/lookup?api_key=sk-abcdefghijklmnopqrstuvwxyz012345",
    ]) {
      const res = await registerLookup(owner, TOOL, url);
      expectError(res, 422, "validation_failed");
      expect(fieldPaths(res)).toContain("url");
    }
    expect((await registerLookup(owner, TOOL, "https://records.example.com/lookup")).status).toBe(200);
  });

  it("says when no lookup is registered for the effect's tool", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const { taskId, name } = await unknownEffect(t);
    const res = await postLookup(await signInAs(t, "responder"), taskId, name);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ configured: false });
    expect(res.body.message).toContain(TOOL);
  });

  it("asks the records service by idempotency key: not_found before the write, found (with its receipt) after", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const records = await startTempRecords();
    cleanups.push(records.stop);
    expect((await registerLookup(await signInAs(t, "owner"), TOOL, `${records.url}/lookup`)).status).toBe(200);
    const { taskId, key, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");

    const before = await postLookup(responder, taskId, name);
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({
      configured: true,
      outcome: "not_found",
      http_status: 200,
      external_operation_id: null,
    });

    const put = await fetch(`${records.url}/records/REC-1`, {
      method: "PUT",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ status: "reviewed" }),
    });
    expect(put.status).toBe(200);
    const applied = (await put.json()) as RecordUpdateResult;

    const after = await postLookup(responder, taskId, name);
    expect(after.body).toMatchObject({
      configured: true,
      outcome: "found",
      external_operation_id: applied.operation_id,
      result_digest: resultDigest(applied),
      completed_at: applied.applied_at,
      // The records service's own count of writes under the key (decision 0050), said in the answer.
      applied_count: 1,
      message: expect.stringContaining("applied once under this idempotency key"),
    });
    // asking settles nothing
    expect((await effectRow(handle.db, t.tenantId, taskId, name))?.status).toBe("unknown");
    expect(await auditRows(handle.db, t.tenantId, "side_effect.reconciled")).toHaveLength(0);
  });

  it("use_lookup on reconcile keeps the lookup's answer, and the receipt's time and digest come from it", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const records = await startTempRecords();
    cleanups.push(records.stop);
    expect((await registerLookup(await signInAs(t, "owner"), TOOL, `${records.url}/lookup`)).status).toBe(200);
    const { taskId, key, name } = await unknownEffect(t);
    const put = await fetch(`${records.url}/records/REC-2`, {
      method: "PUT",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ status: "reviewed" }),
    });
    const applied = (await put.json()) as RecordUpdateResult;
    await sleep(20); // the decision is made after the write: its own time differs from applied_at

    const responder = await signInAs(t, "responder");
    const res = await postReconcile(responder, taskId, name, {
      outcome: "completed",
      external_operation_id: applied.operation_id,
      evidence: "The records lookup found the write under this key.",
      use_lookup: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.reconcile.lookup).toMatchObject({
      configured: true,
      outcome: "found",
      external_operation_id: applied.operation_id,
    });

    const row = await effectRow(handle.db, t.tenantId, taskId, name);
    expect(row?.receipt).toEqual({
      external_operation_id: applied.operation_id,
      result_digest: resultDigest(applied),
      completed_at: applied.applied_at,
    });
    expect(row?.last_reconcile).toMatchObject({
      lookup: { outcome: "found", external_operation_id: applied.operation_id, answer: { found: true } },
    });
    const audit = await auditRows(handle.db, t.tenantId, "side_effect.reconciled");
    expect(audit[0]!.details).toMatchObject({ lookup_outcome: "found" });
  });

  it("a lookup that never answers times out (outcome timeout) and settles nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const held: http.ServerResponse[] = [];
    const silent: LocalServer = await localServer((_req, res) => {
      held.push(res); // never answered
    });
    cleanups.push(silent.close);
    expect((await registerLookup(await signInAs(t, "owner"), TOOL, `${silent.url}/lookup`, 300)).status).toBe(200);
    const { taskId, key, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);

    const started = Date.now();
    const res = await postLookup(responder, taskId, name);
    const took = Date.now() - started;
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      configured: true,
      outcome: "timeout",
      http_status: null,
      external_operation_id: null,
    });
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3_000);
    expect(silent.requests).toHaveLength(1);
    expect(new URL(silent.requests[0]!, "http://x").searchParams.get("idempotency_key")).toBe(key);
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
    expect((await getTask(t.apiKey, taskId)).body.side_effects[name]?.status).toBe("unknown");
  });

  it("a 500, a non-JSON or an incomplete answer is ambiguous and settles nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const answers: Array<[number, string, string]> = [
      [500, "application/json", JSON.stringify({ found: true, external_operation_id: "op-x" })],
      [200, "text/html", "<html>maintenance</html>"],
      [200, "application/json", JSON.stringify({ found: true })],
      [200, "application/json", JSON.stringify({ status: "maybe" })],
      [404, "application/json", JSON.stringify({ found: false })],
    ];
    let next = 0;
    const server = await localServer((_req, res) => {
      const [status, type, body] = answers[next++ % answers.length]!;
      res.writeHead(status, { "content-type": type });
      res.end(body);
    });
    cleanups.push(server.close);
    expect((await registerLookup(await signInAs(t, "owner"), TOOL, `${server.url}/lookup`)).status).toBe(200);
    const { taskId, name } = await unknownEffect(t);
    const responder = await signInAs(t, "responder");
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    for (const [status] of answers) {
      const res = await postLookup(responder, taskId, name);
      expect(res.status, res.text).toBe(200);
      expect(res.body, JSON.stringify(res.body)).toMatchObject({
        configured: true,
        outcome: "ambiguous",
        http_status: status,
        external_operation_id: null,
      });
    }
    expect(server.requests).toHaveLength(answers.length);
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });

  it("an unreachable lookup is an error, settles nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
    const gone = await localServer((_req, res) => res.end());
    const url = gone.url;
    await gone.close();
    expect((await registerLookup(await signInAs(t, "owner"), TOOL, `${url}/lookup`)).status).toBe(200);
    const { taskId, name } = await unknownEffect(t);
    const snap = await custodySnapshot(handle.db, t.tenantId, taskId);
    const res = await postLookup(await signInAs(t, "responder"), taskId, name);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ configured: true, outcome: "error" });
    expect(await custodySnapshot(handle.db, t.tenantId, taskId)).toEqual(snap);
  });
});
