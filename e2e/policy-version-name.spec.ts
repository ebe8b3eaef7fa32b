/**
 * One name for a policy version (issue 24): a task the runtime checkpointed under `"policy-v1"`, an approval bound to
 * version `"1"` and the stored version 1 read `v1` on the task page, the Tasks list, the Approvals list and page and
 * the Policies page; the Tasks filter finds the task by `1`, `v1` and `policy-v1` alike. Each page passes axe.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeRecord, newTaskId, test } from "./fixtures";
import { payloadDigestOf } from "../tests/support/approvals";
import { openPolicy } from "../tests/support/policy-document";

const ARGS = { title: "Q3 custody report", recipients: ["board@example.com"] };

test("the task page, Tasks, Approvals and Policies read the same version name, and the filter takes it", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  test.setTimeout(120_000);
  const taskId = newTaskId("pv-name");
  await runtime.putRecord(makeRecord(taskId, { phase: "publishing", policy_version: "policy-v1", side_effects: {} }));
  const asked = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: `publish-${taskId}`,
      payload_digest: payloadDigestOf("publish_report", ARGS),
      action: "publish_report",
      tool: "publish_report",
      mutation: true,
      attempt: 1,
      requires_approval: true,
      payload: ARGS,
    },
  });
  expect(asked.status(), await asked.text()).toBe(403);
  const approvalId = ((await asked.json()) as { error: { details: { approval_id: string } } }).error.details
    .approval_id;

  await loginAs(page, tenant.users.owner.email, tenant.password);
  const stored = await page.request.post("/api/v1/policies", { data: openPolicy(1) });
  expect(stored.status(), await stored.text()).toBe(201);
  const activated = await page.request.post("/api/v1/policies/1/activate");
  expect(activated.status(), await activated.text()).toBe(200);

  await page.goto(`/tasks/${encodeURIComponent(taskId)}`);
  await expect(page.getByTestId("task-policy-version")).toHaveText("v1");
  await expectNoA11yViolations(page, { soft: true });

  for (const name of ["1", "v1", "policy-v1"]) {
    await page.goto(`/tasks?policy_version=${encodeURIComponent(name)}`);
    const rows = page.getByTestId("task-row");
    await expect(rows, name).toHaveCount(1);
    await expect(rows.first()).toContainText(taskId);
    await expect(rows.first().getByRole("cell", { name: "v1", exact: true })).toBeVisible();
  }
  await expectNoA11yViolations(page, { soft: true });
  await page.goto("/tasks?policy_version=1.5");
  await expect(page.getByText(/policy_version/).first()).toBeVisible();

  await page.goto("/approvals");
  const row = page.getByTestId("approval-row").filter({ hasText: "publish_report" });
  await expect(row.getByRole("cell", { name: "v1", exact: true })).toBeVisible();
  await expectNoA11yViolations(page, { soft: true });

  await page.goto(`/approvals/${approvalId}`);
  await expect(page.getByTestId("bound-policy-version")).toHaveText("v1");
  await expectNoA11yViolations(page, { soft: true });

  await page.goto("/policies");
  await expect(page.getByTestId("current-policy").getByText("v1", { exact: true })).toBeVisible();
  await expectNoA11yViolations(page, { soft: true });

  if (process.env.SHOTS_DIR) {
    for (const [label, path] of [
      ["task", `/tasks/${encodeURIComponent(taskId)}`],
      ["tasks", "/tasks?policy_version=policy-v1"],
      ["tasks-bad", "/tasks?policy_version=1.5"],
      ["approvals", "/approvals"],
      ["approval", `/approvals/${approvalId}`],
      ["policies", "/policies"],
    ]) {
      for (const width of [1366, 420]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(path!);
        await page.screenshot({ path: `${process.env.SHOTS_DIR}/${label}-${width}.png`, fullPage: true });
      }
    }
  }
});
