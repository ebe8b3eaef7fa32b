/**
 * Side-effect status driven by reported events (docs/concepts.md#events, #side-effect-lifecycle): intent → in_flight,
 * receipt → completed, an interruption or a newer sandbox before the receipt → unknown, and replays never regress.
 */
import { describe, expect, it } from "vitest";
import type { EventInput, SideEffectView, TaskView } from "@/lib/contract/api";
import {
  api,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  rid,
  type TestTenant,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();

/** Event times a few seconds apart, just before now: a reported intent's lease (5 minutes) is still live. */
const T0 = Date.now() - 60_000;
const at = (step: number) => new Date(T0 + step * 1000).toISOString();

function intent(taskId: string, key: string, step: number, over: Partial<EventInput> = {}): EventInput {
  return makeEvent(taskId, {
    plane: "tools",
    type: "side_effect.intent",
    occurred_at: at(step),
    attrs: { name: "update_record", idempotency_key: key, payload_digest: "e".repeat(64), action: "records.update" },
    ...over,
  });
}

function receipt(taskId: string, key: string, step: number): EventInput {
  return makeEvent(taskId, {
    plane: "tools",
    type: "side_effect.receipt",
    occurred_at: at(step),
    attrs: {
      name: "update_record",
      idempotency_key: key,
      external_operation_id: "op-771",
      result_digest: "f".repeat(64),
    },
  });
}

async function send(t: TestTenant, events: EventInput[]): Promise<void> {
  const res = await postEvents(t.apiKey, events);
  expect(res.status).toBe(200);
  for (const r of res.body.results) expect(r, JSON.stringify(r)).toMatchObject({ status: "stored" });
}

async function effect(t: TestTenant, taskId: string): Promise<SideEffectView | undefined> {
  const res = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
  expect(res.status).toBe(200);
  return res.body.side_effects["update_record"];
}

describe("side effects from events", () => {
  it("side_effect.intent makes the effect in_flight", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [intent(taskId, key, 1, { attempt: 1 })]);
    expect(await effect(t, taskId)).toMatchObject({
      idempotency_key: key,
      status: "in_flight",
      payload_digest: "e".repeat(64),
    });
  });

  it("side_effect.receipt makes it completed with the receipt", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [intent(taskId, key, 1)]);
    await send(t, [receipt(taskId, key, 2)]);
    const e = await effect(t, taskId);
    expect(e).toMatchObject({ idempotency_key: key, status: "completed" });
    expect(e!.receipt).toMatchObject({ external_operation_id: "op-771", result_digest: "f".repeat(64) });
    expect(Date.parse(e!.receipt!.completed_at)).toBe(Date.parse(at(2)));
  });

  it("run.interrupted after the intent makes it unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [intent(taskId, key, 1)]);
    await send(t, [makeEvent(taskId, { plane: "session", type: "run.interrupted", occurred_at: at(2) })]);
    const e = await effect(t, taskId);
    expect(e?.status).toBe("unknown");
    expect(e?.status_reason).toBeTruthy();
  });

  it("an intent and an interruption in one batch end unknown whatever their order in the batch", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [
      makeEvent(taskId, { plane: "session", type: "run.interrupted", occurred_at: at(2) }),
      intent(taskId, key, 1),
    ]);
    expect((await effect(t, taskId))?.status).toBe("unknown");
  });

  it("an interruption the runtime dates before the intent still makes it unknown: the server's receive order decides", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [intent(taskId, key, 5)]);
    await send(t, [makeEvent(taskId, { plane: "session", type: "run.interrupted", attempt: 1, occurred_at: at(1) })]);
    expect((await effect(t, taskId))?.status).toBe("unknown");
  });

  it("an interruption of an older attempt leaves the current attempt's write in flight", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    await send(t, [
      makeEvent(taskId, { plane: "environment", type: "sandbox.created", attempt: 2, occurred_at: at(0) }),
    ]);
    await send(t, [intent(taskId, key, 1, { attempt: 2 })]);
    // a late delivery of attempt 1's interruption
    await send(t, [makeEvent(taskId, { plane: "session", type: "run.interrupted", attempt: 1, occurred_at: at(2) })]);
    expect((await effect(t, taskId))?.status).toBe("in_flight");
  });

  it("sandbox.created with a higher attempt after the intent makes it unknown", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    const sandbox = (attempt: number, step: number) =>
      makeEvent(taskId, {
        plane: "environment",
        type: "sandbox.created",
        attempt,
        environment_id: `sbx-${attempt}`,
        occurred_at: at(step),
      });
    await send(t, [sandbox(1, 0)]);
    await send(t, [intent(taskId, key, 1, { attempt: 1 })]);
    // the same attempt again (a replayed creation) changes nothing
    await send(t, [sandbox(1, 2)]);
    expect((await effect(t, taskId))?.status).toBe("in_flight");
    await send(t, [sandbox(2, 3)]);
    expect((await effect(t, taskId))?.status).toBe("unknown");
    const view = await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`);
    expect(view.body.current_attempt).toBe(2);
  });

  it("a replayed older event does not regress a completed effect", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const key = `idem-${rid()}`;
    const first = intent(taskId, key, 1, { attempt: 1 });
    await send(t, [first]);
    await send(t, [receipt(taskId, key, 2)]);
    expect((await effect(t, taskId))?.status).toBe("completed");

    // the very same intent delivered again: a duplicate, nothing changes
    const dup = await postEvents(t.apiKey, [first]);
    expect(dup.body.results[0]).toEqual({ id: first.id, status: "duplicate" });
    // an older intent under a new event id, then an interruption and a new sandbox: still completed
    await send(t, [intent(taskId, key, 0, { attempt: 1 })]);
    await send(t, [makeEvent(taskId, { plane: "session", type: "run.interrupted", occurred_at: at(3) })]);
    await send(t, [
      makeEvent(taskId, { plane: "environment", type: "sandbox.created", attempt: 2, occurred_at: at(4) }),
    ]);

    const e = await effect(t, taskId);
    expect(e?.status).toBe("completed");
    expect(e?.receipt?.external_operation_id).toBe("op-771");
  });

  it("rejects side_effect events without a name or idempotency key", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId();
    const res = await postEvents(t.apiKey, [
      makeEvent(taskId, { plane: "tools", type: "side_effect.intent", attrs: { name: "update_record" } }),
      makeEvent(taskId, { plane: "tools", type: "side_effect.receipt", attrs: { idempotency_key: "k-123456789" } }),
    ]);
    expect(res.body.results.map((r) => [r.status, r.error?.code])).toEqual([
      ["rejected", "invalid_event"],
      ["rejected", "invalid_event"],
    ]);
    expect(res.body.results[0]!.error!.message).toContain("idempotency_key");
    expect(res.body.results[1]!.error!.message).toContain("name");
  });
});
