/**
 * Actions on a task (issue 24, decision 0043), over the real HTTP API on PostgreSQL:
 * - ending a task (`POST …/terminate`): a responder or owner ends it with a reason, audited in the same transaction;
 *   the gate then answers stop (`task_terminated`), intents and checkpoints are refused, events and receipts are still
 *   recorded; a second end is a conflict; viewers and approvers are refused (403), another tenant's task is not found
 *   (404), a runtime key may not (403), a body without a reason is refused and nothing is written.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
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
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;

const writeBody = () => {
  const key = newKey();
  return { key, body: intentBody(key, { payload_digest: sha256Hex(key) }) };
};

describe("ending a task (POST /api/v1/tasks/{id}/terminate)", () => {
  it("a responder ends a task: audited, the gate stops, intents and checkpoints are refused, receipts still land", async () => {
    const t = await createTestTenant(handle.db);
    const taskId = newTaskId("end");
    await checkpoint(t, taskId);
    const inFlight = writeBody();
    expect((await postIntent(t.apiKey, taskId, "update_record", inFlight.body)).body.decision).toBe("go");
    const responder = await signInAs(t, "responder");
    const res = await api(responder).post<{ previous_phase: string; terminated_by: string; reason: string }>(
      `/api/v1/tasks/${enc(taskId)}/terminate`,
      { reason: "runaway loop" },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ previous_phase: "reading", reason: "runaway loop" });

    const audit = await queryRows<{ details: { reason: string; previous_phase: string } }>(
      handle.db,
      sql`select details from audit_log where tenant_id = ${t.tenantId} and action = 'task.terminated' and target = ${`task:${taskId}`}`,
    );
    expect(audit.map((a) => a.details)).toEqual([{ reason: "runaway loop", previous_phase: "reading" }]);

    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.phase).toBe("terminated");
    expect(view.terminated).toMatchObject({ reason: "runaway loop", by: res.body.terminated_by });

    const gate = await askGate(t.apiKey, taskId);
    expect(gate.status, gate.text).toBe(200);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons[0]).toMatchObject({ code: "task_terminated" });
    expect(gate.body.reasons[0]!.message).toContain("runaway loop");

    expectError(await postIntent(t.apiKey, taskId, "send_email", writeBody().body), 409, "gate_stop");
    expectError(
      await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId, { phase: "reading" })),
      409,
      "task_terminated",
    );
    // The write that was in flight may still be settled by its receipt; events are still recorded.
    const receipt = await postReceipt(t.apiKey, taskId, "update_record", receiptBody(inFlight.key));
    expect(receipt.status, receipt.text).toBe(200);
    await sendEvents(t, [makeEvent(taskId)]);
    expect((await getTask(t.apiKey, taskId)).body.phase).toBe("terminated");

    // A second end is a conflict that names who ended it; nothing more is audited.
    const again = await api(await signInAs(t, "owner")).post(`/api/v1/tasks/${enc(taskId)}/terminate`, {
      reason: "again",
    });
    expectError(again, 409, "conflict");
    expect(again.text).toContain(res.body.terminated_by);
    const [{ n }] = (await queryRows<{ n: string | number }>(
      handle.db,
      sql`select count(*) as n from audit_log where tenant_id = ${t.tenantId} and action = 'task.terminated'`,
    )) as [{ n: string | number }];
    expect(Number(n)).toBe(1);
  });

  it("refuses viewers, approvers and runtime keys (403), another tenant (404), and a missing reason (422): nothing written", async () => {
    const t = await createTestTenant(handle.db);
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const taskId = newTaskId("end-who");
    await checkpoint(t, taskId);
    const path = `/api/v1/tasks/${enc(taskId)}/terminate`;
    const body = { reason: "should not end" };
    for (const role of ["viewer", "approver"] as const)
      expectError(await api(await signInAs(t, role)).post(path, body), 403, "forbidden");
    expectError(await api(t.apiKey).post(path, body), 403, "forbidden");
    expectError(await api(await signInAs(other, "owner")).post(path, body), 404, "not_found");
    expectError(await api(other.apiKey).post(path, body), 403, "forbidden");
    const owner = await signInAs(t, "owner");
    expectError(await api(owner).post(path, {}), 422, "validation_failed");
    expectError(await api(owner).post(path, { reason: "   " }), 422, "validation_failed");
    expectError(await api(owner).post(path, { reason: "x", extra: 1 }), 422, "validation_failed");
    expectError(await api(owner).post(`/api/v1/tasks/${enc(newTaskId("nope"))}/terminate`, body), 404, "not_found");
    const view = (await getTask(t.apiKey, taskId)).body;
    expect(view.terminated).toBeNull();
    expect(view.phase).toBe("reading");
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    const rows = await queryRows<{ n: string | number }>(
      handle.db,
      sql`select count(*) as n from audit_log where tenant_id = ${t.tenantId} and action = 'task.terminated'`,
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
