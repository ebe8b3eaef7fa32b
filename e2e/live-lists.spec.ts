/**
 * Live lists (issue 24, decision 0043): the Tasks, Attention and Approvals pages and the header's Approvals badge
 * follow changes made through the API while they are open, without a reload.
 */
import { expect, loginAs, makeRecord, newTaskId, seedIncidentTask, test } from "./fixtures";
import { payloadDigestOf } from "../tests/support/approvals";

const ARGS = { title: "Live report", recipients: ["board@example.com"] };

test("Tasks, Attention, Approvals and the Approvals badge update themselves", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  test.setTimeout(150_000);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await expect(page.getByTestId("live-refresh")).toBeVisible();

  // Tasks: a task reported after the page opened appears.
  const taskId = newTaskId("livelist");
  await runtime.putRecord(makeRecord(taskId, { phase: "running", side_effects: {} }));
  await expect(page.getByTestId("task-link").filter({ hasText: taskId })).toBeVisible({ timeout: 15_000 });

  // Attention: an unknown write reported while the page is open appears.
  await page.goto("/");
  const incident = await seedIncidentTask(runtime, newTaskId("liveatt"));
  await expect(page.locator(`[data-testid=attention-item][data-task="${incident.taskId}"]`).first()).toBeVisible({
    timeout: 15_000,
  });

  // Approvals and the badge: an intent that needs an approval appears in the queue and raises the count.
  await page.goto("/approvals");
  const badge = page.getByTestId("nav-approvals-count");
  const before = (await badge.count()) ? Number((await badge.innerText()).replace(/\D+/g, "")) : 0;
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
  await expect(page.getByTestId("approvals-waiting").getByText(taskId)).toBeVisible({ timeout: 15_000 });
  await expect(badge).toContainText(String(before + 1), { timeout: 15_000 });

  // The badge is live on a page that does not refresh itself too.
  await page.goto("/policies");
  await expect(badge).toContainText(String(before + 1));
  const second = `${taskId}-b`;
  await runtime.putRecord(makeRecord(second, { phase: "running", side_effects: {} }));
  const OTHER = { ...ARGS, title: "Live report, second run" };
  const again = await request.post(`/api/v1/tasks/${second}/side-effects/publish_report/intent`, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: {
      idempotency_key: `publish-${second}`,
      payload_digest: payloadDigestOf("publish_report", OTHER),
      action: "publish_report",
      tool: "publish_report",
      mutation: true,
      attempt: 1,
      requires_approval: true,
      payload: OTHER,
    },
  });
  expect(again.status(), await again.text()).toBe(403);
  await expect(badge).toContainText(String(before + 2), { timeout: 30_000 });
});
