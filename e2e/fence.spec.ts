/**
 * Fencing a task to a new attempt from the task page (decision 0032): a responder reaches the button with the
 * keyboard, confirms in the modal dialog (with a reason for the audit log), and the page shows the new attempt; the older attempt's writes are unknown. A viewer has no
 * such button.
 */
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

test("a responder fences a task to a new attempt from the keyboard, after confirming", async ({
  page,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("fence"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  const fence = page.getByTestId("fence-task");
  await expect(fence).toHaveText("Fence to attempt 3");
  // The confirmation is the modal dialog (no native confirm()): it names the task and the attempt.
  await fence.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByTestId("fence-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("heading")).toContainText(`Fence task ${incident.taskId} to attempt 3?`);
  await expect(page.getByTestId("fence-dialog-reason")).toBeFocused();
  await page.keyboard.type("sandbox hung");
  await page.getByTestId("fence-dialog-confirm").press("Enter");
  await expect(page.getByRole("status").filter({ hasText: "Fenced to attempt 3" })).toBeVisible();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");

  // Cancelling (Escape) sends nothing.
  await page.getByTestId("fence-task").click();
  await expect(dialog).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");
});

test("a viewer has no fence button", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("fence-viewer"));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await expect(page.getByTestId("task-id")).toHaveText(incident.taskId);
  await expect(page.getByTestId("fence-task")).toHaveCount(0);
});
