/**
 * A long run's timeline (docs/decisions/0012): the page loads the overview (every attempt and interruption, the
 * newest events, server-counted bins for the rest), and zooming into a stretch that is not loaded fetches its detail.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, newTaskId, test } from "./fixtures";

test("zooming into a long run's unloaded stretch fetches its detail", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("long");
  const t0 = Date.now() - 3 * 3600_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const events = [
    makeEvent(taskId, { id: `${taskId}-sbx1`, plane: "environment", type: "sandbox.created", environment_id: "sbx-e2e-1", attempt: 1, occurred_at: at(0), attrs: {} }),
    ...Array.from({ length: 2600 }, (_, i) =>
      makeEvent(taskId, { id: `${taskId}-p${i}`, plane: "tools", type: "x.progress", attempt: 1, occurred_at: at(1 + i), attrs: { step: i } }),
    ),
    makeEvent(taskId, { id: `${taskId}-int`, plane: "session", type: "run.interrupted", attempt: 1, occurred_at: at(2700), attrs: { reason: "sandbox lost" } }),
  ];
  for (let i = 0; i < events.length; i += 1000) {
    const results = await runtime.postEvents(events.slice(i, i + 1000));
    expect(results.every((r) => r.status === "stored")).toBe(true);
  }

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByText(/2602 events \(\d+ loaded/).first()).toBeVisible();
  await expect(page.getByTestId("interruption-rule")).toHaveCount(1);
  const unloaded = page.locator('[data-kind="bin"][data-unloaded]');
  await expect(unloaded.first()).toBeVisible();
  // Dashed "not loaded" bins and thinned labels keep the page accessible.
  await expectNoA11yViolations(page);
  // The newest events are loaded: the last progress event is in the list.
  await expect(page.getByTestId("event-row").filter({ hasText: "x.progress" }).first()).toBeVisible();

  const loaded = async () => Number(/2602 events \((\d+) loaded/.exec((await page.getByText(/2602 events \(\d+ loaded/).first().textContent()) ?? "")?.[1]);
  const before = await loaded();
  expect(before).toBeLessThan(2602);
  const detail = page.waitForResponse((r) => r.url().includes(`/timeline?from=`) && r.status() === 200);
  // A lane's bins are one path of pills per style: click the first (leftmost) pill of the unloaded ones.
  await unloaded.first().click({ position: { x: 8, y: 8 } });
  await detail;
  await expect.poll(loaded, { timeout: 10_000 }).toBeGreaterThan(before);
});
