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
  const asked: string[] = [];
  page.once("dialog", (d) => {
    asked.push(d.message());
    void d.accept();
  });
  await fence.focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("status").filter({ hasText: "Fenced to attempt 3" })).toBeVisible();
  expect(asked[0]).toContain("Fence this task to attempt 3?");
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");

  // Dismissing the confirmation sends nothing.
  page.once("dialog", (d) => void d.dismiss());
  await page.getByTestId("fence-task").click();
  await expect(page.getByTestId("fence-task")).toHaveText("Fence to attempt 4");
});

test("a viewer has no fence button", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("fence-viewer"));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await expect(page.getByTestId("task-id")).toHaveText(incident.taskId);
  await expect(page.getByTestId("fence-task")).toHaveCount(0);
});
