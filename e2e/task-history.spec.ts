/**
 * The history as data (issue 24, decision 0043), in the browser: one row per tool call with its outcome (the compact
 * view), and the task's events downloaded as JSON, with axe checks.
 */
import fs from "node:fs";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, newTaskId, seedIncidentTask, test } from "./fixtures";

test("the history: one row per tool call with its outcome, and the events as a JSON download", async ({
  page,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("hist"));
  const t = Date.now() - 10_000;
  await runtime.postEvents([
    makeEvent(incident.taskId, {
      plane: "tools",
      type: "tool.called",
      attempt: 2,
      occurred_at: new Date(t).toISOString(),
      attrs: { tool: "read_record", call_id: "c2" },
    }),
    makeEvent(incident.taskId, {
      plane: "tools",
      type: "tool.completed",
      attempt: 2,
      occurred_at: new Date(t + 1500).toISOString(),
      attrs: { tool: "read_record", call_id: "c2" },
    }),
  ]);
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await page.getByTestId("history-compact").click();
  await expect(page.getByTestId("history-compact")).toHaveAttribute("aria-pressed", "true");
  const rows = page.getByTestId("tool-call-row");
  await expect(rows).toHaveCount(2);
  await expect(rows.filter({ hasText: "read_record" })).toContainText("completed");
  await expect(rows.filter({ hasText: "read_record" })).toContainText("1.5 s");
  await expect(rows.filter({ hasText: "update_record" })).toHaveAttribute("data-status", "unknown");
  await expectNoA11yViolations(page, {
    include: ["[data-testid=history-views]", "[data-testid=tool-call-table]"],
    label: "compact history",
  });

  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("history-json-download").click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/-events\.json$/);
  const doc = JSON.parse(fs.readFileSync((await download.path())!, "utf8")) as {
    task_id: string;
    events: Array<{ type: string }>;
    complete: boolean;
  };
  expect(doc.task_id).toBe(incident.taskId);
  expect(doc.complete).toBe(true);
  expect(doc.events.map((e) => e.type)).toContain("tool.completed");
  await expect(page.getByTestId("history-json-view")).toHaveAttribute(
    "href",
    `/api/v1/tasks/${incident.taskId}/timeline?limit=1000`,
  );
});
