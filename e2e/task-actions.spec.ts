/**
 * Actions on a task (issue 24, decision 0043), in the browser:
 * - a responder ends a task from the header, confirming in the modal dialog with a reason; the page shows who ended it
 *   and the gate's `task_terminated`; a viewer has no such button;
 * - a `credential_revoked` reason offers the steps to issue a fresh credential.
 * Each with axe checks.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test } from "./fixtures";

test("a responder ends a task after confirming with a reason", async ({ page, tenant, runtime }) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("end");
  await runtime.putRecord(makeRecord(taskId, { phase: "drafting", side_effects: {} }));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  await page.getByTestId("terminate-task").click();
  const dialog = page.getByTestId("terminate-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("heading")).toContainText(`End task ${taskId} for good?`);
  // The reason is required: confirming without one sends nothing.
  await page.getByTestId("terminate-dialog-confirm").click();
  await expect(dialog).toBeVisible();
  await page.getByTestId("terminate-dialog-reason").fill("runaway loop");
  await page.getByTestId("terminate-dialog-confirm").click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("task-terminated")).toContainText(`Ended by ${tenant.users.responder.email}`);
  await expect(page.getByTestId("task-terminated")).toContainText("runaway loop");
  await expect(page.getByTestId("task-phase")).toHaveText("terminated");
  await expect(page.getByTestId("terminate-task")).toHaveCount(0);
  await expect(page.getByTestId("fence-task")).toHaveCount(0);
  // The runtime's next checkpoint is refused.
  const res = await page.request.put(`/api/v1/tasks/${taskId}`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: makeRecord(taskId, { phase: "drafting", side_effects: {} }),
  });
  expect(res.status()).toBe(409);

  // The dialog passes axe (checked last: axe opens a page of its own).
  const another = newTaskId("end-axe");
  await runtime.putRecord(makeRecord(another, { phase: "drafting", side_effects: {} }));
  await page.goto(`/tasks/${another}`);
  await page.getByTestId("terminate-task").click();
  await expect(dialog).toBeVisible();
  await expectNoA11yViolations(page, { include: ["[data-testid=terminate-dialog]"], label: "terminate dialog" });
});

test("a viewer has no End task button", async ({ page, tenant, runtime }) => {
  const other = newTaskId("end-viewer");
  await runtime.putRecord(makeRecord(other, { phase: "drafting", side_effects: {} }));
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${other}`);
  await expect(page.getByTestId("task-id")).toHaveText(other);
  await expect(page.getByTestId("terminate-task")).toHaveCount(0);
});

test("a revoked credential's reason says how to issue a fresh one", async ({ page, tenant, runtime }) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("cred");
  await runtime.putRecord(makeRecord(taskId, { phase: "drafting", side_effects: {} }));
  const now = Date.now();
  await runtime.postEvents([
    makeEvent(taskId, {
      plane: "vault",
      type: "credential.issued",
      occurred_at: new Date(now - 5000).toISOString(),
      attrs: { credential_ref: "records-api", credential_id: "cred-1" },
    }),
    makeEvent(taskId, {
      plane: "vault",
      type: "credential.revoked",
      occurred_at: new Date(now - 1000).toISOString(),
      attrs: { credential_ref: "records-api", credential_id: "cred-1", reason: "rotated" },
    }),
  ]);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}`);
  const reason = page.locator("[data-testid=gate-reason][data-code=credential_revoked]");
  await expect(reason).toBeVisible();
  const steps = reason.getByTestId("fresh-credential-steps");
  await steps.getByText("How to issue a fresh credential").click();
  await expect(steps).toContainText("new credential id");
  await expect(steps).toContainText('"credential_ref": "records-api"');
  await expectNoA11yViolations(page, { include: ["[data-testid=fresh-credential-steps]"], label: "credential steps" });
});
