/**
 * "Run it for real" (docs/concepts.md#interruption-exercises): the demo runtime started with `--interrupt-at <point>
 * --task-id <id>` runs a disposable task that loses its sandbox at that point — the orchestrator reports the
 * interruption, the next attempt waits at the resume gate — and an owner links that task to an interruption exercise,
 * whose page then shows what the product knows about it. After a responder reconciles the write, the run finishes with
 * the record updated once, and the exercise's facts follow.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { ExerciseJson, ExerciseView, MapView } from "@/lib/contract/maps";
import type { StoredEvent, TimelinePage } from "@/lib/contract/api";
import { drillTaskId } from "@/lib/demo/interruption-points";
import { recordIdFor } from "@/scripts/demo-runtime/scenario";
import type { StoredRecord } from "@/scripts/records-service";
import { RuntimeProcess } from "../support/runtime-process";
import { askGate, postReconcile, registerLookup } from "./support/custody-calls";
import { startTempRecords } from "./support/local-servers";
import { signInAs } from "./support/people";
import { effectRow } from "./support/stored-rows";
import { api, baseUrl, createTestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

it("a disposable run loses its sandbox at the chosen point, is linked to an exercise, and finishes after a reconcile", async () => {
  const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
  const owner = await signInAs(t, "owner");
  const records = await startTempRecords();
  cleanups.push(records.stop);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-drill-"));
  cleanups.push(async () => fs.rmSync(workDir, { recursive: true, force: true }));
  expect((await registerLookup(owner, "update_record", `${records.url}/lookup`, 2000)).status).toBe(200);

  const map = (await api(owner).post<MapView>("/api/v1/maps", { workflow: "document-processing", title: "Drill" }))
    .body;
  const ex = (
    await api(owner).post<ExerciseJson>(`/api/v1/maps/${map.id}/exercises`, {
      interruption_point: "after_external_write",
      layers: ["tools"],
    })
  ).body;
  const taskId = drillTaskId("after_external_write", ex.id);

  const runtime = RuntimeProcess.start(
    {
      CUSTODY_URL: baseUrl(),
      CUSTODY_API_KEY: t.apiKey,
      DEMO_WORK_DIR: workDir,
      RECORDS_URL: records.url,
      DEMO_POLL_MS: "200",
    },
    ["--interrupt-at", "after_external_write", "--task-id", taskId],
  );
  cleanups.push(() => runtime.kill());
  await runtime.waitForLine(/INTERRUPT at after_external_write/, 45_000);
  await runtime.waitForLine(/attempt 2: waiting for a person/, 45_000);

  // The orchestrator reported the loss (unlike a crash), the write happened but no receipt arrived.
  const events = (await api(t.apiKey).get<TimelinePage>(`/api/v1/tasks/${taskId}/timeline?limit=1000`)).body
    .events as StoredEvent[];
  expect(events.find((e) => e.type === "run.interrupted" && e.attempt === 1)?.attrs).toMatchObject({
    reason: "sandbox_lost",
  });
  expect(events.filter((e) => e.type === "side_effect.receipt")).toEqual([]);
  expect((await effectRow(handle.db, t.tenantId, taskId, "update_record"))?.status).toBe("unknown");
  expect(
    ((await (await fetch(`${records.url}/records/${recordIdFor(taskId)}`)).json()) as StoredRecord).update_count,
  ).toBe(1);

  // Linked to the exercise, the task's facts show as suggested evidence.
  const steps = ex.steps.map((s) => (s.step === "interrupt" ? { ...s, task_id: taskId, status: "passed" } : s));
  expect(
    (
      await api(owner).request("PATCH", `/api/v1/maps/${map.id}/exercises/${ex.id}`, {
        json: { steps, revision: ex.revision },
      })
    ).status,
  ).toBe(200);
  let view = (await api(owner).get<ExerciseView>(`/api/v1/maps/${map.id}/exercises/${ex.id}`)).body;
  expect(view.linked_tasks).toEqual([
    expect.objectContaining({
      task_id: taskId,
      current_attempt: 2,
      unknown_side_effects: [expect.objectContaining({ name: "update_record" })],
      gate: expect.objectContaining({ verdict: "stop" }),
    }),
  ]);

  // The responder settles it from the lookup; the run resumes, replays the receipt and finishes.
  const settled = await postReconcile(await signInAs(t, "responder"), taskId, "update_record", {
    outcome: "completed",
    use_lookup: true,
    evidence: "The records service's lookup found the update for this idempotency key.",
  });
  expect(settled.status, settled.text).toBe(200);
  expect(await runtime.waitForExit(45_000), runtime.tail()).toBe(0);
  expect(
    ((await (await fetch(`${records.url}/records/${recordIdFor(taskId)}`)).json()) as StoredRecord).update_count,
  ).toBe(1);
  expect((await askGate(t.apiKey, taskId)).body.verdict).not.toBe("stop");
  view = (await api(owner).get<ExerciseView>(`/api/v1/maps/${map.id}/exercises/${ex.id}`)).body;
  expect(view.linked_tasks[0]).toMatchObject({ task_id: taskId, phase: "done", unknown_side_effects: [] });
}, 150_000);
