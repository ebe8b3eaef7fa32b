/**
 * Roles in the browser: a viewer sees an unknown write but cannot settle it (no button, and the API says 403
 * even with their session); an owner creates a runtime API key on the settings page, sees it once, and
 * revokes it (the key then gets 401); the task list's empty state and its search by task id and sandbox id.
 */
import type { APIRequestContext } from "@playwright/test";
import type { TaskView } from "@/lib/contract/api";
import { expect, loginAs, makeEvent, makeRecord, newTaskId, rid, seedIncidentTask, test } from "./fixtures";

const RECONCILE_BODY = {
  outcome: "completed",
  external_operation_id: "op-from-the-page",
  evidence: "Seen in the records system.",
};

async function effectStatus(
  request: APIRequestContext,
  apiKey: string,
  taskId: string,
  name: string,
): Promise<string | undefined> {
  const res = await request.get(`/api/v1/tasks/${taskId}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status()).toBe(200);
  return ((await res.json()) as TaskView).side_effects[name]?.status;
}

test("a viewer sees the unknown write but cannot reconcile it, in the page or through the API", async ({
  page,
  browser,
  request,
  tenant,
  runtime,
}) => {
  const incident = await seedIncidentTask(runtime, newTaskId("roles"));
  const reconcileUrl = `/api/v1/tasks/${incident.taskId}/side-effects/${incident.effect}/reconcile`;

  await loginAs(page, tenant.users.viewer.email, tenant.password);
  await page.goto(`/tasks/${incident.taskId}`);
  const row = page.locator(`[data-testid=side-effect-row][data-name=${incident.effect}]`);
  await expect(row).toHaveAttribute("data-status", "unknown");
  await expect(row).toContainText("unknown");
  await expect(row).toContainText("A responder must reconcile");
  await expect(row.getByRole("button", { name: "Reconcile" })).toHaveCount(0);
  await expect(page.getByTestId("primary-action")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Reconcile/ })).toHaveCount(0);
  await expect(page.getByTestId("gate-panel").getByTestId("gate-verdict")).toHaveAttribute("data-verdict", "stop");

  // The viewer's own session, from the page: the server refuses, whatever the page shows.
  const asViewer = await page.evaluate(
    async ({ url, body }) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: { code?: string } } };
    },
    { url: reconcileUrl, body: RECONCILE_BODY },
  );
  expect(asViewer.status).toBe(403);
  expect(asViewer.body.error?.code).toBe("forbidden");

  // A runtime API key may not settle either: that is a person's decision.
  const asRuntime = await request.post(reconcileUrl, {
    headers: { authorization: `Bearer ${tenant.apiKey}` },
    data: RECONCILE_BODY,
  });
  expect(asRuntime.status()).toBe(403);
  expect(await effectStatus(request, tenant.apiKey, incident.taskId, incident.effect)).toBe("unknown");

  // The same call from a responder's page succeeds, so the 403 above is about the role, not the request.
  const baseURL = test.info().project.use.baseURL;
  const responderContext = await browser.newContext({ baseURL });
  try {
    const responderPage = await responderContext.newPage();
    await loginAs(responderPage, tenant.users.responder.email, tenant.password);
    const asResponder = await responderPage.evaluate(
      async ({ url, body }) => {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return res.status;
      },
      { url: reconcileUrl, body: RECONCILE_BODY },
    );
    expect(asResponder).toBe(200);
  } finally {
    await responderContext.close();
  }
  expect(await effectStatus(request, tenant.apiKey, incident.taskId, incident.effect)).toBe("completed");
});

test("an owner creates a runtime API key, sees it once, and revokes it; the key then gets 401", async ({
  page,
  request,
  tenant,
}) => {
  const keyName = `e2e runtime ${rid(3)}`;
  await loginAs(page, tenant.users.owner.email, tenant.password);
  await page.goto("/settings/api-keys");
  const section = page.locator("section#api-keys");
  await expect(section.getByRole("heading", { name: "Runtime API keys" })).toBeVisible();

  await section.getByLabel("Name", { exact: true }).fill(keyName);
  await section.getByRole("button", { name: "Create key" }).click();
  const shown = section.getByTestId("new-api-key");
  await expect(shown).toHaveText(/^rck_[A-Za-z0-9_-]{20,}$/);
  const key = (await shown.textContent())!.trim();
  await expect(section.getByRole("status")).toContainText(keyName);

  const row = section.getByRole("row").filter({ hasText: keyName });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("active");
  await expect(row).toContainText(`${key.slice(0, 8)}…${key.slice(-4)}`);

  const auth = { authorization: `Bearer ${key}` };
  expect((await request.get("/api/v1/tasks", { headers: auth })).status()).toBe(200);

  // Shown once: after a reload only the prefix remains.
  await page.reload();
  await expect(section.getByTestId("new-api-key")).toHaveCount(0);
  await expect(page.getByText(key)).toHaveCount(0);
  await expect(row).toContainText("active");

  // Dismissing the confirmation changes nothing.
  await row.getByRole("button", { name: "Revoke" }).click();
  const question = page.getByRole("dialog", { name: `Revoke the key “${keyName}”?` });
  await question.getByRole("button", { name: "Cancel" }).click();
  await expect(question).toBeHidden();
  await expect(row).toContainText("active");
  expect((await request.get("/api/v1/tasks", { headers: auth })).status()).toBe(200);

  // Accepting it revokes the key; the question names the key.
  await row.getByRole("button", { name: "Revoke" }).click();
  await question.getByRole("button", { name: `Revoke ${keyName}` }).click();
  await expect(row).toContainText("revoked");
  await expect(row.getByRole("button", { name: "Revoke" })).toHaveCount(0);

  const after = await request.get("/api/v1/tasks", { headers: auth });
  expect(after.status()).toBe(401);
  expect(((await after.json()) as { error?: { code?: string } }).error?.code).toBeTruthy();
  // The tenant's other key still works: only the revoked one is refused.
  expect((await request.get("/api/v1/tasks", { headers: { authorization: `Bearer ${tenant.apiKey}` } })).status()).toBe(
    200,
  );
});

test("the task list: a new tenant's empty state says how to connect a runtime; search by task id or sandbox id filters", async ({
  page,
  tenant,
  runtime,
}) => {
  await loginAs(page, tenant.users.responder.email, tenant.password);
  await expect(page).toHaveURL(/\/tasks$/);
  const empty = page.getByTestId("tasks-empty");
  await expect(empty).toBeVisible();
  await expect(empty).toContainText(/API key/i);
  await expect(empty).toContainText("POST /api/v1/events");
  await expect(empty.getByRole("link", { name: /Settings/ })).toHaveAttribute("href", "/settings/api-keys");
  await expect(page.getByTestId("task-row")).toHaveCount(0);

  const alpha = newTaskId("alpha");
  const beta = newTaskId("beta");
  for (const id of [alpha, beta]) {
    await runtime.putRecord(makeRecord(id));
    await runtime.postEvents([makeEvent(id, { plane: "session", type: "task.created" })]);
  }
  await page.reload();
  await expect(page.getByTestId("tasks-empty")).toHaveCount(0);
  await expect(page.getByTestId("task-row")).toHaveCount(2);

  await page.getByLabel("Search tasks").fill(alpha);
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL((u) => u.searchParams.get("q") === alpha);
  await expect(page.getByTestId("task-row")).toHaveCount(1);
  await expect(page.getByTestId("task-row")).toContainText(alpha);

  // A part of the id is enough.
  await page.getByLabel("Search tasks").fill(beta.slice(0, 10));
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL((u) => u.searchParams.get("q") === beta.slice(0, 10));
  await expect(page.getByTestId("task-row")).toHaveCount(1);
  await expect(page.getByTestId("task-row")).toContainText(beta);

  // An exact sandbox id finds the task whose events ran in it.
  const sandbox = `sbx-${rid(4)}`;
  await runtime.postEvents([
    makeEvent(alpha, { plane: "environment", type: "sandbox.created", environment_id: sandbox, attempt: 1 }),
  ]);
  await page.getByLabel("Search tasks").fill(sandbox);
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL((u) => u.searchParams.get("q") === sandbox);
  await expect(page.getByTestId("task-row")).toHaveCount(1);
  await expect(page.getByTestId("task-row")).toContainText(alpha);

  // No match: a filtered-empty message, not the "connect a runtime" state.
  await page.getByLabel("Search tasks").fill(`nothing-${rid(3)}`);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByTestId("task-row")).toHaveCount(0);
  await expect(page.getByText("No task matches these filters.")).toBeVisible();
  await expect(page.getByTestId("tasks-empty")).toHaveCount(0);
  await page.getByRole("link", { name: "Clear" }).click();
  await expect(page.getByTestId("task-row")).toHaveCount(2);
});
