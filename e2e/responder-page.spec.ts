/**
 * The responder's page, tried as a new user would (docs/screens.md#task-page), in the browser:
 * - the gate panel says when the runtime last asked the gate ("N s ago (attempt k)"), live; a person's page views
 *   (which evaluate the gate too) are not the runtime asking;
 * - a viewer gets "View" links for gate reasons they may not fix, a responder "Go to the thing to fix";
 * - a task without a checkpoint says "No checkpoint yet", not "unknown" (which reads like an unknown write);
 * - a run that ended (phase `done`) with an unknown write says so, not "nothing is waiting", and stays on the
 *   attention page;
 * - the Artifacts tab follows the run: a report added by the final checkpoint appears without a reload, even when
 *   the artifacts list was last read just before that checkpoint;
 * - tool calls are bars on the Tools lane, paired with their outcomes by call id; a mutating call left without an
 *   outcome is "outcome unknown", a read call "no result recorded".
 * Screenshots at 1280 px and 420 px are attached.
 */
import type { Page, TestInfo } from "@playwright/test";
import type { EventInput } from "@/lib/contract/api";
import {
  expect,
  loginAs,
  makeEvent,
  makeRecord,
  newTaskId,
  rid,
  seedIncidentTask,
  test,
  type RuntimeApi,
} from "./fixtures";

/** A runtime key's headers. */
const runtimeHeaders = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

async function keepScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

test("the gate panel shows when the runtime last asked the gate, live; people's page views do not count", async ({
  page,
  request,
  tenant,
  runtime,
}, testInfo) => {
  const incident = await seedIncidentTask(runtime, newTaskId("asks"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  const asks = page.getByTestId("gate-panel").getByTestId("gate-asks");
  await expect(asks).toHaveAttribute("data-state", "never");
  await expect(asks).toContainText("The runtime has not asked the gate yet.");
  // The page itself refreshes the verdict with the person's session: that is not the runtime asking.
  await page.reload();
  await expect(asks).toHaveAttribute("data-state", "never");

  // The runtime (attempt 2 is the current one) asks twice.
  for (let i = 0; i < 2; i++) {
    const res = await request.post(`/api/v1/tasks/${incident.taskId}/resume`, {
      headers: runtimeHeaders(tenant.apiKey),
      data: {},
    });
    expect(res.status()).toBe(200);
  }
  await expect(asks).toHaveAttribute("data-state", "asking", { timeout: 15_000 });
  await expect(asks).toHaveAttribute("data-attempt", "2");
  await expect(asks).toContainText(/The runtime asked the gate \d+ s ago \(attempt 2\); answer: stop\./);
  await expect(asks).toContainText("2 asks in this attempt");
  // The age keeps counting between refreshes.
  const age = asks.getByTestId("gate-asks-age");
  const first = Number((await age.textContent())?.replace(/\D/g, ""));
  await expect
    .poll(async () => Number((await age.textContent())?.replace(/\D/g, "")), { timeout: 10_000 })
    .toBeGreaterThan(first);
  await keepScreenshot(page, testInfo, "gate-asks-1280px.png");
});

test("gate reason links: 'Go to the thing to fix' for a responder, 'View' for a viewer", async ({
  page,
  browser,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("links"));
  const reason = (p: Page) => p.locator("[data-testid=gate-reason][data-code=side_effect_unknown]");
  const href = `/tasks/${incident.taskId}?tab=side-effects&effect=${incident.effect}`;

  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await expect(reason(page)).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to the thing to fix" })).toHaveCount(0);
  const view = reason(page).getByRole("link", { name: "View" });
  await expect(view).toHaveAttribute("href", href);
  await expect(reason(page)).toContainText("only responders, owners or admins can act on this");

  const responderContext = await browser.newContext({ baseURL: test.info().project.use.baseURL });
  try {
    const responder = await responderContext.newPage();
    await loginAs(responder, tenant.users.responder.email, tenant.password);
    await responder.goto(`/tasks/${incident.taskId}`);
    await expect(reason(responder).getByRole("link", { name: "Go to the thing to fix" })).toHaveAttribute("href", href);
    await expect(reason(responder).getByRole("link", { name: "View" })).toHaveCount(0);
  } finally {
    await responderContext.close();
  }
});

test("a task without a checkpoint says 'No checkpoint yet', not 'unknown'", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("nockpt");
  await runtime.postEvents([makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } })]);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByTestId("task-phase")).toHaveText("No checkpoint yet");
  await page.goto(`/tasks?q=${taskId}`);
  const row = page.getByTestId("task-row").filter({ hasText: taskId });
  await expect(row).toContainText("No checkpoint yet");
  await expect(row.getByRole("cell", { name: "unknown", exact: true })).toHaveCount(0);
});

for (const width of [1280, 420]) {
  test(`a run that ended with an unknown write does not end quietly (${width} px)`, async ({
    page,
    tenant,
    runtime,
  }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    const incident = await seedIncidentTask(runtime, newTaskId("ended-unknown"));
    // The second sandbox (attempt 2) finishes the run.
    await runtime.putRecord(
      makeRecord(incident.taskId, { phase: "done", policy_version: "policy-v1", attempt: 2, side_effects: {} }),
    );
    await loginAs(page, tenant.users.responder.email, tenant.password);

    await page.goto("/");
    const item = page.locator(
      `[data-testid=attention-item][data-kind=side_effect_unknown][data-task="${incident.taskId}"]`,
    );
    await expect(item, "the done task stays on the attention page").toHaveCount(1);
    await item.getByRole("link", { name: "Reconcile" }).click();
    await page.waitForURL((u) => u.pathname === `/tasks/${incident.taskId}`);

    await expect(page.getByTestId("task-phase")).toHaveText("done");
    const gate = page.getByTestId("gate-panel");
    await expect(gate).toHaveAttribute("data-state", "ended-unresolved");
    await expect(gate).not.toContainText("nothing is waiting");
    await expect(gate.getByTestId("gate-run-ended")).toHaveText(/Run ended, not settled/);
    await expect(gate.getByTestId("gate-ended-unresolved")).toContainText(
      `whose outcome is unknown: ${incident.effect}`,
    );
    await expect(gate.getByTestId("gate-verdict")).toHaveAttribute("data-tone", "status");
    await expect(page.getByTestId("run-finished")).toContainText("1 write unknown");
    await expect(page.getByRole("button", { name: `Reconcile ${incident.effect}`, exact: true })).toBeVisible();
    await keepScreenshot(page, testInfo, `ended-with-unknown-${width}px.png`);
  });
}

test("the Artifacts tab shows a report added by the final checkpoint without a reload", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  const taskId = newTaskId("artifacts");
  const draft = { ref: "s3://out/draft.md", sha256: "d".repeat(64), size: 200, media_type: "text/markdown" };
  const report = {
    ref: `s3://out/report-${rid(3)}.md`,
    sha256: "e".repeat(64),
    size: 900,
    media_type: "text/markdown",
  };
  await runtime.putRecord(makeRecord(taskId, { phase: "writing_report", artifacts: [draft] }));
  await runtime.postEvents([makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } })]);
  const before = await request.get(`/api/v1/tasks/${taskId}/artifacts`, { headers: runtimeHeaders(tenant.apiKey) });
  expect(before.status()).toBe(200);
  const staleBody = await before.text();

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}?tab=artifacts`);
  await expect(page.getByTestId("artifact-row")).toHaveCount(1);

  // The worst timing: every artifacts read made while the page still shows the run as live is answered with what
  // the server had before the final checkpoint (the poll that ran just before it), so only a read made after the
  // page learnt of the new checkpoint can show the report.
  await page.route(`**/api/v1/tasks/${taskId}/artifacts`, async (route) => {
    const phase = await page.getByTestId("task-phase").textContent();
    if (phase !== "done") await route.fulfill({ status: 200, contentType: "application/json", body: staleBody });
    else await route.continue();
  });
  await runtime.putRecord(makeRecord(taskId, { phase: "done", artifacts: [draft, report] }));
  await expect(page.getByTestId("task-phase")).toHaveText("done", { timeout: 15_000 });
  await expect(page.getByTestId("artifact-row")).toHaveCount(2, { timeout: 10_000 });
  await expect(page.getByTestId("artifact-row").filter({ hasText: report.ref })).toBeVisible();
});

/** Events of one task whose tool calls finish out of order, and whose attempt 1 ends with two calls open. */
async function seedToolCalls(runtime: RuntimeApi, taskId: string): Promise<void> {
  const t0 = Date.now() - 30_000;
  let seq = 0;
  const ev = (plane: EventInput["plane"], type: string, s: number, extra: Partial<EventInput> = {}): EventInput => ({
    id: `${taskId}:calls:${++seq}`,
    task_id: taskId,
    plane,
    type,
    occurred_at: new Date(t0 + s * 1000).toISOString(),
    ...extra,
  });
  const a1 = { environment_id: `sbx-${rid(3)}-1`, attempt: 1 };
  const a2 = { environment_id: `sbx-${rid(3)}-2`, attempt: 2 };
  await runtime.putRecord(makeRecord(taskId, { phase: "working", side_effects: {} }));
  await runtime.postEvents([
    ev("session", "task.created", 0, { attrs: { principal: "tenant/acme:user/42" } }),
    ev("environment", "sandbox.created", 0.5, { ...a1 }),
    ev("tools", "tool.called", 1, { ...a1, attrs: { tool: "fetch_case", call_id: "call-a" } }),
    ev("tools", "tool.called", 2, { ...a1, attrs: { tool: "fetch_policy", call_id: "call-b" } }),
    ev("tools", "tool.completed", 3, { ...a1, attrs: { tool: "fetch_policy", call_id: "call-b" } }),
    ev("tools", "tool.failed", 6, { ...a1, attrs: { tool: "fetch_case", call_id: "call-a", error: "timeout" } }),
    ev("tools", "tool.called", 7, { ...a1, attrs: { tool: "send_email", call_id: "call-w", mutation: true } }),
    ev("tools", "tool.called", 7.5, { ...a1, attrs: { tool: "search_index", call_id: "call-r" } }),
    ev("session", "run.interrupted", 9, { ...a1, attrs: { reason: "sandbox_lost" } }),
    ev("environment", "sandbox.created", 12, { ...a2 }),
    ev("tools", "tool.called", 13, { ...a2, attrs: { tool: "fetch_case", call_id: "call-a" } }),
    ev("tools", "tool.completed", 14, { ...a2, attrs: { tool: "fetch_case", call_id: "call-a" } }),
  ]);
}

for (const width of [1280, 420]) {
  test(`tool calls are bars on the Tools lane, paired by call id (${width} px)`, async ({
    page,
    tenant,
    runtime,
  }, testInfo) => {
    await page.setViewportSize({ width, height: 900 });
    const taskId = newTaskId("calls");
    await seedToolCalls(runtime, taskId);
    await loginAs(page, tenant.users.responder.email, tenant.password);
    await page.goto(`/tasks/${taskId}`);
    const lane = page.locator("[data-testid=timeline-lane][data-plane=tools]");
    const bar = (callId: string, attempt: number) =>
      lane.locator(`[data-testid=tool-call-bar][data-call-id="${callId}"][data-attempt="${attempt}"]`);
    await expect(lane.getByTestId("tool-call-bar")).toHaveCount(5);
    // call-a failed (its outcome came after call-b's): pairing by order would have called it completed.
    await expect(bar("call-a", 1)).toHaveAttribute("data-status", "failed");
    await expect(bar("call-b", 1)).toHaveAttribute("data-status", "completed");
    await expect(bar("call-w", 1)).toHaveAttribute("data-status", "unknown");
    await expect(bar("call-w", 1)).toHaveAttribute("data-label", "send_email · outcome unknown");
    await expect(bar("call-r", 1)).toHaveAttribute("data-status", "no_result");
    await expect(bar("call-r", 1)).toHaveAttribute("data-label", "search_index · no result recorded");
    // Attempt 2 reused call-a: a new call with its own outcome.
    await expect(bar("call-a", 2)).toHaveAttribute("data-status", "completed");

    // call-a of attempt 1 runs from its call (1 s) to its failure (6 s): five times as long as call-b (2 s → 3 s).
    const aBox = (await bar("call-a", 1).locator("rect").boundingBox())!;
    const bBox = (await bar("call-b", 1).locator("rect").boundingBox())!;
    expect(aBox.width / bBox.width).toBeGreaterThan(4);
    expect(aBox.width / bBox.width).toBeLessThan(6);

    await bar("call-w", 1).locator("rect").hover({ force: true });
    const tooltip = page.getByRole("tooltip");
    await expect(tooltip).toContainText("send_email");
    await expect(tooltip).toContainText("outcome unknown");
    await page.mouse.move(0, 0);
    await bar("call-r", 1).locator("rect").hover({ force: true });
    await expect(tooltip).toContainText("no result recorded");
    await expect(tooltip).toContainText("blocks nothing");
    await page.mouse.move(0, 0);

    if (width >= 640) {
      // The unknown call's own mark is amber too; the read call's stays neutral (wide enough for unbinned marks).
      const calledMark = (seq: number) =>
        page.locator(`[data-testid=timeline-mark][data-kind=event][data-event-id="${taskId}:calls:${seq}"]`);
      await expect(calledMark(7), "send_email's tool.called").toHaveAttribute("data-outcome", "unknown");
      await expect(calledMark(8), "search_index's tool.called").toHaveAttribute("data-outcome", "ok");
    }
    await keepScreenshot(page, testInfo, `tool-calls-${width}px.png`);
  });
}
