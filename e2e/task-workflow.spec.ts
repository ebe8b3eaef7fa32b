/**
 * The Tasks page's Workflow column and filter (decision 0049): each run shows the workflow its `task.created` named,
 * linking to that workflow's active custody map — or, for a workflow without one, to the maps page for it, which offers
 * to start one with the workflow filled in; the Workflow filter lists the workspace's workflows and stays in the
 * address. At 420 px the Attention column and the workflow link stay in view, and the page does not scroll sideways.
 * When only archived maps exist, the maps page says so and offers to show them.
 */
import type { APIRequestContext } from "@playwright/test";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, rid, test } from "./fixtures";

async function newMap(request: APIRequestContext, workflow: string, title: string): Promise<{ id: string }> {
  const res = await request.post("/api/v1/maps", { data: { workflow, title } });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { id: string };
}

test("the Workflow column links to the workflow's map, and the filter keeps to one workflow", async ({
  page,
  tenant,
  runtime,
}) => {
  const mapped = `claims-${rid()}`;
  const unmapped = `intake-${rid()}`;
  const a = newTaskId("wf-a");
  const b = newTaskId("wf-b");
  const none = newTaskId("wf-none");
  await runtime.postEvents([
    makeEvent(a, { type: "task.created", attrs: { workflow: mapped } }),
    makeEvent(b, { type: "task.created", attrs: { workflow: unmapped } }),
    makeEvent(none, { type: "task.created", attrs: {} }),
  ]);
  await page.setViewportSize({ width: 1366, height: 900 });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const map = await newMap(page.request, mapped, "Claims triage");

  await page.goto("/tasks");
  const rowOf = (id: string) => page.getByTestId("task-row").filter({ hasText: id });
  await expect(rowOf(a).getByTestId("task-workflow")).toHaveText(mapped);
  await expect(rowOf(a).getByTestId("task-workflow")).toHaveAttribute("data-map", map.id);
  await expect(rowOf(b).getByTestId("task-workflow")).toContainText(unmapped);
  await expect(rowOf(b).getByTestId("task-workflow")).toContainText("no map yet");
  await expect(rowOf(none).getByTestId("task-workflow")).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: "Workflow" })).toBeVisible();
  await expectNoA11yViolations(page, { label: "tasks with workflows" });

  // The filter: the workspace's workflows, in the address, kept by the next page's link.
  const select = page.getByLabel("Workflow", { exact: true });
  await expect(select.locator("option")).toHaveText(["any", mapped, unmapped]);
  await select.selectOption(mapped);
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL((u) => u.searchParams.get("workflow") === mapped);
  await expect(page.getByTestId("task-row")).toHaveCount(1);
  await expect(page.getByTestId("task-row")).toContainText(a);
  await expect(page.getByLabel("Workflow", { exact: true })).toHaveValue(mapped);
  await expectNoA11yViolations(page, { label: "tasks filtered by workflow" });

  // The link opens the workflow's map.
  await page.getByTestId("task-workflow").getByRole("link").click();
  await page.waitForURL(new RegExp(`/maps/${map.id}$`));

  // A workflow without a map: the maps page for it, with the workflow filled in to start one.
  await page.goto("/tasks");
  await rowOf(b)
    .getByRole("link", { name: `No custody map for ${unmapped} yet: start one` })
    .click();
  await page.waitForURL((u) => u.pathname === "/maps" && u.searchParams.get("workflow") === unmapped);
  await expect(page.getByTestId("maps-empty")).toContainText(`No custody map for workflow ${unmapped} yet`);
  await expect(page.getByLabel("Workflow", { exact: true })).toHaveValue(unmapped);
  await expectNoA11yViolations(page, { label: "maps page for a workflow without a map" });
  await page.getByLabel("Title", { exact: true }).fill("Intake");
  await page.getByRole("button", { name: "Create map" }).click();
  await page.waitForURL(/\/maps\/[0-9a-f-]{36}$/);
  const created = page.url().split("/").pop()!;
  await page.goto("/tasks");
  await expect(rowOf(b).getByTestId("task-workflow")).toHaveAttribute("data-map", created);
});

test("at 420 px the Attention column and the workflow stay in view without sideways scrolling", async ({
  page,
  tenant,
  runtime,
}) => {
  const workflow = `narrow-${rid()}`;
  const taskId = newTaskId("wf-narrow");
  await runtime.postEvents([makeEvent(taskId, { type: "task.created", attrs: { workflow } })]);
  await runtime.putRecord(
    makeRecord(taskId, {
      phase: "drafting",
      side_effects: { update_record: { idempotency_key: `k-${taskId}`, status: "in_flight" } },
    }),
  );
  await page.setViewportSize({ width: 420, height: 900 });
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto("/tasks");
  const row = page.getByTestId("task-row").filter({ hasText: taskId });
  const attention = row.getByTestId("task-attention-narrow");
  await expect(attention).toContainText("unknown");
  const wf = row.getByTestId("task-workflow-narrow");
  await expect(wf).toContainText(workflow);
  for (const [name, box] of [
    ["attention", await attention.boundingBox()],
    ["workflow", await wf.boundingBox()],
  ] as const) {
    expect(box, name).not.toBeNull();
    expect(box!.x, name).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width, name).toBeLessThanOrEqual(420);
  }
  // The wide column is hidden, not squeezed.
  await expect(row.getByTestId("task-workflow")).toBeHidden();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await expectNoA11yViolations(page, { label: "tasks at 420 px" });
});

test("the maps page says when every map is archived, and offers to show them", async ({ page, tenant }) => {
  await page.setViewportSize({ width: 1366, height: 900 });
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const map = await newMap(page.request, `archived-${rid()}`, "Old workflow");
  const res = await page.request.patch(`/api/v1/maps/${map.id}`, { data: { archived: true } });
  expect(res.status(), await res.text()).toBe(200);
  await page.goto("/maps");
  const empty = page.getByTestId("maps-empty");
  await expect(empty).toContainText("All custody maps are archived (1)");
  await expect(empty).not.toContainText("No custody maps yet");
  await expectNoA11yViolations(page, { label: "maps page with only archived maps" });
  await empty.getByRole("link", { name: "Show archived maps" }).click();
  await page.waitForURL(/archived=include/);
  await expect(page.getByTestId("map-link")).toHaveText(["Old workflow"]);
  await expect(page.getByTestId("map-archived")).toHaveCount(1);
});
