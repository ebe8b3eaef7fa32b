/**
 * Settings → Export (decision 0038): an owner exports the workspace in the browser, sees it finish with the sha256 of
 * the bytes, and the downloaded file passes the offline verifier with that digest; the page passes axe. A viewer sees
 * no export control and the API refuses them.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { verifyBundle } from "@/lib/export/verify";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

test("an owner exports the workspace and the downloaded file verifies", async ({ page, tenant, runtime }) => {
  await seedIncidentTask(runtime, newTaskId("ws-export"));
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/export");
  await expect(page.getByRole("heading", { name: "Export the workspace" })).toBeVisible();
  await expectNoA11yViolations(page);

  await page.getByTestId("export-start").click();
  const link = page.getByTestId("export-download");
  await expect(link).toBeVisible({ timeout: 60_000 });
  const shown = (await page.getByTestId("export-digest").textContent())!.trim();
  expect(shown).toMatch(/^[0-9a-f]{64}$/);
  await expect(page.getByTestId("export-status")).toContainText("Ready:");
  await expectNoA11yViolations(page, { label: "/settings/export (done)" });

  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  expect(download.suggestedFilename()).toMatch(
    new RegExp(`^${tenant.slug}-workspace-\\d{4}-\\d{2}-\\d{2}\\.tar\\.gz$`),
  );
  const bytes = fs.readFileSync(await download.path());
  expect(createHash("sha256").update(bytes).digest("hex")).toBe(shown);
  const report = await verifyBundle(new Uint8Array(bytes));
  expect(report.first_failure, JSON.stringify(report.first_failure)).toBeNull();
  expect(report.ok).toBe(true);
});

test("a viewer sees no export control and the API refuses them", async ({ page, tenant }) => {
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/settings/export");
  await expect(page.getByTestId("export-not-allowed")).toContainText("cannot export the workspace");
  await expect(page.getByTestId("export-start")).toHaveCount(0);
  await expectNoA11yViolations(page);
  const res = await page.request.get("/api/v1/export");
  expect(res.status()).toBe(403);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
});
