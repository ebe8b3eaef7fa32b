/**
 * Export and verify on the task page (decision 0037): a viewer downloads the task's evidence bundle, drops it on
 * "Verify this bundle" and sees every check pass, all in the browser (no request carries the bundle); a changed byte
 * is named. The panel passes axe.
 */
import fs from "node:fs";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

test("a viewer exports a task's bundle and verifies it in the browser", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("bundle"));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  const link = page.getByTestId("export-bundle");
  await expect(link).toBeVisible();

  const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
  const file = await download.path();
  expect(download.suggestedFilename()).toMatch(/^task-.*\.tar\.gz$/);
  const bytes = fs.readFileSync(file);

  const uploads: string[] = [];
  page.on("request", (r) => {
    // No request carries the bundle (it is well over 1 KB).
    if ((r.postDataBuffer()?.length ?? 0) > 1000) uploads.push(`${r.method()} ${r.url()}`);
  });
  await page.getByLabel("Verify this bundle").setInputFiles({
    name: "bundle.tar.gz",
    mimeType: "application/gzip",
    buffer: bytes,
  });
  const report = page.getByTestId("verify-report");
  await expect(report).toHaveAttribute("data-ok", "true");
  await expect(report).toContainText("bundle.tar.gz verifies.");
  for (const check of ["archive", "envelope", "digests", "checkpoints", "audit chain", "references"]) {
    await expect(report.getByText(check, { exact: true })).toBeVisible();
  }
  await expect(report).toContainText("The keys came from the bundle itself");
  await expectNoA11yViolations(page, { include: ["section[aria-labelledby='export-heading']"] });

  // Not a bundle: a clear sentence, still in the browser.
  await page.getByLabel("Verify this bundle").setInputFiles({
    name: "notes.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("not a bundle"),
  });
  await expect(report).toHaveAttribute("data-ok", "false");
  await expect(report).toContainText("not a gzip file");
  expect(uploads).toEqual([]);
});
