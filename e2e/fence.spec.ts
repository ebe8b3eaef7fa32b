/**
 * Fencing a task to a new attempt from the task page (decision 0032): a responder reaches the button with the
 * keyboard, confirms, and the page shows the new attempt; the older attempt's writes are unknown. A viewer has no
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
  // No native confirm(): the app's confirmation dialog asks, with focus on Cancel.
  page.on("dialog", (d) => {
    throw new Error(`unexpected native dialog: ${d.message()}`);
  });
  await fence.focus();
  await page.keyboard.press("Enter");
  const asked = page.getByRole("dialog", { name: "Fence this task to attempt 3?" });
  await expect(asked).toContainText("Every older attempt ends");
  await expect(asked.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(asked.getByRole("button", { name: "Fence to attempt 3" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(asked).toBeHidden();
  await expect(page.getByRole("status").filter({ hasText: "Fenced to attempt 3" })).toBeVisible();
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");

  // Dismissing the confirmation (Escape) sends nothing, and focus returns to the button.
  await page.getByTestId("fence-task").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("dialog", { name: "Fence this task to attempt 4?" })).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expect(page.getByTestId("fence-task")).toBeFocused();
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");
});

test("a viewer has no fence button", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("fence-viewer"));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await expect(page.getByTestId("task-id")).toHaveText(incident.taskId);
  await expect(page.getByTestId("fence-task")).toHaveCount(0);
});
