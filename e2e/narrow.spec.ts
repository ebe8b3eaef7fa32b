/**
 * The task page in a narrow window (UX.md "Look": no horizontal scrolling of the whole page): at 800 px and
 * 420 px the page does not scroll sideways and the four timeline lanes stay visible with their labels.
 * A full-page screenshot per width is attached to the test. At 420 px the timeline's labels (lane names and counts, axis
 * ticks, rule and bar labels) do not overlap one another, and the approvals list stacks each approval into a card that
 * fits the window with every field named.
 */
import type { Page } from "@playwright/test";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, seedIncidentTask, test, type RuntimeApi } from "./fixtures";
import { payloadDigestOf } from "../tests/support/approvals";

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

type Box = { text: string; x: number; y: number; width: number; height: number };

/**
 * The visible labels of the task page's timeline: every SVG text but the marks' own glyphs (a bin's count, a warning
 * "!"), which are drawn inside their mark and marked aria-hidden themselves. The axis is aria-hidden as a whole (its
 * ticks are read from the table) but its labels are on screen, so they count.
 */
async function timelineLabels(page: Page): Promise<Box[]> {
  return page.evaluate(() => {
    const svg = document.querySelector('svg[aria-roledescription="timeline"]');
    if (!svg) return [];
    return [...svg.querySelectorAll("text")]
      .filter((t) => t.getAttribute("aria-hidden") !== "true" && (t.textContent ?? "").trim() !== "")
      .map((t) => ({ text: t.textContent ?? "", ...t.getBoundingClientRect().toJSON() }))
      .filter((b) => b.width > 0 && b.height > 0);
  });
}

/** A run with sub-second activity, an idle stretch of 38 s, then more: the axis names the time after the stretch. */
async function seedGappedTask(runtime: RuntimeApi, taskId: string): Promise<void> {
  const t0 = Date.UTC(2026, 0, 5, 11, 59, 58, 700);
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  await runtime.postEvents([
    makeEvent(taskId, { type: "task.created", occurred_at: at(0), attrs: {} }),
    ...[0.4, 0.8, 1.2, 1.6, 2.0].map((s) => makeEvent(taskId, { occurred_at: at(s) })),
    ...[40, 40.3, 40.9, 41.5, 43.2].map((s) => makeEvent(taskId, { occurred_at: at(s) })),
  ]);
}

test("the timeline's labels do not overlap at 420 px", async ({ page, tenant, runtime }, testInfo) => {
  await page.setViewportSize({ width: 420, height: 900 });
  const incident = await seedIncidentTask(runtime, newTaskId("narrow-labels"));
  const gapped = newTaskId("narrow-gapped");
  await seedGappedTask(runtime, gapped);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  for (const taskId of [incident.taskId, gapped]) {
    await page.goto(`/tasks/${taskId}`);
    await expect(page.locator("[data-testid=timeline-lane][data-plane=session]")).toBeVisible();
    const file = testInfo.outputPath(`timeline-420px-${taskId}.png`);
    await page.locator('svg[aria-roledescription="timeline"]').screenshot({ path: file });
    await testInfo.attach(`timeline-420px-${taskId}.png`, { path: file, contentType: "image/png" });
    await expectLabelsApart(page, taskId);
  }
  // The idle stretch is drawn narrow with its length, and the time after it is named in full.
  await expect(page.getByTestId("idle-gap")).toHaveCount(1);
});

async function expectLabelsApart(page: Page, taskId: string): Promise<void> {
  const labels = await timelineLabels(page);
  expect(labels.length, `the timeline of ${taskId} has labels`).toBeGreaterThan(6);
  const overlaps: string[] = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i]!;
      const b = labels[j]!;
      const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (w > 0.5 && h > 0.5) overlaps.push(`"${a.text}" and "${b.text}" (${w.toFixed(1)} × ${h.toFixed(1)} px)`);
    }
  }
  expect(overlaps, `overlapping timeline labels of ${taskId}`).toEqual([]);
  for (const l of labels) expect(l.x + l.width, `"${l.text}" fits the window`).toBeLessThanOrEqual(420.5);
}

test("the approvals list fits 420 px: one card per approval, every field named", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  // axe on a busy machine takes most of the default minute.
  test.setTimeout(120_000);
  const taskId = newTaskId("narrow-approval");
  await runtime.putRecord(makeRecord(taskId, { phase: "publishing", side_effects: {} }));
  const args = { title: "Q3 custody report", recipients: ["board@example.com"] };
  const asked = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: `publish-${taskId}`,
      payload_digest: payloadDigestOf("publish_report", args),
      action: "publish_report",
      tool: "publish_report",
      mutation: true,
      attempt: 1,
      requires_approval: true,
      payload: args,
    },
  });
  expect(asked.status(), await asked.text()).toBe(403);

  await page.setViewportSize({ width: 420, height: 900 });
  await loginAs(page, tenant.users.approver.email, tenant.password);
  await page.goto("/approvals");
  const row = page.getByTestId("approval-row").first();
  await expect(row).toBeVisible();
  for (const name of ["Action", "Task", "Side effect", "Policy", "Requested"]) {
    await expect(row.getByText(name, { exact: true }), `${name} is named`).toBeVisible();
  }
  await expect(row).toContainText("publish_report");
  await expect(row).toContainText(taskId);
  const open = row.getByRole("link", { name: /Open the approval/ });
  await expect(open).toBeVisible();
  for (const [name, box] of [
    ["card", await row.boundingBox()],
    ["open link", await open.boundingBox()],
  ] as const) {
    expect(box, name).not.toBeNull();
    expect(box!.x + box!.width, `${name} fits the window`).toBeLessThanOrEqual(420);
  }
  const sizes = await page.evaluate(() => {
    const list = document.querySelector('[data-testid="approvals-waiting"]')!;
    return {
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      list: list.scrollWidth - list.clientWidth,
    };
  });
  expect(sizes.page, "page scrolls sideways").toBeLessThanOrEqual(0);
  expect(sizes.list, "the list scrolls sideways").toBeLessThanOrEqual(0);
  await expectNoA11yViolations(page, { label: "approvals at 420 px" });
});
