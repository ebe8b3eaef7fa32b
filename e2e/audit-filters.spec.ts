/**
 * The Audit page's filters and export (issue 24; decision 0048): filter by action and by task in the browser (the
 * filters stay in the URL and in the form), download exactly what is filtered, see the empty state with a way out, and
 * use it all at 420 px without the page scrolling sideways; axe on each state.
 */
import fs from "node:fs";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeRecord, newTaskId, test } from "./fixtures";

test("filter the audit log by action and task, export what is filtered, clear an empty match", async ({
  page,
  tenant,
  runtime,
  request,
}) => {
  test.setTimeout(240_000); // axe audits on a shared, loaded machine
  const taskA = newTaskId("audit-e2e-a");
  const taskB = newTaskId("audit-e2e-b");
  await runtime.putRecord(makeRecord(taskA));
  await runtime.putRecord(makeRecord(taskB));
  await loginAs(page, tenant.users.responder.email, tenant.password);

  await page.goto("/audit");
  await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();
  await page.getByLabel("Action", { exact: true }).selectOption("task.checkpointed");
  await page.getByLabel("Task", { exact: true }).fill(taskA);
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/action=task\.checkpointed/);
  await expect(page).toHaveURL(new RegExp(`task=${taskA}`));
  const rows = page.getByTestId("audit-row");
  await expect(rows).toHaveCount(1);
  await expect(page.getByTestId("audit-target")).toHaveText(`task:${taskA}`);
  await expect(page.getByLabel("Action", { exact: true })).toHaveValue("task.checkpointed");
  await expect(page.getByLabel("Task", { exact: true })).toHaveValue(taskA);
  await expectNoA11yViolations(page, { label: "/audit (filtered)" });

  // The Export link downloads exactly the filtered entries.
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("audit-export").click()]);
  expect(download.suggestedFilename()).toMatch(/^audit-\d{8}T\d{6}Z\.jsonl$/);
  const lines = fs
    .readFileSync(await download.path(), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { action: string; target: string; hash: string; prev_hash: string });
  expect(lines.map((l) => [l.action, l.target])).toEqual([["task.checkpointed", `task:${taskA}`]]);
  expect(lines[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
  expect(lines[0]!.prev_hash).toMatch(/^[0-9a-f]{64}$/);
  const listed = await request.get(`/api/v1/audit?action=task.checkpointed&task=${encodeURIComponent(taskA)}`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
  });
  expect(((await listed.json()) as { entries: Array<{ hash: string }> }).entries.map((e) => e.hash)).toEqual(
    lines.map((l) => l.hash),
  );

  // No match: the empty state says so and clears the filters.
  await page.getByLabel("Action", { exact: true }).selectOption("map.published");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-empty")).toContainText("No entries match these filters");
  await expectNoA11yViolations(page, { label: "/audit (no match)" });
  await page.getByTestId("audit-empty").getByRole("link", { name: "Clear the filters" }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(page.getByLabel("Task", { exact: true })).toHaveValue("");
  await expect(rows.filter({ hasText: `task:${taskB}` })).toHaveCount(1);
});

test("at 420 px the filters and the log fit without sideways scrolling; a bad date says what to do", async ({
  page,
  tenant,
  runtime,
}) => {
  test.setTimeout(240_000); // axe audits on a shared, loaded machine
  const taskId = newTaskId("audit-e2e-narrow");
  await runtime.putRecord(makeRecord(taskId));
  await page.setViewportSize({ width: 420, height: 900 });
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/audit?task=${encodeURIComponent(taskId)}`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  for (const name of ["Actor", "Action", "From (UTC)", "To (UTC)", "Task"]) {
    await expect(page.getByLabel(name, { exact: true })).toBeVisible();
  }
  await expect(page.getByTestId("audit-export")).toBeVisible();
  const sizes = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(sizes.scrollWidth, "page scroll width at 420 px").toBeLessThanOrEqual(sizes.clientWidth);
  await expectNoA11yViolations(page, { label: "/audit at 420 px" });

  await page.goto("/audit?from=2026-02-30");
  await expect(page.getByTestId("audit-filter-error")).toContainText("from must be an ISO 8601 date");
  await expect(page.getByTestId("audit-row")).toHaveCount(0);
  await expectNoA11yViolations(page, { label: "/audit (bad date)" });
});
