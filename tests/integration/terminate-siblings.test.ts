/**
 * Siblings of "a terminated task refuses the runtime's further writes" (issue 24, decision 0043): the other paths that
 * start a write or move the task on — a `side_effect.intent` event, a fence to a new attempt, a checkpoint naming a
 * newer attempt — must not reopen an ended task.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import { askGate, checkpoint, getTask, intentBody, newKey, postIntent, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { effectRow } from "./support/stored-rows";
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const enc = encodeURIComponent;

async function endedTask() {
  const t = await createTestTenant(handle.db);
  const taskId = newTaskId("ended");
  await checkpoint(t, taskId);
  const res = await api(await signInAs(t, "responder")).post(`/api/v1/tasks/${enc(taskId)}/terminate`, {
    reason: "runaway loop",
  });
  expect(res.status, res.text).toBe(200);
  return { t, taskId };
}

describe("an ended task stays ended on every path", () => {
  it("a reported side_effect.intent event does not start a write", async () => {
    const { t, taskId } = await endedTask();
    const key = newKey();
    await sendEvents(t, [
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attempt: 1,
        attrs: { name: "send_email", idempotency_key: key },
      }),
    ]);
    const row = await effectRow(handle.db, t.tenantId, taskId, "send_email");
    expect(row?.status ?? "absent").not.toBe("in_flight");
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons[0]?.code).toBe("task_terminated");
  });

  it("a checkpoint naming a newer attempt, and a fence, do not reopen it", async () => {
    const { t, taskId } = await endedTask();
    const put = await api(t.apiKey).put(`/api/v1/tasks/${enc(taskId)}`, makeRecord(taskId, { attempt: 2 }));
    expect(put.status).toBe(409);
    const fence = await api(await signInAs(t, "owner")).post(`/api/v1/tasks/${enc(taskId)}/fence`, {
      reason: "try again",
    });
    expect([200, 409]).toContain(fence.status);
    expect((await getTask(t.apiKey, taskId)).body.phase).toBe("terminated");
    const key = newKey();
    const intent = await postIntent(
      t.apiKey,
      taskId,
      "send_email",
      intentBody(key, { payload_digest: sha256Hex(key), attempt: 2 }),
    );
    expect(intent.status).toBe(409);
    expect((await askGate(t.apiKey, taskId)).body.reasons[0]?.code).toBe("task_terminated");
  });
});
