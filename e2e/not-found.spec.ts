/**
 * A task id the workspace does not have: the page answers 404 and shows the not-found page, which leads back to
 * the task list.
 */
import { expect, loginAs, test } from "./fixtures";

test("an unknown task answers 404 with a way back to the task list", async ({ page, tenant }) => {
  await loginAs(page, tenant.users.responder.email, tenant.password);
  const res = await page.goto("/tasks/nope");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Task not found" })).toBeVisible();
  await expect(page.getByTestId("task-not-found")).toContainText("no task with that id");
  await page.getByRole("link", { name: "Back to tasks" }).click();
  await page.waitForURL((u) => u.pathname === "/tasks");
  await expect(page.getByRole("heading", { name: "Tasks", exact: true })).toBeVisible();
});
