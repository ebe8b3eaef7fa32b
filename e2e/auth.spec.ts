/**
 * Sign-in in the browser: pages need a session, a wrong password says so, a responder sees their tenant's
 * tasks, and a revoked membership cannot sign in.
 */
import { revokeMembership } from "../tests/support/tenants";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, test } from "./fixtures";

test("an unauthenticated visit to /tasks lands on /login", async ({ page }) => {
  await page.goto("/tasks");
  await expect(page).toHaveURL(/\/login(\?|$)/);
  await expect(page.getByLabel("Email")).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
});

test("a wrong password shows a clear message and keeps the person on /login", async ({ page, tenant }) => {
  await page.goto("/login");
  await page.getByLabel("Email").fill(tenant.users.responder.email);
  await page.getByLabel("Password").fill(`${tenant.password}-wrong`);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.locator("form").getByRole("alert")).toHaveText(/email or password is not right/i);
  await expect(page).toHaveURL(/\/login/);
  // and the protected page still sends us back
  await page.goto("/tasks");
  await expect(page).toHaveURL(/\/login/);
});

test("a responder signs in and sees the tenant's task on /tasks", async ({ page, tenant, runtime }) => {
  const taskId = newTaskId("e2e");
  await runtime.putRecord(makeRecord(taskId, { phase: "writing", policy_version: "policy-e2e" }));
  await runtime.postEvents([
    makeEvent(taskId, { plane: "session", type: "task.created" }),
    makeEvent(taskId, { plane: "tools", type: "tool.called", attrs: { tool: "read_document" } }),
  ]);

  await loginAs(page, tenant.users.responder.email, tenant.password);
  await expect(page).toHaveURL(/\/tasks/);
  await expect(page.getByTestId("current-user")).toContainText(tenant.users.responder.email);
  await expect(page.getByTestId("current-user")).toContainText("responder");

  const row = page.getByTestId("task-row").filter({ hasText: taskId });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("writing");
  await expect(row).toContainText("policy-e2e");
  await expect(row.getByRole("link", { name: taskId })).toHaveAttribute("href", `/tasks/${taskId}`);
});

test("a person whose membership was revoked cannot sign in", async ({ page, tenant, db }) => {
  await revokeMembership(db.db, tenant.tenantId, tenant.users.viewer.userId);
  await page.goto("/login");
  await page.getByLabel("Email").fill(tenant.users.viewer.email);
  await page.getByLabel("Password").fill(tenant.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.locator("form").getByRole("alert")).toHaveText(/revoked/i);
  await page.goto("/tasks");
  await expect(page).toHaveURL(/\/login/);
});

test("after sign-in a crafted callbackUrl never leads off the site", async ({ page, tenant, baseURL }) => {
  const origin = new URL(baseURL!).origin;
  for (const callbackUrl of ["//evil.example/x", "/\\evil.example", "https://evil.example/"]) {
    await page.context().clearCookies();
    await page.goto(`/login?callbackUrl=${encodeURIComponent(callbackUrl)}`);
    await page.getByLabel("Email").fill(tenant.users.responder.email);
    await page.getByLabel("Password").fill(tenant.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page).toHaveURL(/\/tasks$/);
    expect(new URL(page.url()).origin).toBe(origin);
  }
});
