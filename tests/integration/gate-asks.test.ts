/**
 * Gate asks (docs/concepts.md#gate-asks: whether the runtime is alive and polling the gate): each ask of
 * `POST /api/v1/tasks/{id}/resume` with a runtime key is counted per sandbox attempt and shown in the task view
 * (`GET /api/v1/tasks/{id}` → `gate_asks`). A person's asks (the browser's refresh with a session, and the task
 * page's server render) do not count; concurrent asks are all counted; another tenant's key records nothing.
 */
import { describe, expect, it } from "vitest";
import type { GateAskView, TaskView } from "@/lib/contract/api";
import { api, createTestTenant, makeEvent, newTaskId, testDbForFile } from "./helpers";
import { askGate, checkpoint, getTask, intentBody, newKey, postIntent, sendEvents } from "./support/custody-calls";
import { signInAs } from "./support/people";

const handle = testDbForFile();

async function view(auth: Parameters<typeof getTask>[0], taskId: string): Promise<TaskView> {
  const res = await getTask(auth, taskId);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function asks(auth: Parameters<typeof getTask>[0], taskId: string): Promise<GateAskView[]> {
  return (await view(auth, taskId)).gate_asks;
}

describe("gate asks", () => {
  it("counts the runtime's asks per attempt with the last verdict; people's asks do not count", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder", "viewer"] });
    const taskId = newTaskId("asks");
    await checkpoint(t, taskId, { phase: "working" });
    expect(await asks(t.apiKey, taskId)).toEqual([]);

    // A person asks through the API with a session, and opens the task page (which evaluates the gate too).
    const responder = await signInAs(t, "responder");
    expect((await askGate(responder, taskId)).status).toBe(200);
    const page = await api(responder).get(`/tasks/${taskId}`);
    expect(page.status).toBe(200);
    expect(await asks(t.apiKey, taskId), "a person's asks are not the runtime asking").toEqual([]);

    // The runtime asks three times during attempt 1 (its checkpoint named it).
    for (let i = 0; i < 3; i++) expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    const first = await asks(t.apiKey, taskId);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ attempt: 1, asks: 3, last_verdict: "resume" });
    expect(Date.parse(first[0]!.last_asked_at)).toBeGreaterThanOrEqual(Date.parse(first[0]!.first_asked_at));
    expect(first[0]!.seconds_since_last_ask).toBeGreaterThanOrEqual(0);
    expect(first[0]!.seconds_since_last_ask).toBeLessThan(60);

    // Attempt 2 starts; an interrupted write makes the gate stop; the runtime asks again.
    await sendEvents(t, [
      makeEvent(taskId, { plane: "environment", type: "sandbox.created", environment_id: "sbx-2", attempt: 2 }),
    ]);
    const go = await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey(), { attempt: 2 }));
    expect(go.body.decision, go.text).toBe("go");
    await sendEvents(t, [
      makeEvent(taskId, { type: "run.interrupted", attempt: 2, occurred_at: new Date(Date.now() + 500).toISOString() }),
    ]);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("stop");

    const viewer = await signInAs(t, "viewer");
    const both = await asks(viewer, taskId);
    expect(both.map((a) => [a.attempt, a.asks, a.last_verdict])).toEqual([
      [1, 3, "resume"],
      [2, 1, "stop"],
    ]);
    // The page's own refresh of the verdict, with the viewer's session, still counts for nothing.
    expect((await askGate(viewer, taskId)).status).toBe(200);
    expect((await asks(viewer, taskId)).map((a) => a.asks)).toEqual([3, 1]);
  });

  it("counts every one of concurrent asks on an attempt without a row yet (one upsert per ask)", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("asks-race");
    await checkpoint(t, taskId, { phase: "working" });
    const answers = await Promise.all(Array.from({ length: 12 }, () => askGate(t.apiKey, taskId)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect((await asks(t.apiKey, taskId)).map((a) => [a.attempt, a.asks])).toEqual([[1, 12]]);
  });

  it("keeps the last verdict when it changes within an attempt, and counts asks racing on an existing row", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("asks-change");
    await checkpoint(t, taskId, { phase: "working" });
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("resume");
    // The row exists now: further asks are counted by the gate's facts statement itself.
    const racing = await Promise.all(Array.from({ length: 8 }, () => askGate(t.apiKey, taskId)));
    expect(racing.map((a) => a.body.verdict)).toEqual(Array(8).fill("resume"));
    expect((await asks(t.apiKey, taskId)).map((a) => [a.attempt, a.asks, a.last_verdict])).toEqual([[1, 9, "resume"]]);

    // Same attempt, a write whose outcome is unknown: the verdict turns to stop, and the row says so.
    const go = await postIntent(t.apiKey, taskId, "update_record", intentBody(newKey(), { attempt: 1 }));
    expect(go.body.decision, go.text).toBe("go");
    await sendEvents(t, [
      makeEvent(taskId, { type: "run.interrupted", attempt: 1, occurred_at: new Date(Date.now() + 500).toISOString() }),
    ]);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("stop");
    expect((await asks(t.apiKey, taskId)).map((a) => [a.attempt, a.asks, a.last_verdict])).toEqual([[1, 10, "stop"]]);
    expect((await askGate(t.apiKey, taskId)).body.verdict).toBe("stop");
    expect((await asks(t.apiKey, taskId)).map((a) => [a.attempt, a.asks, a.last_verdict])).toEqual([[1, 11, "stop"]]);
  });

  it("records nothing for another tenant's key, which gets 404", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const other = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("asks-tenant");
    await checkpoint(t, taskId, { phase: "working" });
    expect((await askGate(other.apiKey, taskId)).status).toBe(404);
    expect(await asks(t.apiKey, taskId)).toEqual([]);
  });
});
