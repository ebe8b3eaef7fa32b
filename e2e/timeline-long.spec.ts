/**
 * A long run's timeline (decision 0015): the page loads the overview (every attempt and interruption, the newest
 * events, server-counted bins for the rest), and zooming into a stretch that is not loaded fetches its detail. An early
 * compaction no `constraint.checked` followed is marked however long the run
 * (docs/concepts.md#compaction-and-constraints), and a vault event that carried a credential value is flagged in its
 * drawer and on the Egress and vault tab.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, newTaskId, test } from "./fixtures";

test("zooming into a long run's unloaded stretch fetches its detail", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("long");
  const t0 = Date.now() - 3 * 3600_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const events = [
    makeEvent(taskId, {
      id: `${taskId}-sbx1`,
      plane: "environment",
      type: "sandbox.created",
      environment_id: "sbx-e2e-1",
      attempt: 1,
      occurred_at: at(0),
      attrs: {},
    }),
    ...Array.from({ length: 2600 }, (_, i) =>
      makeEvent(taskId, {
        id: `${taskId}-p${i}`,
        plane: "tools",
        type: "x.progress",
        attempt: 1,
        occurred_at: at(1 + i),
        attrs: { step: i },
      }),
    ),
    makeEvent(taskId, {
      id: `${taskId}-int`,
      plane: "session",
      type: "run.interrupted",
      attempt: 1,
      occurred_at: at(2700),
      attrs: { reason: "sandbox lost" },
    }),
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

  const loaded = async () =>
    Number(
      /2602 events \((\d+) loaded/.exec(
        (await page
          .getByText(/2602 events \(\d+ loaded/)
          .first()
          .textContent()) ?? "",
      )?.[1],
    );
  const before = await loaded();
  expect(before).toBeLessThan(2602);
  const detail = page.waitForResponse((r) => r.url().includes(`/timeline?from=`) && r.status() === 200);
  // A lane's bins are one path of pills per style: click the first (leftmost) pill of the unloaded ones.
  await unloaded.first().click({ position: { x: 8, y: 8 } });
  await detail;
  await expect.poll(loaded, { timeout: 10_000 }).toBeGreaterThan(before);
});

test("a long run marks the compaction whose constraints were not re-checked, and warns about a vault event that carried a value", async ({
  page,
  tenant,
  runtime,
}) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("compacted");
  const t0 = Date.now() - 3 * 3600_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const compactionId = `${taskId}-compact`;
  const vaultId = `${taskId}-vault`;
  const events = [
    makeEvent(taskId, {
      id: `${taskId}-sbx1`,
      plane: "environment",
      type: "sandbox.created",
      environment_id: "sbx-e2e-1",
      attempt: 1,
      occurred_at: at(0),
      attrs: {},
    }),
    // Early in the run: neither a marker nor among the newest events, so only the overview's rule brings it.
    makeEvent(taskId, {
      id: compactionId,
      plane: "session",
      type: "compaction.performed",
      attempt: 1,
      occurred_at: at(5),
      attrs: { tokens_before: 180000, tokens_after: 20000 },
    }),
    ...Array.from({ length: 2050 }, (_, i) =>
      makeEvent(taskId, {
        id: `${taskId}-p${i}`,
        plane: "tools",
        type: "x.progress",
        attempt: 1,
        occurred_at: at(10 + i),
        attrs: { step: i },
      }),
    ),
    makeEvent(taskId, {
      id: vaultId,
      plane: "vault",
      type: "credential.attached",
      attempt: 1,
      occurred_at: at(2100),
      attrs: { credential_ref: "records-api", value: "s3cr3t-value-123" },
    }),
  ];
  for (let i = 0; i < events.length; i += 1000) {
    const results = await runtime.postEvents(events.slice(i, i + 1000));
    expect(results.every((r) => r.status === "stored")).toBe(true);
  }

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByText(/2053 events \(\d+ loaded/).first()).toBeVisible();
  const marker = page.getByTestId("constraints-unchecked-marker");
  await expect(marker).toHaveCount(1);
  await expect(marker).toHaveAttribute("data-event-id", compactionId);
  await expectNoA11yViolations(page);

  // Keyboard: the marker is the next stop after the timeline; focus shows its tooltip; Enter goes to the gate's reason.
  await page.getByRole("group", { name: /^Timeline of/ }).focus();
  await page.keyboard.press("Tab");
  await expect(marker).toBeFocused();
  await expect(page.getByRole("tooltip")).toContainText("Constraints not re-checked");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/#gate-reason-constraints_unchecked$/);
  await expect(page.locator("#gate-reason-constraints_unchecked")).toHaveAttribute(
    "data-code",
    "constraints_unchecked",
  );

  // The vault event that carried a value: redacted, and said so in its drawer and on the Egress and vault tab.
  await page.goto(`/tasks/${taskId}?event=${vaultId}&tab=egress`);
  await expect(page.getByTestId("credential-flagged")).toContainText("carried a credential value or placeholder");
  await expect(page.getByTestId("event-drawer")).not.toContainText("s3cr3t-value-123");
  await expect(page.getByTestId("vault-flagged")).toContainText("redacted before storage");
  await expect(page.getByTestId("vault-flagged-event")).toHaveAttribute("data-event-id", vaultId);

  // The runtime re-checks its constraints: the live page drops the marker (the gate's rule over the arrival feed).
  await runtime.postEvents([
    makeEvent(taskId, {
      plane: "session",
      type: "constraint.checked",
      attempt: 1,
      occurred_at: at(2101),
      attrs: { ok: true },
    }),
  ]);
  await expect(marker).toHaveCount(0, { timeout: 15_000 });
});
