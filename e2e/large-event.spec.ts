/**
 * A large event on the task page (decision 0034): the page carries a summary of its attributes, and the drawer fetches
 * the event's detail on demand — cut at its own cap, and saying so.
 */
import { expect, loginAs, makeEvent, newTaskId, test } from "./fixtures";

test("the drawer of a large event fetches its detail, and says when it is cut", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("large");
  const id = `${taskId}-big`;
  const at = new Date(Date.now() - 60_000).toISOString();
  const results = await runtime.postEvents([
    makeEvent(taskId, {
      id,
      plane: "tools",
      type: "tool.completed",
      attempt: 1,
      occurred_at: at,
      // A 3,000-character value (past a summary's 200, within a detail's 4,096) and a 30,000-character one (cut).
      attrs: { tool: "fetch_report", note: `${"n".repeat(2990)}NOTE-TAIL`, body: "b".repeat(30_000) },
    }),
  ]);
  expect(results[0]?.status).toBe("stored");

  await loginAs(page, tenant.users.responder.email, tenant.password);
  const detail = page.waitForResponse((r) => r.url().includes(`/events/${encodeURIComponent(id)}`));
  await page.goto(`/tasks/${taskId}?event=${encodeURIComponent(id)}`);
  const drawer = page.getByTestId("event-drawer");
  await expect(drawer).toBeVisible();
  expect((await detail).status()).toBe(200);
  const attrs = drawer.getByTestId("event-attrs");
  await expect(attrs).toHaveAttribute("data-state", "detail");
  await expect(attrs).toContainText("NOTE-TAIL");
  await expect(attrs).toContainText("Truncated");
  await expect(drawer).toContainText("fetch_report");
});
