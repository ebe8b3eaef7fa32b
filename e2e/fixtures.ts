/**
 * Playwright fixtures shared by the end-to-end specs:
 * - `db` (per worker): a handle on the test database, for seeding;
 * - `tenant` (per test): a fresh tenant with one user per role and a runtime API key (random ids);
 * - `runtime` (per test): the tenant's runtime API over HTTP (events, task records), as an agent runtime uses it;
 * - `loginAs(page, email, password)`: signs in through the /login form, like a person.
 * Specs seed what they need through these and never share data.
 */
import { test as base, expect, type APIRequestContext, type Page } from "@playwright/test";
import { openDatabase } from "@/db";
import type { CheckpointResult, EventInput, EventResult, TaskRecord } from "@/lib/client/types";
import { testDatabaseUrl } from "../tests/support/env";
import { createTestTenant, type FullTestTenant } from "../tests/support/tenants";

export { expect };
export { makeEvent, makeRecord, newTaskId, rid } from "../tests/support/factories";

type DbHandle = Awaited<ReturnType<typeof openDatabase>>;

/** The runtime API of one tenant, called with its API key. */
export type RuntimeApi = {
  /** `PUT /api/v1/tasks/{id}`; fails the test unless the answer is 200. */
  putRecord(record: TaskRecord): Promise<CheckpointResult>;
  /** `POST /api/v1/events`; fails the test unless the answer is 200 and every event was stored. */
  postEvents(events: EventInput[]): Promise<EventResult[]>;
};

/** Builds a {@link RuntimeApi} on Playwright's request context (uses the config's baseURL). */
export function runtimeApi(request: APIRequestContext, apiKey: string): RuntimeApi {
  const headers = { authorization: `Bearer ${apiKey}` };
  return {
    async putRecord(record) {
      const res = await request.put(`/api/v1/tasks/${encodeURIComponent(record.task_id)}`, { headers, data: record });
      expect(res.status(), await res.text()).toBe(200);
      return (await res.json()) as CheckpointResult;
    },
    async postEvents(events) {
      const res = await request.post("/api/v1/events", { headers, data: { events } });
      expect(res.status(), await res.text()).toBe(200);
      const { results } = (await res.json()) as { results: EventResult[] };
      expect(results.filter((r) => r.status !== "stored"), "every event stored").toEqual([]);
      return results;
    },
  };
}

/** Signs in through the /login form and waits to land on `expectPath` (default /tasks). */
export async function loginAs(page: Page, email: string, password: string, expectPath: RegExp = /\/tasks/): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(expectPath);
}

/** Playwright's `test` with the `db` (worker), `tenant` and `runtime` (per test) fixtures. */
export const test = base.extend<{ tenant: FullTestTenant; runtime: RuntimeApi }, { db: DbHandle }>({
  db: [
    async ({}, provide) => {
      const handle = await openDatabase({ url: testDatabaseUrl(), max: 2 });
      await provide(handle);
      await handle.close();
    },
    { scope: "worker" },
  ],
  tenant: async ({ db }, provide) => {
    await provide(await createTestTenant(db.db));
  },
  runtime: async ({ request, tenant }, provide) => {
    await provide(runtimeApi(request, tenant.apiKey));
  },
});
