/**
 * Retention and task deletion in the browser (decision 0054):
 * - an owner changes the retention settings on Settings → Retention, and they stay after a reload; a viewer reads
 *   them without a form, and sees the empty states;
 * - the owner deletes a task from its page (the dialog asks for a reason, says what goes and that the audit entry
 *   stays), lands on Settings → Retention where the task is listed with who, why and what went; the task's page then
 *   says it was deleted, and the runtime's next checkpoint is refused (410 task_deleted).
 * At 1366 and 420 px, with axe checks of the page and the dialog.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test } from "./fixtures";

test("an owner changes retention settings and deletes a task from its page", async ({
  page,
  tenant,
  runtime,
}, testInfo) => {
  test.setTimeout(180_000);
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/retention");
  await expect(page.getByTestId("retention-current")).toContainText("Events are kept forever");
  await expect(page.getByTestId("deleted-tasks-empty")).toBeVisible();
  await expect(page.getByTestId("retention-runs-empty")).toHaveText("No events have been dropped by retention.");

  await page.getByTestId("retention-keep-days").check();
  await page.getByTestId("retention-days").fill("90");
  await page.getByTestId("retention-save").click();
  await expect(page.getByTestId("retention-saved")).toBeVisible();
  await expect(page.getByTestId("retention-current")).toContainText("for 90 days");
  await page.reload();
  await expect(page.getByTestId("retention-current")).toContainText("for 90 days");
  await expect(page.getByTestId("retention-days")).toHaveValue("90");

  const taskId = newTaskId("delete-ui");
  await runtime.postEvents([makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } })]);
  await runtime.putRecord(makeRecord(taskId, { phase: "drafting", side_effects: {} }));
  await page.goto(`/tasks/${taskId}`);
  await page.getByTestId("delete-task").click();
  const dialog = page.getByTestId("delete-task-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("heading")).toContainText(`Delete task ${taskId}?`);
  await expect(dialog).toContainText("The audit log keeps one entry");
  // No reason, nothing sent.
  await page.getByTestId("delete-task-dialog-confirm").click();
  await expect(dialog).toBeVisible();
  await page.setViewportSize({ width: 420, height: 900 });
  await testInfo.attach("delete-dialog-420px.png", { body: await page.screenshot(), contentType: "image/png" });
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByTestId("delete-task-dialog-reason").fill("test run, no customer data to keep");
  await page.getByTestId("delete-task-dialog-confirm").click();

  await expect(page).toHaveURL(/\/settings\/retention$/);
  const row = page.getByTestId("deleted-task-row").filter({ hasText: taskId });
  await expect(row).toBeVisible();
  await expect(row).toContainText(tenant.users.owner.email);
  await expect(row).toContainText("test run, no customer data to keep");
  await expect(row).toContainText("1 checkpoint");
  await expect(row).toContainText("1 event,");
  for (const width of [1366, 420]) {
    await page.setViewportSize({ width, height: 900 });
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(sideways, `${width}px`).toBeLessThanOrEqual(0);
    await testInfo.attach(`retention-${width}px.png`, {
      body: await page.screenshot({ fullPage: true }),
      contentType: "image/png",
    });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
  await expectNoA11yViolations(page, { label: "settings retention" });

  // The task's page says it was deleted; the stale runtime is refused.
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByTestId("task-deleted")).toContainText(`was deleted by ${tenant.users.owner.email}`);
  await testInfo.attach("task-deleted.png", { body: await page.screenshot(), contentType: "image/png" });
  const res = await page.request.put(`/api/v1/tasks/${taskId}`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: makeRecord(taskId, { phase: "drafting", side_effects: {} }),
  });
  expect(res.status()).toBe(410);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("task_deleted");

  // The dialog passes axe (checked last: axe opens a page of its own).
  const another = newTaskId("delete-axe");
  await runtime.putRecord(makeRecord(another, { phase: "drafting", side_effects: {} }));
  await page.goto(`/tasks/${another}`);
  await page.getByTestId("delete-task").click();
  await expect(dialog).toBeVisible();
  await expectNoA11yViolations(page, { include: ["[data-testid=delete-task-dialog]"], label: "delete task dialog" });
});

test("a viewer reads the retention settings without a form and has no Delete task button", async ({
  page,
  tenant,
  runtime,
}) => {
  const taskId = newTaskId("delete-viewer");
  await runtime.putRecord(makeRecord(taskId, { phase: "drafting", side_effects: {} }));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/settings/retention");
  await expect(page.getByTestId("retention-current")).toBeVisible();
  await expect(page.getByTestId("retention-save")).toHaveCount(0);
  await expect(page.getByText("Owners and admins change these settings.")).toBeVisible();
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByTestId("task-id")).toHaveText(taskId);
  await expect(page.getByTestId("delete-task")).toHaveCount(0);
});
