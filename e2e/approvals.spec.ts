/**
 * Approvals in the browser (docs/concepts.md#freshness): an approver signs in, finds the stale approval (the policy
 * version changed since it was given) with the old and new values side by side, re-approves it from the
 * keyboard-operable confirmation, and the resume gate flips from stop to resume; the runtime's intent then goes exactly
 * once. A viewer sees no approve button, and the API refuses the viewer too.
 */
import { expect, loginAs, makeRecord, newTaskId, test } from "./fixtures";
import { payloadDigestOf } from "../tests/support/approvals";
import { openPolicy } from "../tests/support/policy-document";

const ARGS = { title: "Q3 custody report", recipients: ["board@example.com"] };

test("an approver re-approves a stale approval and the gate flips to resume", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  // Three people sign in in turn and the owner activates a version in Settings: more than the default minute on a busy
  // machine.
  test.setTimeout(120_000);
  const taskId = newTaskId("appr");
  await runtime.putRecord(makeRecord(taskId, { phase: "publishing", side_effects: {} }));
  const auth = { authorization: `Bearer ${tenant.apiKey}` };
  const intent = {
    idempotency_key: `publish-${taskId}`,
    payload_digest: payloadDigestOf("publish_report", ARGS),
    action: "publish_report",
    tool: "publish_report",
    mutation: true,
    attempt: 1,
    requires_approval: true,
    payload: ARGS,
    agent: "reporter",
    agent_version: "1.0.0",
  };
  const asked = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: auth,
    data: intent,
  });
  expect(asked.status(), await asked.text()).toBe(403);
  const approvalId = ((await asked.json()) as { error: { code: string; details: { approval_id: string } } }).error
    .details.approval_id;

  // Approved under policy version 1, then the owner activates policy version 2: the approval goes stale.
  await loginAs(page, tenant.users.approver.email, tenant.password);
  const first = await page.request.post(`/api/v1/approvals/${approvalId}/decision`, {
    data: { decision: "approve", reason: "Looks right" },
  });
  expect(first.status(), await first.text()).toBe(200);
  await page.context().clearCookies();
  await loginAs(page, tenant.users.owner.email, tenant.password);
  for (const n of [1, 2]) {
    const stored = await page.request.post("/api/v1/policies", { data: openPolicy(n) });
    expect(stored.status(), await stored.text()).toBe(201);
  }
  // Settings → Approvals activates stored version 2 (nothing was active: approvals bound to version 1).
  await page.goto("/settings/approvals");
  await expect(page.getByTestId("current-policy-version")).toHaveText("v1");
  await page.getByTestId("policy-version-input").fill("2");
  await page.getByRole("button", { name: "Activate policy version" }).click();
  await page
    .getByRole("dialog", { name: "Activate policy version 2 (now 1)?" })
    .getByRole("button", { name: "Activate version 2" })
    .click();
  await expect(page.locator("#approvals").getByRole("status")).toHaveText(
    "Policy version 1 → 2; 1 approval became stale.",
  );
  await expect(page.getByTestId("current-policy-version")).toHaveText("v2");
  const gateBefore = await request.post(`/api/v1/tasks/${taskId}/resume`, { headers: auth, data: {} });
  const before = (await gateBefore.json()) as { verdict: string; reasons: Array<{ code: string }> };
  expect(before.verdict).toBe("stop");
  expect(before.reasons.map((r) => r.code)).toEqual(["policy_changed", "approval_stale"]);
  await page.context().clearCookies();

  // The approver's queue shows it stale; its page shows what changed; re-approval from the keyboard.
  await loginAs(page, tenant.users.approver.email, tenant.password);
  await expect(page.getByTestId("nav-approvals-count")).toHaveText(/1/);
  await page.goto("/approvals");
  const row = page.locator(`[data-testid="approval-row"][data-approval="${approvalId}"]`);
  await expect(row).toHaveAttribute("data-status", "stale");
  await row.getByRole("link", { name: /Open the approval/ }).click();
  await expect(page.getByTestId("stale-panel")).toContainText("the policy version changed");
  const change = page.locator('[data-testid="changes-table"] tr[data-field="policy_version"]');
  await expect(change).toContainText("1");
  await expect(change).toContainText("2");
  // On a phone the "now" column stays in the window.
  const wide = page.viewportSize()!;
  await page.setViewportSize({ width: 420, height: 900 });
  const now = page.getByTestId("changes-table").getByRole("columnheader", { name: "Now" });
  const nowBox = (await now.boundingBox())!;
  expect(nowBox.x + nowBox.width).toBeLessThanOrEqual(420);
  await page.setViewportSize(wide);
  await page.getByTestId("approve-button").focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("heading")).toContainText(`Re-approve publish_report for task ${taskId}`);
  // The dialog sits in the middle of the window, like the reconcile dialog.
  const box = (await dialog.boundingBox())!;
  const view = page.viewportSize()!;
  expect(Math.abs(box.x + box.width / 2 - view.width / 2)).toBeLessThan(4);
  expect(Math.abs(box.y + box.height / 2 - view.height / 2)).toBeLessThan(4);
  await dialog.getByTestId("decision-reason").fill("Checked against policy 2");
  await dialog.getByTestId("confirm-decision").press("Enter");
  await expect(page.getByTestId("approval-status")).toHaveAttribute("data-status", "approved");
  await expect(page.getByTestId("bound-policy-version")).toHaveText("v2");

  // The gate flips, and the runtime's intent goes exactly once.
  const gateAfter = await request.post(`/api/v1/tasks/${taskId}/resume`, { headers: auth, data: {} });
  expect(((await gateAfter.json()) as { verdict: string }).verdict).toBe("resume");
  await page.goto(`/tasks/${taskId}`);
  await expect(page.getByTestId("gate-verdict").first()).toHaveAttribute("data-verdict", "resume");
  const go = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: auth,
    data: intent,
  });
  expect(go.status(), await go.text()).toBe(200);
  expect(((await go.json()) as { decision: string }).decision).toBe("go");
  const again = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: auth,
    data: intent,
  });
  expect(again.status()).toBe(409); // in flight: the approval is used; no second go
});

test("a viewer sees no approve button, and the API refuses the viewer", async ({ page, request, tenant, runtime }) => {
  const taskId = newTaskId("appr-v");
  await runtime.putRecord(makeRecord(taskId, { phase: "publishing", side_effects: {} }));
  const asked = await request.post(`/api/v1/tasks/${taskId}/side-effects/publish_report/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: `publish-${taskId}`,
      payload_digest: payloadDigestOf("publish_report", ARGS),
      action: "publish_report",
      mutation: true,
      attempt: 1,
      requires_approval: true,
      payload: ARGS,
    },
  });
  expect(asked.status()).toBe(403);
  const approvalId = ((await asked.json()) as { error: { details: { approval_id: string } } }).error.details
    .approval_id;
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/approvals/${approvalId}`);
  await expect(page.getByTestId("cannot-decide")).toBeVisible();
  await expect(page.getByTestId("approve-button")).toHaveCount(0);
  const refused = await page.request.post(`/api/v1/approvals/${approvalId}/decision`, {
    data: { decision: "approve" },
  });
  expect(refused.status()).toBe(403);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden");
});
