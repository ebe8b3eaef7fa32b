/**
 * Settings → Members in the browser: a member locked out by failed sign-ins shows as locked (until when, after
 * how many failures); an owner unlocks them after a confirmation, sees the audit entry, and the member signs in.
 */
import { sql } from "drizzle-orm";
import { MAX_SIGN_IN_FAILURES } from "@/lib/domain/tenancy/sign-in-limits";
import { expect, loginAs, test } from "./fixtures";

test("an owner sees a locked member and unlocks them; the member then signs in", async ({
  page,
  browser,
  db,
  tenant,
}) => {
  const viewer = tenant.users.viewer;
  // What the sign-in throttle records after MAX_SIGN_IN_FAILURES wrong passwords from one address (the
  // integration suite goes through the sign-in flow itself).
  await db.db.execute(sql`
    insert into sign_in_throttle (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
    values (${viewer.email}, '192.0.2.61', ${MAX_SIGN_IN_FAILURES}, now(), now(), now() + interval '2 minutes')`);

  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/members");
  const section = page.locator("section#members");
  const row = section.locator(`[data-testid=member-row][data-email="${viewer.email}"]`);
  await expect(row).toHaveAttribute("data-locked", "true");
  await expect(row.getByTestId("member-lock")).toContainText(`locked out until`);
  await expect(row.getByTestId("member-lock")).toContainText(`after ${MAX_SIGN_IN_FAILURES} failed sign-ins`);
  await expect(section.locator(`[data-testid=member-row][data-email="${tenant.users.owner.email}"]`)).toContainText(
    "active",
  );

  await row.getByRole("button", { name: "Unlock" }).click();
  const question = page.getByRole("dialog", { name: `Unlock ${viewer.email}?` });
  await expect(question).toContainText(`${MAX_SIGN_IN_FAILURES} failed sign-ins are forgotten`);
  await question.getByRole("button", { name: `Unlock ${viewer.email}` }).click();
  await expect(section.getByRole("status")).toContainText(`Unlocked ${viewer.email}`);
  await expect(section.getByRole("status")).toContainText("audit log");
  await expect(row).toHaveAttribute("data-locked", "false");
  await expect(row).toContainText("active");
  await expect(row.getByRole("button", { name: "Unlock" })).toHaveCount(0);
  await expect(question).toBeHidden();

  const viewerContext = await browser.newContext({ baseURL: test.info().project.use.baseURL });
  try {
    const viewerPage = await viewerContext.newPage();
    await loginAs(viewerPage, viewer.email, tenant.password);
    // A viewer sees the members but no unlock button.
    await viewerPage.goto("/settings/members");
    await expect(viewerPage.locator("section#members").getByRole("button", { name: "Unlock" })).toHaveCount(0);
  } finally {
    await viewerContext.close();
  }
});
