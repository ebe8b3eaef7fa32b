/**
 * "Exactly once" on a page (issue 24, decision 0050): the records service's own count of writes applied under an
 * idempotency key is shown where a person works — in the reconcile dialog's lookup answer, in the evidence the
 * Side effects tab keeps with the decision, and by "Ask the tool owner" on the completed write — not only in a
 * terminal log. Uses the demo's records service (started here on a free port) as the tool owner's lookup endpoint.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRecordsService, type RecordsService } from "../scripts/records-service";
import { seedDemoSettings } from "../scripts/lib/demo-settings";
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

let records: RecordsService;
let dir: string;

test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-e2e-once-"));
  records = await startRecordsService({ port: 0, stateFile: path.join(dir, "records.json") });
});

test.afterAll(async () => {
  await records?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("the records service's count of writes under the key is on the task page", async ({
  page,
  db,
  tenant,
  runtime,
}) => {
  test.setTimeout(150_000);
  await seedDemoSettings(db.db, tenant.tenantId, { recordsUrl: records.url });
  const incident = await seedIncidentTask(runtime, newTaskId("once"));
  // The lost sandbox's write, and a retry with the same key that the records service does not apply again.
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${records.url}/records/rec-${incident.taskId}`, {
      method: "PUT",
      headers: { "content-type": "application/json", "idempotency-key": incident.idempotencyKey },
      body: JSON.stringify({ status: "reviewed" }),
    });
    expect(res.status).toBe(200);
  }

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  await page.getByRole("button", { name: `Reconcile ${incident.effect}`, exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  await dialog.getByRole("button", { name: "Look up by idempotency key" }).click();
  await expect(dialog.getByTestId("lookup-answer")).toContainText("applied once under this idempotency key");
  await expect(dialog.getByLabel("Evidence")).toHaveValue(/applied once under this key/);
  await dialog.getByRole("button", { name: `Record ${incident.effect} as completed` }).click();
  await expect(dialog.getByRole("status")).toContainText(/is now\s+completed/);
  await dialog.getByRole("button", { name: "Done" }).click();

  const row = page.locator(`[data-testid=side-effect-row][data-name=${incident.effect}]`);
  await expect(row).toHaveAttribute("data-status", "completed");
  await expect(row.getByTestId("last-reconcile")).toContainText("applied once under this key");

  // Later, anyone who may reconcile asks the tool owner again about the completed write.
  await row.getByRole("button", { name: `Ask the tool owner about ${incident.effect}` }).click();
  const answer = row.getByTestId("effect-lookup-answer");
  await expect(answer).toHaveAttribute("data-outcome", "found");
  await expect(answer).toHaveAttribute("data-applied-count", "1");
  await expect(answer).toContainText("applied once under this idempotency key");
  await expectNoA11yViolations(page, { label: "side effects with the tool owner's count" });
});
