/**
 * The side-effect lifecycle's audit entries (decision 0024, docs/architecture.md#side-effects-and-the-gate): moves
 * made by events are audited as the key that sent them, moves made by the clock as the system actor `clock`, moves a
 * request makes to other effects (a newer attempt) as its caller — once per moved effect, and the chain still verifies
 * (`GET /api/v1/audit/verify`). Entries written by a statement itself hash exactly as entries written from JavaScript.
 */
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { queryRows, type Db } from "@/db";
import type { EventInput } from "@/lib/contract/api";
import { auditPendingRowsSql, rowValue, sealAudit } from "@/lib/domain/audit/append";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { verifyAuditChain } from "@/lib/domain/audit/read";
import type { SystemActor } from "@/lib/domain/authz";
import {
  api,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  rid,
  testDbForFile,
  type TestTenant,
} from "./helpers";
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
import { effectRow } from "./support/stored-rows";

const handle = testDbForFile();

type Entry = {
  seq: number;
  target: string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  details: Record<string, unknown>;
};

/** The tenant's `side_effect.transitioned` entries (sealed ones: the routes seal before they answer), oldest first. */
async function transitions(db: Db, tenantId: string, taskId?: string): Promise<Entry[]> {
  const rows = await queryRows<Entry & { seq: string | number }>(
    db,
    sql`select seq, target, actor_kind::text as actor_kind, actor_id, actor_label, details from audit_log
        where tenant_id = ${tenantId} and action = 'side_effect.transitioned'
          ${taskId ? sql`and target like ${`side_effect:${taskId}/%`}` : sql``}
        order by seq`,
  );
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

async function pendingCount(db: Db, tenantId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from audit_pending where tenant_id = ${tenantId}`,
  );
  return row!.n;
}

async function runtimeKey(db: Db, tenantId: string): Promise<{ id: string; label: string }> {
  const [row] = await queryRows<{ id: string; name: string }>(
    db,
    sql`select id::text as id, name from api_keys where tenant_id = ${tenantId} order by created_at limit 1`,
  );
  return { id: row!.id, label: `key:${row!.name}` };
}

/** The chain as the API verifies it, asked by the tenant's owner. */
async function verifyChain(t: TestTenant): Promise<{ valid: boolean; checked: number }> {
  const res = await api(await signInAs(t, "owner")).get<{ valid: boolean; checked: number }>("/api/v1/audit/verify");
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function reportedIntent(taskId: string, name: string, key: string, attempt = 1): EventInput {
  return makeEvent(taskId, {
    plane: "tools",
    type: "side_effect.intent",
    attempt,
    occurred_at: new Date(Date.now() - 30_000).toISOString(),
    // Each write its own payload: one payload reported under two names is a duplicate (decision 0029).
    attrs: { name, idempotency_key: key, payload_digest: sha256Hex(name), action: "records.update" },
  });
}

/** A checkpointed task with `name` in flight (the intent route's go), whose lease is then made to have run out. */
async function expiredLease(t: TestTenant, name = "update_record"): Promise<{ taskId: string; key: string }> {
  const taskId = newTaskId("lease");
  const key = newKey();
  await checkpoint(t, taskId, { side_effects: { [name]: { idempotency_key: key, status: "not_started" } } });
  const go = await postIntent(t.apiKey, taskId, name, intentBody(key));
  expect(go.status, go.text).toBe(200);
  // Test set-up standing in for five minutes of the clock.
  await handle.db.execute(
    sql`update side_effects set lease_expires_at = now() - interval '1 second'
        where tenant_id = ${t.tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  return { taskId, key };
}

describe("moves made by events are audited as the key that sent them", () => {
  it("a reported intent and an interruption: one entry each, naming the event; the chain verifies", async () => {
    const t = await createTestTenant(handle.db);
    const key = await runtimeKey(handle.db, t.tenantId);
    const taskId = newTaskId("events");
    const idem = newKey();
    await checkpoint(t, taskId, { side_effects: { update_record: { idempotency_key: idem, status: "not_started" } } });
    const intent = reportedIntent(taskId, "update_record", idem);
    const interrupted = makeEvent(taskId, { type: "run.interrupted", attrs: { reason: "sandbox_lost" } });
    await sendEvents(t, [intent]);
    await sendEvents(t, [interrupted]);
    expect((await effectRow(handle.db, t.tenantId, taskId, "update_record"))?.status).toBe("unknown");

    const entries = await transitions(handle.db, t.tenantId, taskId);
    expect(entries.map((e) => [e.details.transition, e.details.from, e.details.to, e.details.event_id])).toEqual([
      ["reported_intent", "not_started", "in_flight", intent.id],
      ["attempt_ended", "in_flight", "unknown", interrupted.id],
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({
        target: `side_effect:${taskId}/update_record`,
        actor_kind: "api_key",
        actor_id: key.id,
        actor_label: key.label,
      });
      expect(e.details.idempotency_key).toBe(idem);
    }
    // A replay of the same events moves nothing and writes nothing.
    await postEvents(t.apiKey, [intent, interrupted]);
    expect(await transitions(handle.db, t.tenantId, taskId)).toHaveLength(2);
    expect(await pendingCount(handle.db, t.tenantId)).toBe(0);
    expect((await verifyChain(t)).valid).toBe(true);
  });

  it("a receipt event and a tool call of an ended attempt are audited too", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("events");
    const idem = newKey();
    await checkpoint(t, taskId);
    await sendEvents(t, [reportedIntent(taskId, "send_email", idem)]);
    const receipt = makeEvent(taskId, {
      plane: "tools",
      type: "side_effect.receipt",
      attempt: 1,
      attrs: { name: "send_email", idempotency_key: idem, external_operation_id: "op-1" },
    });
    await sendEvents(t, [receipt]);
    await sendEvents(t, [makeEvent(taskId, { type: "run.stopped" })]);
    const call = makeEvent(taskId, {
      plane: "tools",
      type: "tool.called",
      attempt: 1,
      attrs: { tool: "records.write", call_id: `call-${rid()}`, mutation: true },
    });
    await sendEvents(t, [call]);

    const moved = (await transitions(handle.db, t.tenantId, taskId)).map((e) => [
      e.details.transition,
      e.details.from,
      e.details.to,
      e.details.event_id,
      e.actor_kind,
    ]);
    expect(moved).toEqual([
      ["reported_intent", "absent", "in_flight", expect.any(String), "api_key"],
      ["receipt_completes", "in_flight", "completed", receipt.id, "api_key"],
      ["orphan_call_created", "absent", "unknown", call.id, "api_key"],
    ]);
    expect((await verifyChain(t)).valid).toBe(true);
  });

  it("a batch of 1,000 reported intents writes one entry per moved effect, and they all verify", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("batch");
    await checkpoint(t, taskId);
    const events = Array.from({ length: 1000 }, (_, i) => reportedIntent(taskId, `write_${i}`, newKey(`k${i}`)));
    await sendEvents(t, events);
    const entries = await transitions(handle.db, t.tenantId, taskId);
    expect(entries).toHaveLength(1000);
    expect(new Set(entries.map((e) => e.details.event_id))).toEqual(new Set(events.map((e) => e.id)));
    expect(entries.every((e) => e.details.transition === "reported_intent" && e.actor_kind === "api_key")).toBe(true);
    // The batch's entries are consecutive in the chain (one insert, sealed together).
    expect(entries.at(-1)!.seq - entries[0]!.seq).toBe(999);
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });
});

describe("moves made by the clock are audited as the system actor clock", () => {
  it("the gate notices a lease that ran out: one entry; asking again writes none; the chain verifies", async () => {
    const t = await createTestTenant(handle.db);
    const { taskId, key } = await expiredLease(t);
    const verdict = await askGate(t.apiKey, taskId);
    expect(verdict.body.reasons.map((r) => r.code)).toContain("side_effect_unknown");
    await askGate(t.apiKey, taskId);
    const entries = await transitions(handle.db, t.tenantId, taskId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      target: `side_effect:${taskId}/update_record`,
      actor_kind: "system",
      actor_id: "system",
      actor_label: "clock",
      details: {
        transition: "lease_expired",
        from: "in_flight",
        to: "unknown",
        idempotency_key: key,
        reason: "The lease expired before a receipt was recorded.",
        lease_expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      },
    });
    expect(await pendingCount(handle.db, t.tenantId)).toBe(0);
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });

  it("an intent, the task view, a batch of events, a receipt and a reconcile notice it just as well", async () => {
    const t = await createTestTenant(handle.db);
    const responder = await signInAs(t, "responder");
    const noticed: Record<string, () => Promise<unknown>> = {};
    const tasks: Record<string, string> = {};
    for (const path of ["intent", "view", "events", "receipt", "reconcile"]) {
      const { taskId, key } = await expiredLease(t);
      tasks[path] = taskId;
      noticed[path] = {
        intent: () => postIntent(t.apiKey, taskId, "update_record", intentBody(key)),
        view: () => getTask(t.apiKey, taskId),
        events: () =>
          postEvents(t.apiKey, [makeEvent(taskId, { plane: "environment", type: "sandbox.created", attempt: 1 })]),
        receipt: () => postReceipt(t.apiKey, taskId, "update_record", receiptBody(key)),
        reconcile: () =>
          api(responder).post(`/api/v1/tasks/${taskId}/side-effects/update_record/reconcile`, {
            outcome: "completed",
            external_operation_id: "op-9",
            evidence: "The records system shows the write under this key.",
          }),
      }[path]!;
    }
    for (const [path, notice] of Object.entries(noticed)) {
      await notice();
      const taskId = tasks[path]!;
      const entries = await transitions(handle.db, t.tenantId, taskId);
      expect([path, entries.map((e) => [e.details.transition, e.actor_kind, e.actor_label])]).toEqual([
        path,
        [["lease_expired", "system", "clock"]],
      ]);
    }
    expect(await pendingCount(handle.db, t.tenantId)).toBe(0);
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });
});

describe("a lease that runs out is heard about", () => {
  it("the clock's move queues side_effect.unknown and task.needs_attention for subscribed endpoints, once, with ids and a link", async () => {
    const t = await createTestTenant(handle.db);
    // Endpoints stand in for ones made through Settings (their address checks are the webhooks test's).
    for (const events of [["side_effect.unknown", "task.needs_attention"], ["approval.requested"]]) {
      await handle.db.execute(
        sql`insert into notification_endpoints (tenant_id, url, events, format, sealed_secret, created_by)
            values (${t.tenantId}, 'https://hooks.example.test/custody', ${`{${events.join(",")}}`}::text[], 'standard', 'sealed', 'test')`,
      );
    }
    const { taskId, key } = await expiredLease(t);
    await askGate(t.apiKey, taskId);
    await askGate(t.apiKey, taskId);
    const queued = await queryRows<{ event: string; payload: { type: string; data: Record<string, unknown> } }>(
      handle.db,
      sql`select event, payload from notification_deliveries where tenant_id = ${t.tenantId} order by event`,
    );
    // The clock's move queues one of each; the runtime's gate ask answered stop adds its own needs-attention.
    expect(queued.map((q) => `${q.event}/${String(q.payload.data.reason)}`).sort()).toEqual([
      "side_effect.unknown/lease_expired",
      "task.needs_attention/gate_stopped",
      "task.needs_attention/side_effect_unknown",
    ]);
    expect(queued.find((q) => q.event === "side_effect.unknown")!.payload).toMatchObject({
      type: "side_effect.unknown",
      data: {
        task_id: taskId,
        side_effect: "update_record",
        idempotency_key: key,
        reason: "lease_expired",
        link: `/tasks/${encodeURIComponent(taskId)}`,
      },
    });
    expect(queued.find((q) => q.payload.data.reason === "side_effect_unknown")!.payload.data).toEqual({
      task_id: taskId,
      reason: "side_effect_unknown",
      link: `/tasks/${encodeURIComponent(taskId)}`,
    });
  });
});

describe("an effect a checkpoint declares unknown is heard about", () => {
  it("queues side_effect.unknown (reason declared) and task.needs_attention once; a later checkpoint adds none", async () => {
    const t = await createTestTenant(handle.db);
    await handle.db.execute(
      sql`insert into notification_endpoints (tenant_id, url, events, format, sealed_secret, created_by)
          values (${t.tenantId}, 'https://hooks.example.test/custody', '{side_effect.unknown,task.needs_attention}'::text[],
                  'standard', 'sealed', 'test')`,
    );
    const taskId = newTaskId("declared");
    const key = newKey();
    const effects = {
      side_effects: {
        send_invoice: { idempotency_key: key, status: "in_flight" as const },
        draft: { idempotency_key: newKey(), status: "not_started" as const },
      },
    };
    await checkpoint(t, taskId, effects);
    await checkpoint(t, taskId, effects);
    const queued = await queryRows<{ event: string; payload: { data: Record<string, unknown> } }>(
      handle.db,
      sql`select event, payload from notification_deliveries where tenant_id = ${t.tenantId} order by event`,
    );
    expect(queued.map((q) => q.event)).toEqual(["side_effect.unknown", "task.needs_attention"]);
    expect(queued[0]!.payload.data).toMatchObject({
      task_id: taskId,
      side_effect: "send_invoice",
      idempotency_key: key,
      reason: "declared",
    });
  });
});

describe("moves a request makes to other effects", () => {
  it("an intent from a newer attempt ends the older attempt's in-flight write, audited as the runtime's", async () => {
    const t = await createTestTenant(handle.db);
    const key = await runtimeKey(handle.db, t.tenantId);
    const taskId = newTaskId("fence");
    const [first, second] = [newKey(), newKey()];
    await checkpoint(t, taskId, {
      side_effects: {
        first: { idempotency_key: first, status: "not_started" },
        second: { idempotency_key: second, status: "not_started" },
      },
    });
    expect((await postIntent(t.apiKey, taskId, "first", intentBody(first))).status).toBe(200);
    // The newer attempt's own write is then refused (the ended write is unknown: the gate stops); the move stands.
    const refused = await postIntent(t.apiKey, taskId, "second", intentBody(second, { attempt: 2 }));
    expect(refused.status, refused.text).toBe(409);
    const entries = await transitions(handle.db, t.tenantId, taskId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      target: `side_effect:${taskId}/first`,
      actor_kind: "api_key",
      actor_id: key.id,
      details: { transition: "attempt_ended", from: "in_flight", to: "unknown", idempotency_key: first },
    });
    expect(entries[0]!.details).not.toHaveProperty("event_id");
    // The intent's own go is its `side_effect.intent_recorded` entry, not a transition entry.
    const [intents] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from audit_log where tenant_id = ${t.tenantId} and action = 'side_effect.intent_recorded'`,
    );
    expect(intents!.n).toBe(2);
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });
});

describe("a receipt under the attempt it names", () => {
  it("a receipt from a newer attempt raises the task's attempt and ends the older attempt's in-flight writes, its own included", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("receipt-raise");
    const [first, second] = [newKey(), newKey()];
    await checkpoint(t, taskId, {
      side_effects: {
        first: { idempotency_key: first, status: "not_started" },
        second: { idempotency_key: second, status: "not_started" },
      },
    });
    expect((await postIntent(t.apiKey, taskId, "first", intentBody(first))).status).toBe(200);
    const other = await postIntent(t.apiKey, taskId, "second", intentBody(second, { payload_digest: hex("b") }));
    expect(other.status, other.text).toBe(200);
    // Attempt 2 reports the receipt of attempt 1's write: the raise stands, both writes end unknown, and the receipt
    // is kept for the person who reconciles rather than completing a write its attempt no longer holds.
    const res = await postReceipt(t.apiKey, taskId, "first", receiptBody(first, { attempt: 2 }));
    expect(res.status, res.text).toBe(409);
    expect(res.body).toMatchObject({ error: { code: "reconcile_required", details: { kept_as_evidence: true } } });
    const [task] = await queryRows<{ current_attempt: number }>(
      handle.db,
      sql`select current_attempt from tasks where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(task!.current_attempt).toBe(2);
    expect((await effectRow(handle.db, t.tenantId, taskId, "first"))!.status).toBe("unknown");
    expect((await effectRow(handle.db, t.tenantId, taskId, "second"))!.status).toBe("unknown");
    const entries = await transitions(handle.db, t.tenantId, taskId);
    expect(entries.map((e) => [e.target, e.details.transition]).sort()).toEqual([
      [`side_effect:${taskId}/first`, "attempt_ended"],
      [`side_effect:${taskId}/second`, "attempt_ended"],
    ]);
    const [kept] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from unapplied_receipts where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(kept!.n).toBe(1);
    expect(await pendingCount(handle.db, t.tenantId)).toBe(0);
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });

  it("a receipt from an older attempt is kept as evidence and refused stale_attempt, completing nothing", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("receipt-stale");
    const key = newKey();
    await checkpoint(t, taskId, { side_effects: { write: { idempotency_key: key, status: "not_started" } } });
    expect((await postIntent(t.apiKey, taskId, "write", intentBody(key, { attempt: 2 }))).status).toBe(200);
    const stale = await postReceipt(t.apiKey, taskId, "write", receiptBody(key, { attempt: 1 }));
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body).toMatchObject({
      error: { code: "stale_attempt", details: { attempt: 1, current_attempt: 2 } },
    });
    expect((await effectRow(handle.db, t.tenantId, taskId, "write"))!.status).toBe("in_flight");
    const kept = await queryRows<{ attempt: number }>(
      handle.db,
      sql`select attempt from unapplied_receipts where tenant_id = ${t.tenantId} and task_id = ${taskId}`,
    );
    expect(kept.map((r) => Number(r.attempt))).toEqual([1]);
    // The current attempt's own receipt then completes the write.
    const current = await postReceipt(t.apiKey, taskId, "write", receiptBody(key, { attempt: 2 }));
    expect(current.status, current.text).toBe(200);
    expect((await effectRow(handle.db, t.tenantId, taskId, "write"))!.status).toBe("completed");
    expect(await verifyChain(t)).toMatchObject({ valid: true });
  });
});

describe("entries a statement writes for its rows", () => {
  it("hash as RFC 8785 JSON of their values, whatever text the rows hold", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const actor: SystemActor = { kind: "system", tenantId: t.tenantId, label: "template test" };
    // Control characters, quotes, backslashes, separators JSON leaves alone, and any character (NUL aside: PostgreSQL
    // text cannot hold it).
    const unit = fc.oneof(
      fc.constantFrom("\n", "\t", "\u0001", "\u001f", '"', "\\", "\u2028", "\u007f", "é"),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
    );
    const text = fc.array(unit, { maxLength: 12 }).map((parts) => parts.join(""));
    const rows = fc.sample(fc.tuple(text, fc.option(fc.integer({ min: -1_000_000, max: 1_000_000 }))), 300);
    const sample = rows.filter(([s]) => !s.includes("\u0000")).map(([v, n]) => ({ v, n }));
    const [written] = await queryRows<{ n: number }>(
      handle.db,
      sql`with a as (${auditPendingRowsSql(
        actor,
        {
          action: "side_effect.transitioned",
          target: rowValue(sql`'row:' || x.v`),
          details: { value: rowValue(sql`x.v`), number: rowValue(sql`x.n`), constant: '✓ "quoted"' },
        },
        sql`json_to_recordset(${JSON.stringify(sample)}::json) as x(v text, n integer)`,
      )}) select count(*)::int as n from a`,
    );
    expect(written!.n).toBe(sample.length);
    expect(await sealAudit(handle.db, t.tenantId)).toBe(sample.length);
    expect(await verifyAuditChain({ db: handle.db, actor })).toMatchObject({ ok: true, checked: sample.length });
  });
});
