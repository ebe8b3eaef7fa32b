/**
 * The demo's approval story in the browser, with the real demo runtime (`DEMO_PUBLISH=1`: a child process
 * running `@openai/agents`, talking to the server only over HTTP): the run asks for the approval of publish_report; the
 * demo approves it under policy version 1 and activates policy version 2 while the sandbox is down
 * (scripts/lib/demo-approval.ts); the responder reconciles the record update; an approver signs in, sees the stale
 * approval with the old and new policy version side by side, and re-approves; the runtime resumes from its stored
 * RunState and the records service counts exactly one publish.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TaskView } from "@/lib/contract/api";
import { reportRecordIdFor } from "../scripts/demo-runtime/scenario";
import { seedDemoApproval } from "../scripts/lib/demo-approval";
import { seedDemoPolicies } from "../scripts/lib/demo-policies";
import { seedDemoSettings } from "../scripts/lib/demo-settings";
import { startRecordsService, type RecordsService, type StoredRecord } from "../scripts/records-service";
import { RuntimeProcess } from "../tests/support/runtime-process";
import { createTestTenant, type FullTestTenant } from "../tests/support/tenants";
import { expect, loginAs, newTaskId, test } from "./fixtures";

test.describe("the demo's approval story", () => {
  test.describe.configure({ mode: "serial", timeout: 240_000 });

  let tenant: FullTestTenant;
  let records: RecordsService;
  let runtime: RuntimeProcess | undefined;
  let workDir: string;
  let approvalId = "";
  const taskId = newTaskId("case-appr");
  const baseUrl = process.env.E2E_BASE_URL ?? "";

  test.beforeAll(async ({ db }) => {
    test.setTimeout(180_000);
    tenant = await createTestTenant(db.db);
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-e2e-approval-"));
    records = await startRecordsService({ port: 0, stateFile: path.join(workDir, "records-service.json") });
    await seedDemoSettings(db.db, tenant.tenantId, { recordsUrl: records.url });
    await seedDemoPolicies(db.db, tenant.tenantId, tenant.users.owner, "127.0.0.1");
    runtime = RuntimeProcess.start({
      CUSTODY_URL: baseUrl,
      CUSTODY_API_KEY: tenant.apiKey,
      DEMO_WORK_DIR: path.join(workDir, "demo-work"),
      RECORDS_URL: records.url,
      DEMO_TASK_ID: taskId,
      DEMO_POLL_MS: "500",
      DEMO_PUBLISH: "1",
    });
    const seeded = await seedDemoApproval({
      baseUrl,
      apiKey: tenant.apiKey,
      password: tenant.password,
      taskId,
      log: () => {},
      approverEmail: tenant.users.approver.email,
      ownerEmail: tenant.users.owner.email,
      pollMs: 300,
      timeoutMs: 150_000,
    });
    expect(seeded, runtime.tail()).toBeTruthy();
    approvalId = seeded!;
    await runtime.waitForLine(/attempt 2: waiting for a person/, 120_000);
    // The responder settles the record update (the browser flow of that is e2e/demo-scenario.spec.ts).
    const page = await fetch(`${baseUrl}/api/v1/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${tenant.apiKey}` },
    });
    expect(((await page.json()) as TaskView).side_effects.update_record?.status).toBe("unknown");
  });

  test.afterAll(async () => {
    await runtime?.kill();
    await records?.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  test("stale with the diff, re-approved in the browser; the run resumes and publishes exactly once", async ({
    page,
  }) => {
    await test.step("the responder reconciles update_record with the lookup answer", async () => {
      await loginAs(page, tenant.users.responder.email, tenant.password);
      const lookup = (await (
        await fetch(`${records.url}/lookup?idempotency_key=${encodeURIComponent(`idem:${taskId}:update_record:1`)}`)
      ).json()) as {
        found: boolean;
        external_operation_id?: string;
      };
      expect(lookup.found).toBe(true);
      const res = await page.request.post(`/api/v1/tasks/${taskId}/side-effects/update_record/reconcile`, {
        data: {
          outcome: "completed",
          external_operation_id: lookup.external_operation_id,
          evidence: "The records service's lookup found the update.",
        },
      });
      expect(res.status(), await res.text()).toBe(200);
      await page.context().clearCookies();
    });

    await test.step("the gate still stops: the publish approval is stale", async () => {
      const gate = await fetch(`${baseUrl}/api/v1/tasks/${taskId}/resume`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
        body: "{}",
      });
      const verdict = (await gate.json()) as { verdict: string; reasons: Array<{ code: string }> };
      expect(verdict.verdict).toBe("stop");
      expect(verdict.reasons.map((r) => r.code)).toContain("approval_stale");
    });

    await test.step("the approver sees it stale with policy 1 → 2 side by side and re-approves", async () => {
      await loginAs(page, tenant.users.approver.email, tenant.password);
      await page.goto("/approvals");
      const row = page.locator(`[data-testid="approval-row"][data-approval="${approvalId}"]`);
      await expect(row).toHaveAttribute("data-status", "stale");
      await row.getByRole("link", { name: /Open the approval/ }).click();
      await expect(page.getByTestId("stale-panel")).toContainText("the policy version changed");
      const change = page.locator('[data-testid="changes-table"] tr[data-field="policy_version"]');
      await expect(change).toContainText("1");
      await expect(change).toContainText("2");
      await page.getByTestId("approve-button").click();
      const dialog = page.getByTestId("confirm-dialog");
      await expect(dialog.getByRole("heading")).toContainText(`Re-approve reports.publish for task ${taskId}`);
      await dialog.getByTestId("decision-reason").fill("Checked against policy 2");
      await dialog.getByTestId("confirm-decision").click();
      await expect(page.getByTestId("approval-status")).toHaveAttribute("data-status", "approved");
    });

    await test.step("the runtime resumes from its stored RunState and publishes once", async () => {
      expect(await runtime!.waitForExit(120_000), runtime!.tail()).toBe(0);
      expect(
        runtime!.lines.some((l) => /run paused on 1 approval\(s\); state stored as/.test(l)),
        runtime!.tail(),
      ).toBe(true);
      const published = (await (
        await fetch(`${records.url}/records/${reportRecordIdFor(taskId)}`)
      ).json()) as StoredRecord;
      expect(published.update_count).toBe(1);
      await page.goto(`/tasks/${taskId}`);
      await expect(page.locator('[data-testid=side-effect-row][data-name="publish_report"]')).toHaveAttribute(
        "data-status",
        "completed",
      );
    });
  });
});
