/**
 * Custody guarantees that hold when the runtime misbehaves (docs/concepts.md#attempts-and-fencing, #events,
 * #receive-order; decision 0006), each as a test through the real HTTP API on real PostgreSQL: stale writers are fenced
 * (attempt, If-Match / base_version); the gate is enforced on the intent route with the same reasons; one truth per
 * event id and per effect (conflicts, cross-batch order, the server's receive order, skewed clocks); mutating tool
 * calls without an outcome become unknown effects; checkpoint history pages and carries signatures that verify offline.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import type { ApiErrorBody, CheckpointPage, CheckpointResult, EventInput, GateVerdict } from "@/lib/contract/api";
import { verifyCanonical } from "@/lib/domain/crypto/signing";
import { attentionQueue } from "@/lib/domain/tasks/attention";
import { serverSigningKey } from "./support/seeding";
import {
  askGate,
  checkpoint,
  getTask,
  hex,
  intentBody,
  newKey,
  postIntent,
  postReceipt,
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
  makeRecord,
  newTaskId,
  postEvents,
  type TestTenant,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();

const put = (t: TestTenant, taskId: string, body: unknown, headers: Record<string, string> = {}) =>
  api(t.apiKey).request<CheckpointResult>("PUT", `/api/v1/tasks/${encodeURIComponent(taskId)}`, {
    json: body,
    headers,
  });

const sandbox = (taskId: string, attempt: number): EventInput =>
  makeEvent(taskId, {
    plane: "environment",
    type: "sandbox.created",
    attempt,
    environment_id: `sbx-${attempt}`,
    occurred_at: new Date().toISOString(),
  });

const reasonsOf = (res: { body: unknown }) =>
  ((errorOf(res).details as { reasons?: Array<{ code: string }> })?.reasons ?? []).map((r) => r.code);

describe("1. stale writers are fenced", () => {
  it("refuses a checkpoint from an older attempt (409 stale_attempt); the gate resumes from the current attempt's phase", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "a1-start", attempt: 1 });
    await sendEvents(t, [sandbox(taskId, 2)]);
    const v2 = await put(t, taskId, makeRecord(taskId, { phase: "a2-done", attempt: 2 }));
    expect(v2.status, v2.text).toBe(200);
    const zombie = await put(t, taskId, makeRecord(taskId, { phase: "zombie", attempt: 1 }));
    expectError(zombie, 409, "stale_attempt");
    expect(errorOf(zombie).details).toEqual({ attempt: 1, current_attempt: 2 });
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view).toMatchObject({ version: 2, phase: "a2-done", current_attempt: 2 });
    const gate = (await askGate(t.apiKey, taskId)).body;
    expect(gate).toMatchObject({ verdict: "resume", next_phase: "a2-done" });
  });

  it("a checkpoint from a newer attempt fences the older one, as sandbox.created does", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { attempt: 1 });
    const key = newKey();
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(key))).body.decision).toBe("go");
    await checkpoint(t, taskId, { attempt: 3 });
    expect((await getTask(t.apiKey, taskId)).body.current_attempt).toBe(3);
    // the older attempt's write in flight is now unknown; its receipt is refused, kept as evidence
    expect((await effectRow(handle.db, t.tenantId, taskId, "update_record"))?.status).toBe("unknown");
    expectError(
      await postReceipt(t.apiKey, taskId, "update_record", receiptBody(key, { attempt: 1 })),
      409,
      "stale_attempt",
    );
    expect((await refusals(handle.db, t.tenantId, taskId)).kept).toEqual(["stale_attempt"]);
    expectError(
      await postIntent(t.apiKey, taskId, "other_write", intentBody(newKey(), { attempt: 2 })),
      409,
      "stale_attempt",
    );
  });

  it("with If-Match, exactly one of twenty concurrent checkpoints based on v1 wins; the others get 409 version_conflict", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        put(t, taskId, makeRecord(taskId, { phase: `writer-${i}` }), { "if-match": '"1"' }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const losers = answers.filter((a) => a.status === 409);
    expect(losers).toHaveLength(19);
    for (const l of losers)
      expect(errorOf(l)).toMatchObject({ code: "version_conflict", details: { base_version: 1, current_version: 2 } });
    expect((await getTask(t.apiKey, taskId)).body.version).toBe(2);
  });

  it("honours base_version in the body like If-Match, answers ETag, and refuses the two disagreeing", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const first = await put(t, taskId, { ...makeRecord(taskId), base_version: 0 });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("etag")).toBe('"1"');
    expectError(await put(t, taskId, { ...makeRecord(taskId), base_version: 0 }), 409, "version_conflict");
    expectError(await put(t, taskId, makeRecord(taskId), { "if-match": '"7"' }), 409, "version_conflict");
    expectError(
      await put(t, taskId, { ...makeRecord(taskId), base_version: 1 }, { "if-match": '"2"' }),
      422,
      "validation_failed",
    );
    const ok = await put(t, taskId, { ...makeRecord(taskId, { phase: "next" }), base_version: 1 });
    expect(ok.status, ok.text).toBe(200);
    // base_version is a request field: the signed record does not hold it
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.record).not.toHaveProperty("base_version");
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}`)).headers.get("etag")).toBe('"2"');
  });

  it("requires the record to name its attempt", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const { attempt: _a, ...noAttempt } = makeRecord(newTaskId());
    const res = await put(t, noAttempt.task_id, noAttempt);
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain("attempt");
  });

  it("pages the checkpoint history, each entry with a signature and key id that verify offline", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    for (let i = 0; i < 45; i++) await checkpoint(t, taskId, { phase: `p${i}` });
    const keys = (
      await api().get<{ keys: Array<{ kid: string; kty: string; crv: string; x: string }> }>("/api/v1/signing-keys")
    ).body.keys;
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: CheckpointPage } = await api(t.apiKey).get<CheckpointPage>(
        `/api/v1/tasks/${taskId}/checkpoints?limit=20${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status).toBe(200);
      for (const c of page.body.checkpoints) {
        const jwk = keys.find((k) => k.kid === c.key_id)!;
        expect(verifyCanonical(c.record, c.signature, jwk, c.digest)).toBe(true);
        expect(c.attempt).toBe(1);
        seen.push(c.version);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, i) => 45 - i));
    const view = (await getTask(t.apiKey, taskId)).body;
    const jwk = keys.find((k) => k.kid === view.key_id)!;
    expect(verifyCanonical(view.record, view.signature!, jwk, view.digest!)).toBe(true);
    expectError(await api(t.apiKey).get(`/api/v1/tasks/${taskId}/checkpoints?cursor=bogus`), 400, "bad_request");
  });
});

describe("2. the gate is enforced, not advisory", () => {
  it("refuses an intent for another effect while the gate says stop, with the gate's reasons (unknown write and revoked credential)", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()))).body.decision).toBe("go");
    await sendEvents(t, [
      makeEvent(taskId, { type: "run.interrupted", attempt: 1 }),
      makeEvent(taskId, {
        plane: "vault",
        type: "credential.issued",
        attrs: { credential_ref: "records-api", credential_id: "c1", expires_at: "2099-01-01T00:00:00Z" },
      }),
      makeEvent(taskId, {
        plane: "vault",
        type: "credential.revoked",
        occurred_at: "2025-01-02T00:00:00Z",
        attrs: { credential_ref: "records-api", credential_id: "c1" },
      }),
    ]);
    const gate = (await askGate(t.apiKey, taskId)).body;
    expect(gate.verdict).toBe("stop");
    // Another write (its own payload: the same one would be a duplicate of update_record, decision 0029).
    const res = await postIntent(t.apiKey, taskId, "send_email", intentBody(newKey(), { payload_digest: hex("5") }));
    expectError(res, 409, "gate_stop");
    expect((res.body as unknown as ApiErrorBody).error.details).toEqual({ reasons: gate.reasons });
    expect(reasonsOf(res)).toEqual(["side_effect_unknown", "credential_revoked"]);
    expect(await effectRow(handle.db, t.tenantId, taskId, "send_email")).toBeUndefined();
    const audit = (await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded")).at(-1)!;
    expect(audit.details).toMatchObject({
      refused: "gate_stop",
      mutation: true,
      reasons: ["side_effect_unknown", "credential_revoked"],
    });
  });

  it("lets writes of the current attempt run side by side, and records mutation on the granted intent's audit row", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const answers = await Promise.all(
      // Three different writes: each its own payload (one payload twice would be a duplicate, decision 0029).
      ["a", "b", "c"].map((n) => postIntent(t.apiKey, taskId, n, intentBody(newKey(), { payload_digest: hex(n) }))),
    );
    expect(answers.map((a) => a.body.decision)).toEqual(["go", "go", "go"]);
    const granted = await auditRows(handle.db, t.tenantId, "side_effect.intent_recorded");
    expect(granted.map((a) => a.details.mutation)).toEqual([true, true, true]);
  });

  it("takes a task's principal from task.created until a checkpoint, and its revocation stops every intent", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId();
    const principal = `tenant/acme:user/${taskId}`;
    await sendEvents(t, [makeEvent(taskId, { type: "task.created", attrs: { principal } })]);
    expect((await getTask(t.apiKey, taskId)).body.principal).toBe(principal);
    const owner = await signInAs(t, "owner");
    expect(
      (await api(owner).post("/api/v1/settings/principals/revoke", { principal, reason: "left the team" })).status,
    ).toBe(200);
    const res = await postIntent(t.apiKey, taskId, "lookup", intentBody(newKey(), { mutation: false }));
    expectError(res, 403, "principal_revoked");
    // the first checkpoint cannot name another principal either
    expectError(
      await put(t, taskId, makeRecord(taskId, { principal: "tenant/acme:user/someone-else" })),
      409,
      "conflict",
    );
  });

  it("refuses a principal outside ASCII, composed or decomposed (josé, jose + U+0301), so no look-alike can escape a revocation (decision 0033)", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const suffix = newKey();
    for (const principal of [`tenant/acme:jose\u0301-${suffix}`, `tenant/acme:jos\u00e9-${suffix}`]) {
      const taskId = newTaskId();
      const res = await api(t.apiKey).put(`/api/v1/tasks/${taskId}`, makeRecord(taskId, { principal }));
      expectError(res, 422, "validation_failed");
    }
  });

  it("never lets a checkpoint declare an effect approved, or completed without a receipt", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, {
      side_effects: {
        publish: { idempotency_key: newKey(), status: "approved" },
        update_record: { idempotency_key: newKey(), status: "completed" },
      },
    });
    const effects = (await getTask(t.apiKey, taskId)).body.side_effects;
    expect(effects["publish"]).toMatchObject({ status: "awaiting_approval", origin: "checkpoint" });
    expect(effects["update_record"]).toMatchObject({ status: "unknown" });
    expect((await askGate(t.apiKey, taskId)).body.reasons.map((r) => r.code)).toEqual([
      "approval_missing",
      "side_effect_unknown",
    ]);
  });

  it("never answers next_phase from a record that does not verify", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId, { phase: "drafting" });
    await checkpoint(t, taskId, { phase: "writing" });
    await handle.db.execute(sql`
      update task_checkpoints set record = jsonb_set(record, '{phase}', '"done"'::jsonb)
      where tenant_id = ${t.tenantId} and task_id = ${taskId} and version = 2`);
    const gate = (await askGate(t.apiKey, taskId)).body;
    expect(gate).toMatchObject({ verdict: "stop", next_phase: "drafting" });
    expect(gate.reasons.map((r) => r.code)).toEqual(["record_signature_invalid"]);
  });

  it("keeps a run that ended with a write unknown on the attention queue", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()))).body.decision).toBe("go");
    await sendEvents(t, [makeEvent(taskId, { type: "run.interrupted", attempt: 1 })]);
    await checkpoint(t, taskId, { phase: "done" });
    const viewer = t.users.viewer!;
    const items = await attentionQueue({
      db: handle.db,
      signingKey: serverSigningKey(),
      actor: {
        kind: "user",
        tenantId: t.tenantId,
        userId: viewer.userId,
        email: viewer.email,
        role: "viewer",
      },
    });
    expect(items.map((i) => [i.kind, i.task_id])).toEqual([["side_effect_unknown", taskId]]);
  });
});

describe("3. one truth per event and per effect", () => {
  it("answers conflict to an event id reused with other content (with the stored digest), never a silent duplicate", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()))).body.decision).toBe("go");
    const first = makeEvent(taskId, { id: `${taskId}:a1:0007`, type: "phase.changed" });
    await sendEvents(t, [first]);
    // a runtime whose counter reset after a crash reuses the id for its interruption
    const reused = makeEvent(taskId, { id: first.id, type: "run.interrupted", attempt: 1 });
    const res = await postEvents(t.apiKey, [reused, first]);
    // the reused id is a conflict; the original, repeated in the same batch, is a duplicate of what is stored
    expect(res.body.results).toEqual([
      expect.objectContaining({
        id: first.id,
        status: "conflict",
        stored_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
      { id: first.id, status: "duplicate" },
    ]);
    expect((await postEvents(t.apiKey, [first])).body.results[0]).toEqual({ id: first.id, status: "duplicate" });
    expect((await effectRow(handle.db, t.tenantId, taskId, "update_record"))?.status).toBe("in_flight");
  });

  it("creates no task from a batch whose events were all refused (rejected or conflicting)", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const known = newTaskId();
    const stored = makeEvent(known);
    await sendEvents(t, [stored]);
    const ghost = newTaskId("ghost");
    const res = await postEvents(t.apiKey, [
      makeEvent(ghost, {
        plane: "tools",
        type: "side_effect.intent",
        attrs: { name: "has space", idempotency_key: newKey() },
      }),
      { ...stored, task_id: ghost },
    ]);
    expect(res.body.results.map((r) => r.status)).toEqual(["rejected", "conflict"]);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${ghost}`)).status).toBe(404);
  });

  it("completes an effect whose receipt event arrived a batch before its intent event", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    const receipt = makeEvent(taskId, {
      plane: "tools",
      type: "side_effect.receipt",
      attrs: {
        name: "pay",
        idempotency_key: key,
        external_operation_id: "op-early",
        completed_at: new Date().toISOString(),
      },
    });
    const first = await postEvents(t.apiKey, [receipt]);
    expect(first.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: "pay", applied: false, code: "no_intent" },
    });
    const intent = makeEvent(taskId, {
      plane: "tools",
      type: "side_effect.intent",
      attrs: { name: "pay", idempotency_key: key },
    });
    const second = await postEvents(t.apiKey, [intent]);
    expect(second.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: "pay", applied: true, code: "completed" },
    });
    const row = await effectRow(handle.db, t.tenantId, taskId, "pay");
    expect(row?.status).toBe("completed");
    expect(row?.receipt?.external_operation_id).toBe("op-early");
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
  });

  it("makes an in-flight write unknown on an interruption the runtime dates two minutes early, and shows the skew", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey()))).body.decision).toBe("go");
    await sendEvents(t, [
      makeEvent(taskId, {
        type: "run.interrupted",
        attempt: 1,
        occurred_at: new Date(Date.now() - 120_000).toISOString(),
      }),
    ]);
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.side_effects["update_record"]!.status).toBe("unknown");
    expect(view.clock_skew).toMatchObject({ note: expect.stringContaining("behind") });
    expect(view.clock_skew!.ms).toBeLessThan(-100_000);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("stop");
  });

  it("notes a runtime clock that runs ahead", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await sendEvents(t, [makeEvent(taskId, { occurred_at: new Date(Date.now() + 10 * 60_000).toISOString() })]);
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.clock_skew!.ms).toBeGreaterThan(500_000);
    expect(view.clock_skew!.note).toContain("ahead");
  });

  it("flags a receipt that claims to have completed before its intent was registered", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    const key = newKey();
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(key))).body.decision).toBe("go");
    const res = await postReceipt(
      t.apiKey,
      taskId,
      "update_record",
      receiptBody(key, { completed_at: new Date(Date.now() - 3_600_000).toISOString() }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "completed", warnings: ["completed_before_intent"] });
    const effect = (await getTask(t.apiKey, taskId)).body.side_effects["update_record"]!;
    expect(effect.receipt!.warnings).toEqual(["completed_before_intent"]);
    expect(effect.status_reason).toContain("before the server registered its intent");
  });
});

describe("3. tool calls whose attempt ended without an outcome", () => {
  const call = (
    taskId: string,
    callId: string,
    tool: string,
    over: Partial<EventInput> = {},
    attrs: Record<string, unknown> = {},
  ) =>
    makeEvent(taskId, {
      plane: "tools",
      type: "tool.called",
      attempt: 1,
      attrs: { tool, call_id: callId, ...attrs },
      ...over,
    });
  const outcome = (taskId: string, callId: string, type = "tool.completed") =>
    makeEvent(taskId, { plane: "tools", type, attempt: 1, attrs: { call_id: callId } });

  it("turns a mutating call with no outcome into an unknown effect when the attempt is interrupted; reads and answered calls block nothing", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer", "responder"] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await sendEvents(t, [
      call(taskId, "c-write", "send_email", {}, { mutation: true }),
      call(taskId, "c-read", "search", {}, { mutation: false }),
      call(taskId, "c-done", "update_record", {}, { mutation: true }),
      // outcomes pair by call id, not by order: this one answers c-done, though it comes first in time
      outcome(taskId, "c-done"),
    ]);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    await sendEvents(t, [makeEvent(taskId, { type: "run.interrupted", attempt: 1 })]);
    const effects = (await getTask(t.apiKey, taskId)).body.side_effects;
    expect(Object.keys(effects)).toEqual(["send_email.c-write"]);
    expect(effects["send_email.c-write"]).toMatchObject({
      status: "unknown",
      origin: "tool_call",
      call_id: "c-write",
      tool: "send_email",
    });
    expect(effects["send_email.c-write"]!.status_reason).toContain("no idempotency key");
    const gate = (await askGate(t.apiKey, taskId)).body;
    expect(gate.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    const viewer = t.users.viewer!;
    const items = await attentionQueue({
      db: handle.db,
      signingKey: serverSigningKey(),
      actor: {
        kind: "user",
        tenantId: t.tenantId,
        userId: viewer.userId,
        email: viewer.email,
        role: "viewer",
      },
    });
    expect(items[0]).toMatchObject({
      kind: "side_effect_unknown",
      origin: "tool_call",
      why: expect.stringContaining("no idempotency key"),
    });
    // a responder settles it like any unknown effect
    const reconcile = await api(await signInAs(t, "responder")).post(
      `/api/v1/tasks/${taskId}/side-effects/send_email.c-write/reconcile`,
      {
        outcome: "not_applied",
        evidence: "the mail log shows nothing was sent",
      },
    );
    expect(reconcile.status, reconcile.text).toBe(200);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
  });

  it("counts a call that belongs to a declared effect as that effect, never a second one", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { update_record: { idempotency_key: key, status: "not_started" } } });
    expect((await postIntent(t.apiKey, taskId, "update_record", intentBody(key))).body.decision).toBe("go");
    await sendEvents(t, [
      call(taskId, "c1", "update_record", {}, { mutation: true, side_effect: "update_record" }),
      // no link, but the same tool with an intent in the same attempt
      call(taskId, "c2", "update_record", {}, { mutation: true }),
    ]);
    await sendEvents(t, [sandbox(taskId, 2)]);
    const effects = (await getTask(t.apiKey, taskId)).body.side_effects;
    expect(Object.keys(effects)).toEqual(["update_record"]);
    expect(effects["update_record"]!.status).toBe("unknown");
  });

  it("gives the same outcome whether the call arrives before or after its attempt ended, and keeps a late outcome as evidence", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await sendEvents(t, [makeEvent(taskId, { type: "run.interrupted", attempt: 1 })]);
    const res = await postEvents(t.apiKey, [call(taskId, "late", "charge_card", {}, { mutation: true })]);
    expect(res.body.results[0]).toMatchObject({
      status: "stored",
      effect: { name: "charge_card.late", applied: true, code: "unknown" },
    });
    const late = await postEvents(t.apiKey, [outcome(taskId, "late")]);
    expect(late.body.results[0]).toMatchObject({
      effect: { name: "charge_card.late", applied: false, code: "late_outcome" },
    });
    const effect = (await getTask(t.apiKey, taskId)).body.side_effects["charge_card.late"]!;
    expect(effect.status).toBe("unknown");
    expect(effect.unapplied_receipts.map((r) => r.reason)).toEqual(["late_outcome"]);
  });

  it("names a call with characters effect names do not allow by a safe name with a digest", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    await checkpoint(t, taskId);
    await sendEvents(t, [
      call(taskId, "call/7 x", "mail tool", {}, { mutation: true }),
      makeEvent(taskId, { type: "run.interrupted", attempt: 1 }),
    ]);
    const names = Object.keys((await getTask(t.apiKey, taskId)).body.side_effects);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^mail-tool\.call-7-x-[0-9a-f]{8}$/);
    expect((await api(t.apiKey).get(`/api/v1/tasks/${taskId}`)).status).toBe(200);
  });
});

describe("4. a checkpoint's size is bounded", () => {
  it("refuses a record with more side effects than the cap, saying the cap", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const side_effects = Object.fromEntries(
      Array.from({ length: 501 }, (_, i) => [
        `e${i}`,
        { idempotency_key: `key-${i}-${taskId}`, status: "not_started" as const },
      ]),
    );
    const res = await put(t, taskId, makeRecord(taskId, { side_effects }));
    expectError(res, 422, "validation_failed");
    expect(res.text).toContain("at most 500 side effects");
    const ok = await put(
      t,
      taskId,
      makeRecord(taskId, { side_effects: Object.fromEntries(Object.entries(side_effects).slice(0, 500)) }),
    );
    expect(ok.status, ok.text).toBe(200);
    const [n] = await queryRows<{ n: string }>(
      handle.db,
      sql`select count(*) as n from side_effects where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(Number(n!.n)).toBe(500);
    expect(((await askGate(t.apiKey, taskId)).body as GateVerdict).permitted_side_effects).toHaveLength(500);
  });
});
