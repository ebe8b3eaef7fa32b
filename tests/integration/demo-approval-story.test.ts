/**
 * The demo's approval story through the API, with the real demo runtime (`DEMO_PUBLISH=1`, a child process
 * running `@openai/agents`): the run asks for the approval of publish_report, the approver approves it under policy
 * version 1 (scripts/lib/demo-approval.ts), the sandbox is lost, policy version 2 is activated while it is down, the
 * approval is stale and the gate stops for it; the responder reconciles the record update, the approver re-approves;
 * the runtime resumes from the stored RunState checkpoint artifact and the records service counts exactly one publish.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { TaskView } from "@/lib/contract/api";
import { publishKeyFor, recordIdFor, reportRecordIdFor } from "@/scripts/demo-runtime/scenario";
import { seedDemoApproval } from "@/scripts/lib/demo-approval";
import { seedDemoPolicies } from "@/scripts/lib/demo-policies";
import type { StoredRecord } from "@/scripts/records-service";
import { RuntimeProcess } from "../support/runtime-process";
import { askGate, postReconcile, registerLookup } from "./support/custody-calls";
import { startTempRecords } from "./support/local-servers";
import { signInAs } from "./support/people";
import { waitFor } from "./support/waiting";
import { api, baseUrl, createTestTenant, newTaskId, testDbForFile } from "./helpers";

const handle = testDbForFile();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
});

type Approval = {
  id: string;
  status: string;
  stale_reasons: string[];
  side_effect: string;
  policy_version: string;
  superseded_by: string | null;
  changes?: Array<{ field: string; approved: string | null; current: string | null }>;
};

it("seeded approval → policy change while the sandbox is down → stale → re-approved → published exactly once", async () => {
  const t = await createTestTenant(handle.db);
  const owner = await signInAs(t, "owner");
  const approver = await signInAs(t, "approver");
  const records = await startTempRecords();
  cleanups.push(() => records.stop());
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-approval-story-"));
  cleanups.push(async () => fs.rmSync(workDir, { recursive: true, force: true }));
  expect((await registerLookup(owner, "update_record", `${records.url}/lookup`, 2000)).status).toBe(200);
  // As `npm run demo` does: policy versions 1 and 2 stored, 1 active (the story activates 2).
  expect(await seedDemoPolicies(handle.db, t.tenantId, t.users.owner!, "127.0.0.1")).toBe(true);
  const taskId = newTaskId("case-approval");

  const runtime = RuntimeProcess.start({
    CUSTODY_URL: baseUrl(),
    CUSTODY_API_KEY: t.apiKey,
    DEMO_WORK_DIR: workDir,
    RECORDS_URL: records.url,
    DEMO_POLL_MS: "200",
    DEMO_TASK_ID: taskId,
    DEMO_PUBLISH: "1",
  });
  cleanups.push(() => runtime.kill());
  const lines: string[] = [];
  const seeded = await seedDemoApproval({
    baseUrl: baseUrl(),
    apiKey: t.apiKey,
    password: t.password,
    taskId,
    log: (l) => lines.push(l),
    approverEmail: t.users.approver!.email,
    ownerEmail: t.users.owner!.email,
    pollMs: 200,
    timeoutMs: 150_000,
  }).catch((err: unknown) => {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\n${lines.join("\n")}\n--- runtime ---\n${runtime.tail(60)}`,
    );
  });
  expect(seeded, lines.join("\n")).toBeTruthy();
  await runtime.waitForLine(/attempt 2: waiting for a person/, 90_000);

  // Stale with the diff: policy 1 → 2; the gate stops for the approval and for the unknown write.
  const stale = await waitFor("the approval to be stale", async () => {
    const a = (await api(approver).get<Approval>(`/api/v1/approvals/${seeded}`)).body;
    return a.status === "stale" ? a : undefined;
  });
  expect(stale.stale_reasons).toContain("policy_changed");
  expect(stale.changes).toEqual(
    expect.arrayContaining([expect.objectContaining({ field: "policy_version", approved: "1", current: "2" })]),
  );
  const gate = (await askGate(t.apiKey, taskId)).body;
  expect(gate.verdict).toBe("stop");
  expect(gate.reasons.map((r) => r.code)).toEqual(expect.arrayContaining(["side_effect_unknown"]));
  expect(gate.reasons.map((r) => r.code).some((c) => c === "approval_stale" || c === "policy_changed")).toBe(true);

  // People act: the responder reconciles, the approver re-approves.
  const settled = await postReconcile(await signInAs(t, "responder"), taskId, "update_record", {
    outcome: "completed",
    use_lookup: true,
    evidence: "The records service's lookup found the update for this idempotency key.",
  });
  expect(settled.status, settled.text).toBe(200);
  const reapproved = await api(approver).post<Approval>(`/api/v1/approvals/${seeded}/decision`, {
    decision: "approve",
    reason: "Still fine under policy 2.",
  });
  expect(reapproved.status, reapproved.text).toBe(200);

  expect(await runtime.waitForExit(90_000), runtime.tail()).toBe(0);
  expect(
    runtime.lines.some((l) => /state stored as demo-store:\/\/.*run-state\.json/.test(l)),
    runtime.tail(),
  ).toBe(true);
  const published = (await (await fetch(`${records.url}/records/${reportRecordIdFor(taskId)}`)).json()) as StoredRecord;
  expect(published.update_count).toBe(1);
  expect(
    ((await (await fetch(`${records.url}/records/${recordIdFor(taskId)}`)).json()) as StoredRecord).update_count,
  ).toBe(1);
  const task = (await api(t.apiKey).get<TaskView>(`/api/v1/tasks/${taskId}`)).body;
  expect(task.phase).toBe("done");
  expect(task.side_effects.publish_report).toMatchObject({
    status: "completed",
    idempotency_key: publishKeyFor(taskId),
  });
  expect(
    task.record?.artifacts.some(
      (a) => a.media_type === "application/vnd.openai-agents.run-state+json" && /^[0-9a-f]{64}$/.test(a.sha256),
    ),
  ).toBe(true);
}, 360_000);
