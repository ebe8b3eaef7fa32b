/**
 * The task page in a narrow window (UX.md "Look": no horizontal scrolling of the whole page): at 800 px and
 * 420 px the page does not scroll sideways and the four timeline lanes stay visible with their labels.
 * A full-page screenshot per width is attached to the test.
 */
import { expect, loginAs, makeRecord, newTaskId, seedIncidentTask, test } from "./fixtures";

const LANES = [
  { plane: "session", label: "Session" },
  { plane: "environment", label: "Environment" },
  { plane: "tools", label: "Tools & egress" },
  { plane: "vault", label: "Vault" },
] as const;

for (const width of [800, 420]) {
  test(`the task page at ${width} px has no horizontal page scroll and shows the four lanes`, async ({
    page,
    tenant,
    runtime,
  }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    const incident = await seedIncidentTask(runtime, newTaskId("narrow"));
    await loginAs(page, tenant.users.responder.email, tenant.password);
    await page.goto(`/tasks/${incident.taskId}`);
    await expect(page.getByTestId("task-id")).toHaveText(incident.taskId);

    for (const { plane, label } of LANES) {
      const lane = page.locator(`[data-testid=timeline-lane][data-plane=${plane}]`);
      await expect(lane, `lane ${plane}`).toBeVisible();
      await expect(lane.getByText(label, { exact: true }), `label of lane ${plane}`).toBeVisible();
      // The lane's background band (the group's own box also counts marks that the plot clips away).
      const box = await lane.locator("rect").first().boundingBox();
      expect(box, `lane ${plane} has a box`).not.toBeNull();
      expect(box!.x + box!.width, `lane ${plane} fits the window`).toBeLessThanOrEqual(width + 0.5);
    }
    await expect(page.locator("[data-testid=side-effect-row][data-status=unknown]")).toBeVisible();

    // Kept before the width checks, so a failure comes with the picture.
    const file = testInfo.outputPath(`task-page-${width}px.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(`task-page-${width}px.png`, { path: file, contentType: "image/png" });

    const sizes = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      bodyScrollWidth: document.body.scrollWidth,
    }));
    expect(sizes.clientWidth).toBeLessThanOrEqual(width);
    expect(sizes.scrollWidth, `page scroll width at ${width} px`).toBeLessThanOrEqual(sizes.clientWidth);
    expect(sizes.bodyScrollWidth, `body scroll width at ${width} px`).toBeLessThanOrEqual(sizes.clientWidth);
  });
}

test("long values in the task header wrap inside their columns at 420 px", async ({ page, tenant, runtime }) => {
  await page.setViewportSize({ width: 420, height: 900 });
  const taskId = newTaskId("narrow-long");
  const phase = `phase_${"y".repeat(80)}`;
  await runtime.putRecord(makeRecord(taskId, { phase, policy_version: `policy-${"v".repeat(60)}`, side_effects: {} }));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByTestId("task-phase")).toContainText(phase);
  const sizes = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(sizes.scrollWidth, "page scroll width at 420 px").toBeLessThanOrEqual(sizes.clientWidth);
});
