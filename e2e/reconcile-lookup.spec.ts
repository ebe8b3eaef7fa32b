/**
 * The reconcile dialog's lookup (docs/concepts.md#reconcile): "ask the lookup again on submit" starts unticked, so what
 * is stored with the decision is the evidence the person wrote from the answer they saw; when it is ticked, the server
 * asks again and keeps that later answer, and the proposed evidence says so instead of quoting the earlier answer as
 * the one kept. Uses the demo's records service (started here on a free port) as the tool owner's lookup endpoint.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { Page } from "@playwright/test";
import { queryRows } from "@/db";
import { startRecordsService, type RecordsService } from "../scripts/records-service";
import { seedDemoSettings } from "../scripts/lib/demo-settings";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

type StoredDecision = { evidence: string; lookup?: { asked_at: string; outcome: string } };

let records: RecordsService;
let dir: string;

test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-e2e-lookup-"));
  records = await startRecordsService({ port: 0, stateFile: path.join(dir, "records.json") });
});

test.afterAll(async () => {
  await records?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Applies the write in the records service under the effect's key, as the lost sandbox did before it died. */
async function applyWrite(taskId: string, key: string): Promise<string> {
  const res = await fetch(`${records.url}/records/rec-${taskId}`, {
    method: "PUT",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ status: "reviewed" }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { operation_id: string }).operation_id;
}

/** Opens the reconcile dialog of the incident's effect and asks the lookup; returns the dialog. */
async function openAndLookUp(page: Page, taskId: string, effect: string, operationId: string) {
  await page.goto(`/tasks/${taskId}`);
  await page.getByRole("button", { name: `Reconcile ${effect}`, exact: true }).click();
  const dialog = page.getByTestId("reconcile-dialog");
  await dialog.getByRole("button", { name: "Look up by idempotency key" }).click();
  await expect(dialog.getByTestId("lookup-answer")).toHaveAttribute("data-outcome", "found");
  // Keyboard focus lands on the answer the person asked for, not on the page behind the dialog.
  await expect(dialog.getByTestId("lookup-answer")).toBeFocused();
  await expect(dialog.getByRole("radio", { name: /It completed/ })).toBeChecked();
  await expect(dialog.getByLabel("External operation id")).toHaveValue(operationId);
  return dialog;
}

test("the lookup box starts unticked; the stored decision is what the evidence quotes", async ({
  page,
  db,
  tenant,
  runtime,
}) => {
  await seedDemoSettings(db.db, tenant.tenantId, { recordsUrl: records.url });
  const incident = await seedIncidentTask(runtime, newTaskId("lookup"));
  const operationId = await applyWrite(incident.taskId, incident.idempotencyKey);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  const dialog = await openAndLookUp(page, incident.taskId, incident.effect, operationId);

  const box = dialog.getByRole("checkbox", { name: /Ask the lookup again when recording/ });
  await expect(box).not.toBeChecked();
  const evidence = await dialog.getByLabel("Evidence").inputValue();
  expect(evidence).toMatch(/answered at \d{4}-\d{2}-\d{2}T/);
  expect(evidence).toContain(operationId);

  await dialog.getByRole("button", { name: `Record ${incident.effect} as completed` }).click();
  await expect(dialog.getByRole("status")).toContainText(/is now\s+completed/);
  await expect(dialog.getByTestId("stored-lookup")).toHaveCount(0);

  const [row] = await queryRows<{ last_reconcile: StoredDecision }>(
    db.db,
    sql`select last_reconcile from side_effects where tenant_id = ${tenant.tenantId} and task_id = ${incident.taskId} and name = ${incident.effect}`,
  );
  expect(row?.last_reconcile.evidence).toBe(evidence);
  expect(
    row?.last_reconcile.lookup,
    "no second lookup answer, different from the one quoted, is stored",
  ).toBeUndefined();
});

test("ticked, the server asks again and the evidence says the later answer is the one kept", async ({
  page,
  db,
  tenant,
  runtime,
}) => {
  await seedDemoSettings(db.db, tenant.tenantId, { recordsUrl: records.url });
  const incident = await seedIncidentTask(runtime, newTaskId("lookup-again"));
  const operationId = await applyWrite(incident.taskId, incident.idempotencyKey);
  await loginAs(page, tenant.users.responder.email, tenant.password);
  const dialog = await openAndLookUp(page, incident.taskId, incident.effect, operationId);

  await dialog.getByRole("checkbox", { name: /Ask the lookup again when recording/ }).check();
  const evidence = await dialog.getByLabel("Evidence").inputValue();
  expect(evidence).toContain("asked again when recording; its answer is kept with this decision");
  expect(evidence).toContain(operationId);

  await dialog.getByRole("button", { name: `Record ${incident.effect} as completed` }).click();
  await expect(dialog.getByRole("status")).toContainText(/is now\s+completed/);
  const stored = dialog.getByTestId("stored-lookup");
  await expect(stored).toContainText("Kept with the decision");

  const [row] = await queryRows<{ last_reconcile: StoredDecision }>(
    db.db,
    sql`select last_reconcile from side_effects where tenant_id = ${tenant.tenantId} and task_id = ${incident.taskId} and name = ${incident.effect}`,
  );
  expect(row?.last_reconcile.evidence).toBe(evidence);
  expect(row?.last_reconcile.lookup?.outcome).toBe("found");
  await expect(stored).toContainText(row!.last_reconcile.lookup!.asked_at);
});
