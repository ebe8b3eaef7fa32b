/**
 * The reference scenario end to end, with real input: the demo runtime (`scripts/demo-runtime.ts`, a child
 * process talking to the server only over HTTP) runs the agent until its sandbox is lost and the resume gate
 * says `stop`; then a responder finds the task in the browser, sees the four-lane timeline and the `unknown`
 * write, reconciles it with the records service's lookup answer, and the gate flips to `resume`; the runtime
 * finishes and the records service has applied the update exactly once.
 *
 * Seeds its own tenant, registers the lookup for `update_record`, and starts the records service in this
 * process on a free port. Screenshots of the task page before and after reconciling, and of the reconcile dialog:
 * attached to the test and written to `e2e/artifacts/` (git-ignored).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page, TestInfo } from "@playwright/test";
import type { GateVerdict, TaskView } from "@/lib/contract/api";
import {
  startRecordsService,
  type LookupAnswer,
  type RecordsService,
  type StoredRecord,
} from "../scripts/records-service";
import { seedDemoSettings } from "../scripts/lib/demo-settings";
import { idempotencyKeyFor, recordIdFor } from "../scripts/demo-runtime/scenario";
import { RuntimeProcess } from "../tests/support/runtime-process";
import { createTestTenant, type FullTestTenant } from "../tests/support/tenants";
import { expect, newTaskId, test } from "./fixtures";

const ROOT = path.resolve(__dirname, "..");
const ARTIFACTS = path.join(ROOT, "e2e", "artifacts");
const LANES = [
  { plane: "session", label: "Session" },
  { plane: "environment", label: "Environment" },
  { plane: "tools", label: "Tools & egress" },
  { plane: "vault", label: "Vault" },
] as const;
const EFFECT = "update_record";

/** Full-page screenshot: attached to the test, kept in its output folder and copied to e2e/artifacts/. */
async function keepScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.copyFileSync(file, path.join(ARTIFACTS, name));
}

async function apiJson<T>(
  baseUrl: string,
  apiKey: string,
  urlPath: string,
  method = "GET",
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
    },
    body: method === "POST" ? "{}" : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

test.describe("the reference scenario in the browser", () => {
  test.describe.configure({ mode: "serial", timeout: 150_000 });

  let tenant: FullTestTenant;
  let records: RecordsService;
  let runtime: RuntimeProcess | undefined;
  let workDir: string;
  const taskId = newTaskId("case-e2e");
  const baseUrl = process.env.E2E_BASE_URL ?? "";

  test.beforeAll(async ({ db }) => {
    test.setTimeout(90_000);
    expect(baseUrl, "playwright.config.ts sets E2E_BASE_URL").toMatch(/^http/);
    tenant = await createTestTenant(db.db);
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-e2e-demo-"));
    records = await startRecordsService({ port: 0, stateFile: path.join(workDir, "records-service.json") });
    await seedDemoSettings(db.db, tenant.tenantId, { recordsUrl: records.url });

    runtime = RuntimeProcess.start({
      CUSTODY_URL: baseUrl,
      CUSTODY_API_KEY: tenant.apiKey,
      DEMO_WORK_DIR: path.join(workDir, "demo-work"),
      RECORDS_URL: records.url,
      DEMO_TASK_ID: taskId,
      DEMO_POLL_MS: "500",
    });
    // The runtime says so once the gate answered stop and it starts polling; the API must agree.
    await runtime.waitForLine(/attempt 2: waiting for a person/, 75_000);
    expect(
      runtime.lines.some((l) => /side_effect_unknown/.test(l)),
      runtime.tail(),
    ).toBe(true);
    const gate = await apiJson<GateVerdict>(baseUrl, tenant.apiKey, `/api/v1/tasks/${taskId}/resume`, "POST");
    expect(gate.status).toBe(200);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toContain("side_effect_unknown");
    const task = await apiJson<TaskView>(baseUrl, tenant.apiKey, `/api/v1/tasks/${taskId}`);
    expect(task.body.side_effects[EFFECT]?.status).toBe("unknown");
  });

  test.afterAll(async () => {
    await runtime?.kill();
    await records?.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  test("a responder finds the stopped run: four lanes, the unknown write, the gate's stop", async ({
    page,
  }, testInfo) => {
    await test.step("an unauthenticated visit to the task lands on /login and returns there after signing in", async () => {
      await page.goto(`/tasks/${taskId}`);
      await expect(page).toHaveURL(/\/login\?/);
      expect(new URL(page.url()).searchParams.get("callbackUrl")).toBe(`/tasks/${taskId}`);
      await page.getByLabel("Email").fill(tenant.users.responder.email);
      await page.getByLabel("Password").fill(tenant.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL((u) => u.pathname === `/tasks/${taskId}`);
      await expect(page.getByTestId("task-id")).toHaveText(taskId);
    });

    await test.step("the task list leads to the task", async () => {
      await page.goto("/tasks");
      await expect(page.getByTestId("current-user")).toContainText(tenant.users.responder.email);
      const row = page.getByTestId("task-row").filter({ hasText: taskId });
      await expect(row).toHaveCount(1);
      await expect(row).toContainText("1 unknown");
      await row.getByRole("link", { name: taskId }).click();
      await page.waitForURL((u) => u.pathname === `/tasks/${taskId}`);
      await expect(page.getByTestId("task-id")).toHaveText(taskId);
    });

    await test.step("four labelled lanes with marks in each, two sandbox bars, the interruption", async () => {
      for (const { plane, label } of LANES) {
        const lane = page.locator(`[data-testid=timeline-lane][data-plane=${plane}]`);
        await expect(lane, `lane ${plane}`).toHaveCount(1);
        await expect(lane.getByText(label, { exact: true }), `label of lane ${plane}`).toBeVisible();
        await expect
          .poll(() => lane.getByTestId("timeline-mark").count(), { message: `marks in lane ${plane}` })
          .toBeGreaterThan(0);
      }
      await expect
        .poll(() => page.getByTestId("sandbox-bar").count(), { message: "sandbox bars" })
        .toBeGreaterThanOrEqual(2);
      await expect(page.locator("[data-testid=sandbox-bar][data-attempt='1']")).toHaveCount(1);
      await expect(page.locator("[data-testid=sandbox-bar][data-attempt='2']")).toHaveCount(1);
      await expect
        .poll(() => page.getByTestId("interruption-rule").count(), { message: "interruption rules" })
        .toBeGreaterThanOrEqual(1);
    });

    await test.step("update_record is unknown and the gate says Stop: side_effect_unknown", async () => {
      const effect = page.locator(`[data-testid=side-effect-row][data-name=${EFFECT}]`);
      await expect(effect).toHaveAttribute("data-status", "unknown");
      await expect(effect).toContainText("unknown");
      await expect(effect).toContainText(idempotencyKeyFor(taskId));
      const gate = page.getByTestId("gate-panel");
      await expect(gate.getByTestId("gate-verdict")).toHaveAttribute("data-verdict", "stop");
      await expect(gate.getByTestId("gate-verdict")).toContainText("Stop");
      const reason = gate.locator("[data-testid=gate-reason][data-code=side_effect_unknown]");
      await expect(reason).toBeVisible();
      await expect(reason).toContainText(EFFECT);
      await expect(reason.getByRole("link", { name: "Go to the thing to fix" })).toHaveAttribute(
        "href",
        `/tasks/${taskId}?tab=side-effects&effect=${EFFECT}`,
      );
      await expect(page.getByRole("button", { name: `Reconcile ${EFFECT}`, exact: true })).toBeVisible();
    });

    await keepScreenshot(page, testInfo, "task-page.png");

    await test.step("clicking a mark opens the event drawer for that event", async () => {
      // Marks a fraction of a pixel apart overlap (up to three per bin bucket), so pick one nothing covers.
      await page.locator("svg[aria-roledescription=timeline]").scrollIntoViewIfNeeded();
      const eventId = await page.locator("[data-testid=timeline-mark][data-kind=event]").evaluateAll((els) => {
        for (const el of els) {
          const r = el.getBoundingClientRect();
          const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
          if (hit?.closest("[data-testid=timeline-mark]") === el) return el.getAttribute("data-event-id");
        }
        return null;
      });
      expect(eventId, "a timeline mark that is not covered by another").toBeTruthy();
      await page.locator(`[data-testid=timeline-mark][data-event-id="${eventId}"]`).click();
      const drawer = page.getByTestId("event-drawer");
      await expect(drawer).toBeVisible();
      await expect(drawer).toHaveAttribute("data-event-id", eventId!);
      await expect(page).toHaveURL(
        new RegExp(`[?&]event=${encodeURIComponent(eventId!).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
      );
    });
  });

  test("the responder reconciles with the lookup answer; the gate flips to Resume and the run finishes once", async ({
    page,
  }, testInfo) => {
    const expected = (await (
      await fetch(`${records.url}/lookup?idempotency_key=${encodeURIComponent(idempotencyKeyFor(taskId))}`)
    ).json()) as LookupAnswer;
    expect(expected.found, "the records service applied the update before the sandbox was lost").toBe(true);
    const operationId = expected.found ? expected.external_operation_id : "";

    await page.goto(`/tasks/${taskId}`);
    await page.getByLabel("Email").fill(tenant.users.responder.email);
    await page.getByLabel("Password").fill(tenant.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL((u) => u.pathname === `/tasks/${taskId}`);
    await expect(page.getByTestId("gate-panel").getByTestId("gate-verdict")).toHaveAttribute("data-verdict", "stop");

    const dialog = page.getByTestId("reconcile-dialog");
    await test.step("the primary action opens the dialog; the lookup finds the write", async () => {
      const primary = page.getByRole("button", { name: `Reconcile ${EFFECT}`, exact: true });
      await expect(primary).toHaveAttribute("data-testid", "primary-action");
      await primary.click();
      await expect(dialog).toBeVisible();
      await expect(dialog.getByRole("heading", { name: `Reconcile ${EFFECT}` })).toBeVisible();
      await dialog.getByRole("button", { name: "Look up by idempotency key" }).click();
      const answer = dialog.getByTestId("lookup-answer");
      await expect(answer).toHaveAttribute("data-outcome", "found");
      await expect(answer).toContainText(operationId);
      await expect(dialog.getByRole("radio", { name: /It completed/ })).toBeChecked();
      await expect(dialog.getByLabel("External operation id")).toHaveValue(operationId);
      await expect(dialog.getByLabel("Evidence")).not.toHaveValue("");
    });
    await keepScreenshot(page, testInfo, "reconcile-dialog.png");

    await test.step("recording it as completed confirms with an audit entry", async () => {
      await dialog.getByRole("button", { name: `Record ${EFFECT} as completed` }).click();
      const confirmation = dialog.getByRole("status");
      await expect(confirmation).toContainText(/is now\s+completed/);
      await expect(confirmation).toContainText(/Audit entry #\d+ was written/);
      await dialog.getByRole("button", { name: "Done" }).click();
      await expect(dialog).toBeHidden();
    });

    await test.step("the gate flips from Stop to Resume within the live refresh", async () => {
      const verdict = page.getByTestId("gate-panel").getByTestId("gate-verdict");
      await expect(verdict).toHaveAttribute("data-verdict", "resume", { timeout: 15_000 });
      await expect(verdict).toContainText("Resume");
      await expect(page.getByTestId("gate-reason")).toHaveCount(0);
    });

    await test.step("the runtime finishes; the task is done; the record was updated once", async () => {
      const code = await runtime!.waitForExit(60_000);
      expect(code, runtime!.tail()).toBe(0);
      expect(
        runtime!.lines.some((l) => /intent update_record → replay/.test(l)),
        runtime!.tail(),
      ).toBe(true);
      await expect(page.getByTestId("task-phase")).toHaveText("done", { timeout: 15_000 });
      const effect = page.locator(`[data-testid=side-effect-row][data-name=${EFFECT}]`);
      await expect(effect).toHaveAttribute("data-status", "completed");
      await expect(effect).toContainText(operationId);
      await expect(effect.getByTestId("last-reconcile")).toContainText("completed");
      await expect(page.getByRole("button", { name: `Reconcile ${EFFECT}`, exact: true })).toHaveCount(0);
      const res = await fetch(`${records.url}/records/${encodeURIComponent(recordIdFor(taskId))}`);
      expect(res.status).toBe(200);
      const record = (await res.json()) as StoredRecord;
      expect(record.update_count).toBe(1);
      expect(record.last_operation_id).toBe(operationId);
    });

    await keepScreenshot(page, testInfo, "task-page-after-reconcile.png");
  });
});
