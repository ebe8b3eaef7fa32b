/**
 * The dashboard's header: its links prefetch a page only when reached for (hover or focus; components/ui/IntentLink.tsx)
 * and still navigate, and Sign out (next-auth's client loaded when pressed) ends the session.
 */
import { expect, loginAs, test } from "./fixtures";

test("navigation links navigate, and Sign out ends the session", async ({ page, tenant }) => {
  const prefetched: string[] = [];
  page.on("request", (r) => {
    if (/[?&]_rsc=/.test(r.url())) prefetched.push(new URL(r.url()).pathname);
  });
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto("/tasks");
  await page.waitForLoadState("networkidle");
  // Loading a page does not prefetch the pages only the header links to (other links in a page still may).
  expect(prefetched.filter((p) => ["/", "/approvals", "/maps", "/policies", "/audit", "/account"].includes(p))).toEqual(
    [],
  );

  const nav = page.getByRole("navigation", { name: "Main" });
  await nav.getByRole("link", { name: /^Approvals/ }).click();
  await page.waitForURL(/\/approvals$/);
  await expect(nav.getByRole("link", { name: /^Approvals/ })).toHaveAttribute("aria-current", "page");

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/login/);
  await page.goto("/tasks");
  await page.waitForURL(/\/login/);
});
