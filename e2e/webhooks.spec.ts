/**
 * Settings → Webhooks and Settings → Notifications in the browser (decision 0040): an owner adds a webhook source and
 * sees its secret once, rotates it (two secrets listed), and adds a notification endpoint, refused with the reason
 * while private addresses are not allowed; a viewer sees both sections without the controls. Both pass axe.
 */
import { sql } from "drizzle-orm";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, test } from "./fixtures";

test("an owner manages webhook sources and notification endpoints; a viewer only reads", async ({
  page,
  browser,
  db,
  tenant,
}) => {
  // Two pages and two axe runs of the whole Settings page.
  test.setTimeout(180_000);
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/notifications");
  const webhooks = page.locator("section#webhooks");
  await webhooks.getByLabel("Source name").fill("billing");
  await webhooks.getByLabel("Trusted for actions (comma-separated)").fill("refunds.create, records.update");
  await webhooks.getByRole("button", { name: "Add source" }).click();
  await expect(webhooks.getByTestId("new-webhook-secret")).toContainText(/^whsec_/);
  const row = webhooks.locator("tr", { hasText: "billing" });
  await expect(row).toContainText("records.update, refunds.create");
  await row.getByRole("button", { name: "Rotate secret of billing" }).click();
  await expect(row.getByRole("listitem")).toHaveCount(2);
  const secrets = await db.db.execute(
    sql`select count(*)::int as n from webhook_source_secrets where tenant_id = ${tenant.tenantId} and source = 'billing'`,
  );
  expect(JSON.stringify(secrets)).toContain('"n":2');

  const notifications = page.locator("section#notifications");
  await notifications.getByLabel("Endpoint URL").fill("https://127.0.0.1:9/hook");
  await notifications.getByRole("button", { name: "Add endpoint" }).click();
  await expect(notifications.getByRole("alert")).toContainText("127.0.0.1 is a loopback address");
  await expect(notifications.getByRole("table", { name: "Delivery log" })).toContainText("No deliveries yet.");
  await expectNoA11yViolations(page);

  const viewerContext = await browser.newContext({ baseURL: test.info().project.use.baseURL });
  try {
    const viewerPage = await viewerContext.newPage();
    await loginAs(viewerPage, tenant.users.viewer.email, tenant.password);
    await viewerPage.goto("/settings/notifications");
    await expect(viewerPage.locator("section#webhooks")).toContainText("billing");
    await expect(viewerPage.locator("section#webhooks").getByRole("button")).toHaveCount(0);
    await expect(viewerPage.locator("section#notifications").getByRole("button", { name: "Add endpoint" })).toHaveCount(
      0,
    );
    await expectNoA11yViolations(viewerPage);
  } finally {
    await viewerContext.close();
  }
});
