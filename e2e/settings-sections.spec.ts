/**
 * Settings in sections with their own addresses (issue 24, "Settings"): /settings opens the first section; each
 * section is a page of its own, reached through the section nav with the keyboard alone; at 1366 and 420 px no
 * section scrolls the page sideways, and each passes the accessibility audit. A screenshot per section and width is
 * attached to the test.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, test } from "./fixtures";

const SECTIONS = [
  { path: "/settings/members", label: "Members" },
  { path: "/settings/api-keys", label: "Runtime API keys" },
  { path: "/settings/approvals", label: "Approvals" },
  { path: "/settings/lookups", label: "Lookups" },
  { path: "/settings/notifications", label: "Notifications" },
  { path: "/settings/export", label: "Export" },
  { path: "/settings/retention", label: "Retention" },
] as const;

test("/settings opens the first section, and the section nav moves between sections from the keyboard", async ({
  page,
  tenant,
}) => {
  test.setTimeout(180_000); // six navigations on a shared, loaded machine
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings");
  await expect(page).toHaveURL(/\/settings\/members$/);
  const nav = page.getByRole("navigation", { name: "Settings sections" });
  await expect(nav.getByRole("link", { name: "Members" })).toHaveAttribute("aria-current", "page");

  for (let i = 1; i < SECTIONS.length; i++) {
    const next = SECTIONS[i]!;
    const link = nav.getByRole("link", { name: next.label, exact: true });
    await link.focus();
    await expect(link).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(new RegExp(`${next.path}$`));
    await expect(nav.getByRole("link", { name: next.label, exact: true })).toHaveAttribute("aria-current", "page");
    await expect(nav.locator("[aria-current=page]")).toHaveCount(1);
  }

  // Tab order: from the nav's first link, Tab reaches the next one (no trap, no skipped links).
  await nav.getByRole("link", { name: "Members" }).focus();
  await page.keyboard.press("Tab");
  await expect(nav.getByRole("link", { name: "Runtime API keys" })).toBeFocused();
});

for (const width of [1366, 420]) {
  test(`every settings section at ${width} px: no sideways scroll, no accessibility violations`, async ({
    page,
    tenant,
  }, testInfo) => {
    test.setTimeout(180_000); // six pages, each with a screenshot and an axe audit
    await page.setViewportSize({ width, height: 900 });
    await loginAs(page, tenant.users.owner.email, tenant.password);
    for (const s of SECTIONS) {
      await page.goto(s.path);
      await expect(page.getByRole("heading", { level: 1, name: "Settings" })).toBeVisible();
      await expect(page.getByTestId("settings-nav")).toBeVisible();
      const name = `settings-${s.path.split("/").pop()}-${width}px.png`;
      const file = testInfo.outputPath(name);
      await page.screenshot({ path: file, fullPage: true });
      await testInfo.attach(name, { path: file, contentType: "image/png" });
      const sizes = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      expect(sizes.scrollWidth, `${s.path} scroll width at ${width} px`).toBeLessThanOrEqual(sizes.clientWidth);
      await expectNoA11yViolations(page, { label: `${s.path} at ${width} px` });
    }
  });
}
