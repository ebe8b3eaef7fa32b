/**
 * A run that has ended (phase `done`), shaped like the reference scenario after it finished: a short first
 * sandbox lost after about a second, a second one that waited a couple of minutes for a person and finished.
 * - The gate panel says "Run ended" in neutral colours: no green "Resume" that reads like an invitation to go on
 *   (the verdict the record would get is still there, marked as information).
 * - After "Fit", sandbox bar labels never spill out of their bar nor overlap (attempt 1's bar is a few pixels
 *   wide: it was drawn as "at" beside "attempt 2"); the full label is in the bar's tooltip.
 * - After "Fit", the crash region stays readable (docs/screens.md#timeline): the two-minute wait is drawn as a narrow
 *   band that says how long it lasted, so attempt 1's bar keeps room for its label instead of collapsing into the left
 *   edge; switching the compression off gives a linear scale again.
 * - At 420 px the lane names are not covered by marks or bin counts.
 */
import type { Locator, Page } from "@playwright/test";
import { expect, loginAs, makeRecord, newTaskId, rid, test, type RuntimeApi } from "./fixtures";
import type { EventInput } from "@/lib/contract/api";

type Box = { x: number; y: number; width: number; height: number };

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function seedEndedRun(runtime: RuntimeApi, taskId: string): Promise<void> {
  const sbx1 = `sbx-${rid(4)}-1`;
  const sbx2 = `sbx-${rid(4)}-2`;
  const t0 = Date.now() - 180_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  let seq = 0;
  const ev = (plane: EventInput["plane"], type: string, s: number, extra: Partial<EventInput> = {}): EventInput => ({
    id: `${taskId}:ended:${++seq}`,
    task_id: taskId,
    plane,
    type,
    occurred_at: at(s),
    ...extra,
  });
  const a1 = { environment_id: sbx1, attempt: 1 };
  const a2 = { environment_id: sbx2, attempt: 2 };
  await runtime.putRecord(makeRecord(taskId, { phase: "done", side_effects: {} }));
  await runtime.postEvents([
    ev("session", "task.created", 0, { attrs: { principal: "tenant/acme:user/42" } }),
    ev("environment", "sandbox.created", 0.1, { ...a1, attrs: { image: "demo/doc-agent:1.0" } }),
    ev("vault", "credential.issued", 0.15, { ...a1, attrs: { credential_ref: "records-api" } }),
    ev("tools", "tool.called", 0.3, { ...a1, attrs: { tool: "read_document" } }),
    ev("tools", "tool.completed", 0.35, { ...a1, attrs: { tool: "read_document" } }),
    ev("session", "checkpoint.saved", 0.5, { ...a1, attrs: { phase: "document_read" } }),
    ev("session", "run.interrupted", 1.0, { ...a1, attrs: { reason: "sandbox_lost" } }),
    ev("environment", "sandbox.destroyed", 1.05, { ...a1, attrs: { reason: "lost" } }),
    ev("environment", "sandbox.created", 1.3, { ...a2, attrs: { image: "demo/doc-agent:1.0" } }),
    ev("vault", "credential.issued", 1.35, { ...a2, attrs: { credential_ref: "records-api" } }),
    ev("session", "run.resumed", 110, { ...a2, attrs: {} }),
    ev("tools", "tool.called", 111, { ...a2, attrs: { tool: "write_report" } }),
    ev("tools", "tool.completed", 112, { ...a2, attrs: { tool: "write_report" } }),
    ev("session", "phase.changed", 119, { ...a2, attrs: { from: "report_written", to: "done" } }),
    ev("environment", "sandbox.destroyed", 120, { ...a2, attrs: { reason: "finished" } }),
  ]);
}

async function box(locator: Locator): Promise<Box> {
  const b = await locator.boundingBox();
  expect(b, "element has a box").not.toBeNull();
  return b!;
}

/** Every drawn bar label lies inside its bar, and no two labels overlap. */
async function expectBarLabelsInsideTheirBars(page: Page): Promise<void> {
  const bars = page.getByTestId("sandbox-bar");
  const labels: Box[] = [];
  for (const bar of await bars.all()) {
    const rect = await box(bar.locator("rect").first());
    const label = bar.getByTestId("sandbox-bar-label");
    if ((await label.count()) === 0) continue;
    const l = await box(label);
    const attempt = await bar.getAttribute("data-attempt");
    expect(l.x, `label of attempt ${attempt} starts inside its bar`).toBeGreaterThanOrEqual(rect.x - 0.5);
    expect(l.x + l.width, `label of attempt ${attempt} ends inside its bar`).toBeLessThanOrEqual(
      rect.x + rect.width + 0.5,
    );
    for (const other of labels) expect(overlaps(l, other), `label of attempt ${attempt} overlaps another`).toBe(false);
    labels.push(l);
  }
}

for (const width of [1280, 420]) {
  test(`an ended run at ${width} px: neutral gate panel, bar labels that fit, readable lane names`, async ({
    page,
    tenant,
    runtime,
  }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    const taskId = newTaskId("ended");
    await seedEndedRun(runtime, taskId);
    await loginAs(page, tenant.users.responder.email, tenant.password);
    await page.goto(`/tasks/${taskId}`);
    await expect(page.getByTestId("task-phase")).toHaveText("done");
    await expect(page.getByTestId("run-finished")).toContainText("Run ended");

    await test.step("the gate panel says the run ended, without the green Resume call to action", async () => {
      const gate = page.getByTestId("gate-panel");
      await expect(gate).toHaveAttribute("data-state", "ended");
      await expect(gate.getByTestId("gate-run-ended")).toHaveText(/Run ended/);
      await expect(gate).toContainText("nothing is waiting on the gate");
      // Still there as information, in neutral colours.
      const verdict = gate.getByTestId("gate-verdict");
      await expect(verdict).toHaveAttribute("data-verdict", "resume");
      await expect(verdict).toHaveAttribute("data-tone", "neutral");
      await expect(gate.locator("[class*=emerald], [class*=green]")).toHaveCount(0);
      const colours = await verdict.evaluate((el) => {
        const s = getComputedStyle(el);
        return [s.color, s.backgroundColor, s.borderTopColor];
      });
      const greenEmerald = await page.evaluate(() => {
        const probe = document.createElement("span");
        probe.className = "bg-emerald-50 text-emerald-800 border-emerald-300 border";
        document.body.append(probe);
        const s = getComputedStyle(probe);
        const out = [s.color, s.backgroundColor, s.borderTopColor];
        probe.remove();
        return out;
      });
      for (let i = 0; i < colours.length; i++)
        expect(colours[i], "verdict colour is not the green of Resume").not.toBe(greenEmerald[i]);
      await expect(gate.getByText("Writes it may start")).toHaveCount(0);
    });

    await test.step("after Fit, sandbox bar labels stay inside their bars; the full label is in the tooltip", async () => {
      await page.getByRole("button", { name: "Fit", exact: true }).click();
      await expect(page.getByTestId("sandbox-bar")).toHaveCount(2);
      const first = page.locator("[data-testid=sandbox-bar][data-attempt='1']");
      const second = page.locator("[data-testid=sandbox-bar][data-attempt='2']");
      await expect(first).toHaveAttribute("data-label", "attempt 1");
      await expect(second.getByTestId("sandbox-bar-label")).toHaveText("attempt 2");
      await expectBarLabelsInsideTheirBars(page);
      // The crash region did not collapse into the left edge: attempt 1 keeps a readable bar with its label.
      const firstBox = await box(first.locator("rect").first());
      expect(firstBox.width, "attempt 1's bar after Fit").toBeGreaterThanOrEqual(width >= 640 ? 56 : 18);
      await expect(first.getByTestId("sandbox-bar-label")).toHaveText(width >= 640 ? "attempt 1" : /^(attempt 1|#1)$/);
      const gap = page.getByTestId("idle-gap");
      await expect(gap).toHaveCount(1);
      await expect(gap).toContainText("1 min 48 s");
      expect(Number(await gap.getAttribute("data-duration-ms"))).toBeGreaterThan(100_000);
      await first.locator("rect").first().hover({ force: true });
      await expect(page.getByRole("tooltip")).toContainText("attempt 1");
      await page.mouse.move(0, 0);
    });

    await test.step("with the compression switched off the scale is linear: attempt 1 is a sliver again", async () => {
      const toggle = page.getByRole("button", { name: "Compress idle time" });
      await expect(toggle).toHaveAttribute("aria-pressed", "true");
      await toggle.click();
      await expect(toggle).toHaveAttribute("aria-pressed", "false");
      await expect(page.getByTestId("idle-gap")).toHaveCount(0);
      const first = page.locator("[data-testid=sandbox-bar][data-attempt='1']");
      expect((await box(first.locator("rect").first())).width).toBeLessThan(width >= 640 ? 20 : 8);
      await toggle.click();
      await expect(page.getByTestId("idle-gap")).toHaveCount(1);
    });

    if (width < 640) {
      await test.step("lane names are not covered by marks or bin counts", async () => {
        const labels = page.getByTestId("timeline-lane-label");
        await expect(labels).toHaveCount(4);
        const marks = await page.getByTestId("timeline-mark").all();
        expect(marks.length).toBeGreaterThan(0);
        const markBoxes = await Promise.all(marks.map(box));
        for (const label of await labels.all()) {
          const l = await box(label);
          const name = await label.textContent();
          for (const m of markBoxes) expect(overlaps(l, m), `a mark covers the lane name ${name}`).toBe(false);
          // Painted after every mark of its lane: nothing drawn later in the lane can hide it.
          expect(
            await label.evaluate((el) => el.nextElementSibling === null),
            `lane name ${name} is drawn last in its lane`,
          ).toBe(true);
        }
      });
    }

    const file = testInfo.outputPath(`ended-run-${width}px.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(`ended-run-${width}px.png`, { path: file, contentType: "image/png" });
  });
}
