/**
 * The Tasks list (issue 24, decision 0043): a status column and filter, sorting by last activity (the default), the
 * filters kept in the address across pages, and the Attention column usable at 420 px. With axe checks.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test } from "./fixtures";

test("status column and filter, last-activity sort, filters kept across pages", async ({ page, tenant, runtime }) => {
  const done = newTaskId("list-done");
  const first = newTaskId("list-run-a");
  const second = newTaskId("list-run-b");
  await runtime.putRecord(makeRecord(done, { phase: "done", side_effects: {} }));
  await runtime.putRecord(makeRecord(first, { phase: "drafting", side_effects: {} }));
  await runtime.putRecord(makeRecord(second, { phase: "drafting", side_effects: {} }));
  // The first-created running task has the newest activity: it leads by default, trails when sorted by creation.
  await runtime.postEvents([makeEvent(first, { occurred_at: new Date(Date.now() + 1000).toISOString() })]);

  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/tasks");
  const rows = page.getByTestId("task-row");
  await expect(rows).toHaveCount(3);
  await expect(rows.first()).toContainText(first);
  await expect(page.locator(`[data-testid=task-row]:has-text("${done}") [data-testid=task-status]`)).toHaveText(/done/);
  await expectNoA11yViolations(page, { label: "tasks list" });

  await page.getByLabel("Status").selectOption("running");
  await page.getByLabel("Sort").selectOption("created");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(/status=running/);
  await expect(page).toHaveURL(/sort=created/);
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText(second);
  await expect(page.getByTestId("task-status").first()).toHaveText(/running/);

  // One per page: the next page keeps the status and the sort in its address.
  await page.goto("/tasks?status=running&sort=created&limit=1");
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(second);
  await page.getByRole("link", { name: "Next page" }).click();
  await expect(page).toHaveURL(/cursor=/);
  const params = new URL(page.url()).searchParams;
  expect([params.get("status"), params.get("sort"), params.get("limit")]).toEqual(["running", "created", "1"]);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(first);
});

test("the Attention column stays in view at 420 px", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("list-narrow");
  await runtime.putRecord(
    makeRecord(taskId, {
      phase: "drafting",
      side_effects: { update_record: { idempotency_key: `k-${taskId}`, status: "in_flight" } },
    }),
  );
  await page.setViewportSize({ width: 420, height: 900 });
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/tasks");
  const badge = page.getByTestId("task-attention-narrow").first();
  await expect(badge).toContainText("unknown");
  const box = (await badge.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(420);
  await expect(page.getByTestId("task-status").first()).toHaveText(/stopped at the gate/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});
