/**
 * Readability fixes from a review of the product in the browser:
 * - /audit at 420 px: rows stay about one line tall (the details column broke every character), the table
 *   scrolls inside its card (never the page) and the details open to the full JSON;
 */
import type { Locator, Page } from "@playwright/test";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

const NARROW = { width: 420, height: 800 };

/** The element is one line tall (its box is no taller than its line height, with a little slack). */
async function expectOneLine(locator: Locator, what: string): Promise<void> {
  const { height, lineHeight } = await locator.evaluate((el) => {
    const s = getComputedStyle(el);
    const lh = parseFloat(s.lineHeight);
    return { height: el.getBoundingClientRect().height, lineHeight: Number.isFinite(lh) ? lh : parseFloat(s.fontSize) * 1.5 };
  });
  expect(height, `${what} is on one line (height ${height}px, line height ${lineHeight}px)`).toBeLessThanOrEqual(lineHeight * 1.25 + 1);
}

async function expectNoPageScrollSideways(page: Page): Promise<void> {
  const sizes = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(sizes.scroll, "the page does not scroll sideways").toBeLessThanOrEqual(sizes.client);
}

test("the audit log at 420 px: short rows, the table scrolls inside its card, details open in full", async ({ page, tenant, runtime }, testInfo) => {
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
