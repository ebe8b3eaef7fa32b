/**
 * What decision 0029 changes on the pages: a deliberate repeat of a write is shown on the task page (the side-effect
 * row and the timeline's event list), and an approval whose intent sent only a digest says that nothing on the page
 * shows what the digest covers — while one that sent its payload shows it, checked against the digest.
 */
import { expect, loginAs, makeRecord, newTaskId, test } from "./fixtures";
import { payloadDigestOf } from "../tests/support/approvals";

const CHARGE = { amount: 4200, currency: "EUR", customer: "cus_918" };

test("a deliberate repeat shows on the task page: the effect's row and the timeline", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  const taskId = newTaskId("repeat");
  await runtime.putRecord(makeRecord(taskId, { phase: "charging", side_effects: {} }));
  const headers = { authorization: `Bearer ${tenant.apiKey}` };
  const intent = (name: string, key: string, extra: Record<string, unknown> = {}) =>
    request.post(`/api/v1/tasks/${taskId}/side-effects/${name}/intent`, {
      headers,
      data: {
        idempotency_key: key,
        payload_digest: payloadDigestOf("CreatePayment", CHARGE),
        action: "payments.create",
        tool: "CreatePayment",
        mutation: true,
        attempt: 1,
        ...extra,
      },
    });
  expect((await intent("CreatePayment.call_1", `pay-${taskId}-1`)).status()).toBe(200);
  const refused = await intent("CreatePayment.call_2", `pay-${taskId}-2`);
  expect(refused.status()).toBe(409);
  const repeated = await intent("CreatePayment.call_2", `pay-${taskId}-2`, { repeats: "CreatePayment.call_1" });
  expect(repeated.status(), await repeated.text()).toBe(200);

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${taskId}?tab=side-effects`);
  const row = page.locator('[data-testid="side-effect-row"][data-name="CreatePayment.call_2"]');
  await expect(row.getByTestId("effect-repeats")).toHaveText(
    "Deliberately repeats CreatePayment.call_1 (same action and payload)",
  );
  const mark = page.getByTestId("event-row").filter({ hasText: "decision.recorded" });
  await expect(mark).toHaveCount(1);
  await expect(mark).toContainText("repeats=CreatePayment.call_1");
});

test("an approval whose intent sent only a digest says nothing on the page shows what it covers", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  const headers = { authorization: `Bearer ${tenant.apiKey}` };
  const ask = async (taskId: string, withPayload: boolean) => {
    await runtime.putRecord(makeRecord(taskId, { phase: "charging", side_effects: {} }));
    const res = await request.post(`/api/v1/tasks/${taskId}/side-effects/charge/intent`, {
      headers,
      data: {
        idempotency_key: `charge-${taskId}`,
        payload_digest: payloadDigestOf("CreatePayment", CHARGE),
        action: "payments.create",
        tool: "CreatePayment",
        mutation: true,
        attempt: 1,
        requires_approval: true,
        ...(withPayload ? { payload: CHARGE } : {}),
      },
    });
    expect(res.status(), await res.text()).toBe(403);
    return ((await res.json()) as { error: { details: { approval_id: string } } }).error.details.approval_id;
  };
  const digestOnly = await ask(newTaskId("digest"), false);
  const withPayload = await ask(newTaskId("payload"), true);

  await loginAs(page, tenant.users.approver.email, tenant.password);
  await page.goto(`/approvals/${digestOnly}`);
  await expect(page.getByTestId("digest-only-note")).toContainText(
    "The runtime sent only a digest; nothing here shows what it covers.",
  );
  await expect(page.getByTestId("decision-panel")).not.toContainText("exactly this payload");
  await expect(page.getByTestId("approval-payload")).toHaveCount(0);

  await page.goto(`/approvals/${withPayload}`);
  await expect(page.getByTestId("approval-payload")).toContainText("cus_918");
  await expect(page.getByTestId("digest-only-note")).toHaveCount(0);
  await expect(page.getByTestId("decision-panel")).toContainText("exactly this payload");
});
