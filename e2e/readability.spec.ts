/**
 * Readability fixes from a review of the product in the browser:
 * - /audit at 420 px: rows stay about one line tall (the details column broke every character), the table
 *   scrolls inside its card (never the page) and the details open to the full JSON;
 * - ids (task ids, idempotency keys) stay on one line, ellipsised with the whole id as the title, at 420 px;
 * - the settings hint shows the Authorization header as code, not between literal backticks;
 * - the reconcile dialog's submit button says what is still missing instead of "Record … as …".
 */
import type { Locator, Page } from "@playwright/test";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

const NARROW = { width: 420, height: 800 };

/** The element is one line tall (its box is no taller than its line height, with a little slack). */
async function expectOneLine(locator: Locator, what: string): Promise<void> {
  const { height, lineHeight } = await locator.evaluate((el) => {
    const s = getComputedStyle(el);
    const lh = parseFloat(s.lineHeight);
    return {
      height: el.getBoundingClientRect().height,
      lineHeight: Number.isFinite(lh) ? lh : parseFloat(s.fontSize) * 1.5,
    };
  });
  expect(height, `${what} is on one line (height ${height}px, line height ${lineHeight}px)`).toBeLessThanOrEqual(
    lineHeight * 1.25 + 1,
  );
}

async function expectNoPageScrollSideways(page: Page): Promise<void> {
  const sizes = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(sizes.scroll, "the page does not scroll sideways").toBeLessThanOrEqual(sizes.client);
}

test("the audit log at 420 px: short rows, the table scrolls inside its card, details open in full", async ({
  page,
  tenant,
  runtime,
}, testInfo) => {
  await page.setViewportSize(NARROW);
  const incident = await seedIncidentTask(runtime, newTaskId("audit-narrow-with-a-long-task-identifier"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto("/audit");
  const rows = page.getByTestId("audit-row");
  await expect(rows.first()).toBeVisible();
  const file = testInfo.outputPath("audit-420px.png");
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach("audit-420px.png", { path: file, contentType: "image/png" });

  for (const row of await rows.all()) {
    const height = (await row.boundingBox())!.height;
    expect(height, "an audit row at 420 px is about one line tall").toBeLessThanOrEqual(48);
  }
  await expectNoPageScrollSideways(page);

  // The target column is reachable by scrolling the table's card, and names the whole target.
  const row = rows.filter({ hasText: incident.taskId }).first();
  const target = row.getByTestId("audit-target").getByRole("link");
  await target.scrollIntoViewIfNeeded();
  await expect(target).toBeInViewport();
  await expect(target).toHaveAttribute("title", new RegExp(incident.taskId));
  await expectOneLine(target, "the audit target");
  await expectNoPageScrollSideways(page);

  // Details: one line until opened, then the full JSON.
  const details = row.getByTestId("audit-details");
  const summary = details.locator("summary");
  await summary.scrollIntoViewIfNeeded();
  await expectOneLine(summary, "the collapsed details");
  await summary.click();
  await expect(details.locator("pre")).toBeVisible();
  const full = JSON.parse((await details.locator("pre").textContent()) ?? "null") as unknown;
  expect(full).toEqual(JSON.parse((await summary.getAttribute("title")) ?? "null"));
  await expectNoPageScrollSideways(page);
});

test("ids stay on one line at 420 px: task list, task header, side effects, attention queue, reconcile dialog", async ({
  page,
  tenant,
  runtime,
}) => {
  await page.setViewportSize(NARROW);
  const incident = await seedIncidentTask(runtime, newTaskId("case-918-with-a-rather-long-identifier"));
  await loginAs(page, tenant.users.responder.email, tenant.password);

  await page.goto("/tasks");
  const link = page.getByTestId("task-row").getByRole("link", { name: incident.taskId });
  await expect(link).toHaveAttribute("title", incident.taskId);
  await expectOneLine(link, "the task id in the task list");

  await page.goto(`/tasks/${incident.taskId}`);
  const heading = page.getByTestId("task-id");
  await expect(heading).toHaveText(incident.taskId);
  await expect(heading).toHaveAttribute("title", incident.taskId);
  await expectOneLine(heading, "the task id in the header");
  const key = page
    .locator(`[data-testid=side-effect-row][data-name=${incident.effect}]`)
    .getByTestId("idempotency-key");
  await expect(key).toHaveText(incident.idempotencyKey);
  await expect(key).toHaveAttribute("title", incident.idempotencyKey);
  await expectOneLine(key, "the idempotency key");
  await expectNoPageScrollSideways(page);

  await page.getByRole("button", { name: `Reconcile ${incident.effect}`, exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  for (const id of [incident.taskId, incident.idempotencyKey]) {
    const el = dialog.locator(`[title="${id}"]`);
    await expect(el).toHaveText(id);
    await expectOneLine(el, `${id} in the reconcile dialog`);
  }
  await dialog.getByRole("button", { name: "Cancel" }).click();

  await page.goto("/");
  const item = page.getByTestId("attention-item").filter({ hasText: incident.effect });
  const id = item.locator(`[title="${incident.taskId}"]`);
  await expect(id).toHaveText(incident.taskId);
  await expectOneLine(id, "the task id in the attention queue");
  await expectNoPageScrollSideways(page);
});

test("settings show the Authorization header as code, without literal backticks", async ({ page, tenant }) => {
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/api-keys");
  const section = page.locator("section#api-keys");
  await expect(section.locator("code").filter({ hasText: "Authorization: Bearer <key>" })).toBeVisible();
  await expect(page.locator("main")).not.toContainText("`");
});

test("the reconcile dialog's submit button says what is still missing", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("reconcile-form"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await page.getByRole("button", { name: `Reconcile ${incident.effect}`, exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  const submit = dialog.locator("button[type=submit]");

  await expect(submit).toBeDisabled();
  await expect(submit).toHaveAccessibleName(`Record ${incident.effect}`);
  await expect(submit).not.toContainText("…");
  await expect(submit).toHaveAccessibleDescription("Choose an outcome and write the evidence to record it.");
  await expect(dialog.getByTestId("reconcile-missing")).toBeVisible();

  await dialog.getByRole("radio", { name: /It completed/ }).check();
  await expect(submit).toHaveAccessibleName(`Record ${incident.effect} as completed`);
  await expect(submit).toHaveAccessibleDescription(
    "Enter the external operation id and write the evidence to record it.",
  );
  await dialog.getByLabel("External operation id").fill("op-123");
  await expect(submit).toHaveAccessibleDescription("Write the evidence to record it.");
  await expect(submit).toBeDisabled();

  await dialog.getByRole("radio", { name: /It was not applied/ }).check();
  await expect(submit).toHaveAccessibleName(`Record ${incident.effect} as not applied`);
  await dialog.getByLabel("Evidence").fill("No such write in the records system (ticket OPS-1).");
  await expect(submit).toBeEnabled();
  await expect(dialog.getByTestId("reconcile-missing")).toHaveCount(0);
  await expect(submit).toHaveAccessibleDescription("");
});
