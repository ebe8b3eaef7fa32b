/**
 * A webhook source the workspace does not trust for the action (decision 0040) reports that a write was applied: the
 * effect stays `unknown`, and the responder's reconcile dialog shows the report and opens with its choices pre-filled
 * (outcome, external operation id, evidence naming the source and the webhook-id); the person records the decision.
 * The message is signed with the `standardwebhooks` package, as a tool owner's system would sign it.
 */
import { Webhook } from "standardwebhooks";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

test("an untrusted source's report pre-fills the reconcile dialog; the person decides", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("whprefill"));
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const made = await page.request.post("/api/v1/settings/webhook-sources", {
    data: { name: "crm", trusted_actions: [] },
  });
  expect(made.status(), await made.text()).toBe(200);
  const { secret } = (await made.json()) as { secret: string };
  await page.context().clearCookies();

  const body = JSON.stringify({
    type: "operation.outcome",
    data: { idempotency_key: incident.idempotencyKey, outcome: "applied", external_operation_id: "op-crm-42" },
  });
  const id = `msg_prefill_${incident.taskId}`;
  const at = new Date();
  const sent = await request.post("/api/v1/webhooks/crm", {
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, body),
    },
    data: body,
  });
  expect(sent.status(), await sent.text()).toBe(200);
  expect(await sent.json()).toMatchObject({ disposition: "evidence" });

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await page.getByRole("button", { name: `Reconcile ${incident.effect}`, exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  await expect(dialog.getByTestId("webhook-report")).toContainText("Webhook source crm reported this write applied");
  await expect(dialog.getByRole("radio", { name: /It completed/ })).toBeChecked();
  await expect(dialog.getByLabel("External operation id")).toHaveValue("op-crm-42");
  await expect(dialog.getByLabel("Evidence")).toHaveValue(
    new RegExp(`^Webhook source crm reported applied at .+ \\(webhook-id ${id}, operation op-crm-42\\)\\.$`),
  );

  await dialog.getByRole("button", { name: `Record ${incident.effect} as completed` }).click();
  await expect(dialog.getByRole("status")).toContainText(/is now\s+completed/);
});
