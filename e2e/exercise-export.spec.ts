/**
 * The exercise's "retrieve the result and export" step on its page (decision 0038): with the step linked to a task, an
 * owner presses "Export and verify the bundle" and the step shows the bundle's sha256 and that it passed verification;
 * the panel passes axe. A viewer sees the recorded digest and result but no button.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, newTaskId, seedIncidentTask, test } from "./fixtures";

type Step = { step: string; task_id: string | null; bundle_digest?: string | null };

test("an owner exports and verifies the step's bundle from the exercise page", async ({ page, tenant, runtime }) => {
  const incident = await seedIncidentTask(runtime, newTaskId("ex-bundle"));
  await loginAs(page, tenant.users.owner.email, tenant.password);
  const map = (await (
    await page.request.post("/api/v1/maps", { data: { workflow: "exercise-export", title: "Exercise export" } })
  ).json()) as { id: string };
  const ex = (await (
    await page.request.post(`/api/v1/maps/${map.id}/exercises`, {
      data: { interruption_point: "after_intent", layers: ["export"] },
    })
  ).json()) as { id: string; revision: number; steps: Step[] };
  const steps = ex.steps.map((s) => (s.step === "retrieve_and_export" ? { ...s, task_id: incident.taskId } : s));
  const linked = await page.request.patch(`/api/v1/maps/${map.id}/exercises/${ex.id}`, {
    data: { steps, revision: ex.revision },
  });
  expect(linked.status()).toBe(200);

  await page.goto(`/maps/${map.id}/exercises/${ex.id}`);
  const panel = page.getByTestId("export-step-bundle");
  await expect(panel).toContainText("No bundle exported yet.");
  await panel.getByRole("button", { name: "Export and verify the bundle" }).click();
  await expect(panel.getByTestId("export-step-result")).toContainText("passed offline verification", {
    timeout: 60_000,
  });
  const digest = (await panel.getByTestId("export-step-digest").textContent())!.trim();
  expect(digest).toMatch(/^[0-9a-f]{64}$/);
  await expect(panel.getByRole("button", { name: "Export and verify again" })).toBeEnabled();
  await expectNoA11yViolations(page, { include: ["[data-testid='export-step-bundle']"] });

  // Stored: the step as the API reads it carries the same digest.
  const stored = (await (await page.request.get(`/api/v1/maps/${map.id}/exercises/${ex.id}`)).json()) as {
    steps: Step[];
  };
  expect(stored.steps.find((s) => s.step === "retrieve_and_export")?.bundle_digest).toBe(digest);

  // A viewer reads the result; there is no button.
  await page.context().clearCookies();
  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/maps/${map.id}/exercises/${ex.id}`);
  await expect(page.getByTestId("export-step-digest")).toHaveText(digest);
  await expect(page.getByTestId("export-step-result")).toContainText("passed offline verification");
  await expect(page.getByTestId("export-step-button")).toHaveCount(0);
});
