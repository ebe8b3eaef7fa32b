/**
 * A live run's page follows the run: an event reported after the page opened appears on the timeline and in
 * the event list without a reload (react-query refreshes the task, and the timeline when its event count moves).
 */
import { expect, loginAs, makeEvent, newTaskId, seedIncidentTask, test } from "./fixtures";

test("an event reported while the page is open shows up without a reload", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("live"));
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  const rows = page.getByTestId("event-row");
  const before = await rows.count();
  expect(before).toBeGreaterThan(0);

  const late = makeEvent(incident.taskId, {
    plane: "vault",
    type: "credential.revoked",
    attrs: { credential_ref: "records-api", reason: "rotated" },
  });
  const [result] = await runtime.postEvents([late]);
  expect(result?.status).toBe("stored");

  await expect(rows).toHaveCount(before + 1, { timeout: 15_000 });
  await expect(page.getByTestId("event-row").filter({ hasText: "credential.revoked" })).toBeVisible();
});
