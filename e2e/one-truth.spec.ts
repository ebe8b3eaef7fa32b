/**
 * Nothing on a page may be false (issue 24), in Chromium against the built server, at 1366 and 420 px with axe:
 * - an exercise whose "Test revocation" step could not be done completes as a visible stop and leaves Credentials
 *   unknown; its page says which layers its point can test and what completing set, and why;
 * - the exercise page's running-server command says plainly when the workspace's lookup cannot see its writes;
 * - a rejected approval reads "approval rejected" on the task's Side effects tab, at the gate and in Attention.
 * A full-page screenshot of each page is attached per width.
 */
import type { Page, TestInfo } from "@playwright/test";
import type { ExerciseJson, MapView } from "@/lib/contract/maps";
import { payloadDigestOf } from "../tests/support/approvals";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, rid, seedIncidentTask, test } from "./fixtures";

async function keep(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

async function noSidewaysScroll(page: Page, width: number): Promise<void> {
  const sizes = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(sizes.scrollWidth, `page scroll width at ${width} px`).toBeLessThanOrEqual(sizes.clientWidth);
}

for (const width of [1366, 420]) {
  test(`an exercise verifies only what it tested, and its command tells the truth (${width} px)`, async ({
    page,
    tenant,
    runtime,
  }, testInfo) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height: 900 });
    const taskId = newTaskId("truth-ex");
    await seedIncidentTask(runtime, taskId);
    await loginAs(page, tenant.users.owner.email, tenant.password);
    const map = (await (
      await page.request.post("/api/v1/maps", { data: { workflow: `truth-${rid()}`, title: "Truth map" } })
    ).json()) as MapView;
    const ex = (await (
      await page.request.post(`/api/v1/maps/${map.id}/exercises`, { data: { interruption_point: "after_receipt" } })
    ).json()) as ExerciseJson;
    const steps = ex.steps.map((s) =>
      s.step === "test_revocation"
        ? { ...s, status: "blocked", note: "Revocation could not be exercised." }
        : { ...s, status: "passed", task_id: taskId },
    );
    const saved = await page.request.patch(`/api/v1/maps/${map.id}/exercises/${ex.id}`, {
      data: { steps, revision: ex.revision },
    });
    expect(saved.status(), await saved.text()).toBe(200);

    await page.goto(`/maps/${map.id}/exercises/${ex.id}`);
    // The point's layers, and what completing would set.
    const point = page.getByTestId("point-layers");
    await expect(point).toContainText("can test: Session state, Compute, Credentials, Artifacts, Recovery, Export");
    await expect(point).toContainText("Not Tools");
    await expect(point).toContainText("Not Compaction");
    const credentials = page.locator("[data-testid=layer-result][data-layer=credentials]");
    await expect(credentials).toHaveAttribute("data-result", "left");
    await expect(credentials).toContainText("could not be done");
    await expect(page.locator("[data-testid=layer-result][data-layer=recovery]")).toHaveAttribute(
      "data-result",
      "verified",
    );
    await expect(page.getByTestId("step-test_revocation").getByTestId("revocation-link-needed")).toBeVisible();
    // No lookup is registered in this workspace: the command says so.
    await expect(page.getByTestId("run-lookup-note")).toContainText("has no lookup for update_record");
    await expect(page.getByTestId("run-lookup-note")).toContainText("cannot see");

    await page.getByRole("radio", { name: /Visible stop/ }).check();
    await page.getByLabel("Finding").fill("Revocation could not be exercised; the gate stopped until reconciled.");
    await expect(page.getByTestId("exercise-save-state")).toHaveAttribute("data-state", "saved");
    await page.getByRole("button", { name: "Complete the exercise" }).click();
    await expect(page.getByTestId("completed")).toContainText("Exercise completed");
    await expect(page.getByTestId("layer-results")).toContainText("What completing set");
    await noSidewaysScroll(page, width);
    await expectNoA11yViolations(page);
    await keep(page, testInfo, `exercise-${width}px.png`);

    await page.goto(`/maps/${map.id}`);
    await expect(page.getByTestId("layer-credentials").getByTestId("verification")).toHaveAttribute(
      "data-verification",
      "unknown",
    );
    await expect(page.getByTestId("layer-recovery").getByTestId("verification")).toHaveAttribute(
      "data-verification",
      "verified",
    );
  });

  test(`a rejected approval reads rejected on the task, at the gate and in Attention (${width} px)`, async ({
    page,
    tenant,
    runtime,
    request,
  }, testInfo) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height: 900 });
    const taskId = newTaskId("truth-rejected");
    await seedIncidentTask(runtime, taskId);
    const args = { title: "Q3 report", recipients: ["board@example.com"] };
    const intent = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      data: {
        idempotency_key: `publish-${taskId}`,
        payload_digest: payloadDigestOf("publish_report", args),
        action: "publish_report",
        tool: "publish_report",
        mutation: true,
        attempt: 2,
        requires_approval: true,
        payload: args,
      },
    });
    expect(intent.status(), await intent.text()).toBe(403);
    const approvalId = ((await intent.json()) as { error: { details: { approval_id: string } } }).error.details
      .approval_id;
    await loginAs(page, tenant.users.approver.email, tenant.password);
    const decided = await page.request.post(`/api/v1/approvals/${approvalId}/decision`, {
      data: { decision: "reject", reason: "Wrong audience" },
    });
    expect(decided.status(), await decided.text()).toBe(200);

    await page.goto(`/tasks/${taskId}?tab=side-effects`);
    const row = page.locator("[data-testid=side-effect-row][data-name=publish_report]");
    await expect(row).toHaveAttribute("data-shown-status", "approval_rejected");
    await expect(row).toContainText("approval rejected");
    await expect(row.getByTestId("effect-approval")).toContainText("Wrong audience");
    await expect(page.locator("[data-testid=gate-reason][data-code=approval_rejected]").first()).toContainText(
      "Wrong audience",
    );
    await noSidewaysScroll(page, width);
    await expectNoA11yViolations(page);
    await keep(page, testInfo, `task-rejected-${width}px.png`);

    await page.goto("/");
    const item = page.locator(`[data-testid=attention-item][data-task="${taskId}"]`);
    await expect(item.first()).toBeVisible();
    await expect(item.filter({ hasText: "publish_report" })).toHaveAttribute("data-kind", "approval_rejected");
    await expect(page.locator(`[data-kind=side_effect_awaiting_approval][data-task="${taskId}"]`)).toHaveCount(0);
    await noSidewaysScroll(page, width);
    await expectNoA11yViolations(page);
    await keep(page, testInfo, `attention-${width}px.png`);
  });
}
