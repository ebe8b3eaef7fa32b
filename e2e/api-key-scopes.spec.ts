/**
 * Settings → Runtime API keys with a scope and an expiry (issue 24; decision 0044): an owner creates a key bound to a
 * task prefix that expires in 7 days; the list shows both; the key reads a task inside its prefix and gets 404 outside
 * it. The form, with the prefix field open, passes the accessibility audit.
 */
import { expectNoA11yViolations } from "./a11y";
import { expect, loginAs, makeRecord, newTaskId, test } from "./fixtures";

test("an owner creates a task-prefix key that expires in 7 days; the list shows both and the server enforces them", async ({
  page,
  request,
  tenant,
  runtime,
}) => {
  test.setTimeout(180_000); // an axe audit on a shared, loaded machine
  const inside = newTaskId("billing");
  const outside = newTaskId("other");
  await runtime.putRecord(makeRecord(inside));
  await runtime.putRecord(makeRecord(outside));

  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/api-keys");
  const section = page.locator("section#api-keys");
  const name = `billing runtime ${inside}`;
  await section.getByLabel("Name", { exact: true }).fill(name);
  await section.getByLabel("Scope").selectOption("task_prefix");
  await section.getByLabel("Task id prefix").fill("billing-");
  await section.getByLabel("Expires").selectOption("7");
  await expect(section.locator("#api-key-scope-hint")).toContainText("only tasks whose id starts with the prefix");
  await expectNoA11yViolations(page, { label: "/settings/api-keys (task prefix form)" });
  await section.getByRole("button", { name: "Create key" }).click();
  const key = (await section.getByTestId("new-api-key").textContent())!.trim();

  const row = section.getByTestId("api-key-row").filter({ hasText: name });
  await expect(row).toHaveAttribute("data-scope", "task_prefix");
  await expect(row.getByTestId("api-key-scope")).toHaveText("tasks “billing-…”");
  const expiresIn = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  await expect(row.getByTestId("api-key-expires")).toContainText(expiresIn);
  await expect(row).toContainText("active");

  const auth = { authorization: `Bearer ${key}` };
  expect((await request.get(`/api/v1/tasks/${inside}`, { headers: auth })).status()).toBe(200);
  const out = await request.get(`/api/v1/tasks/${outside}`, { headers: auth });
  expect(out.status()).toBe(404);
  const list = await request.get("/api/v1/tasks", { headers: auth });
  expect(list.status()).toBe(403);
  expect(((await list.json()) as { error: { code: string } }).error.code).toBe("scope_task_prefix");
});
