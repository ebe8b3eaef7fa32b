/**
 * Playwright fixtures shared by the end-to-end specs:
 * - `db` (per worker): a handle on the test database, for seeding;
 * - `tenant` (per test): a fresh tenant with one user per role and a runtime API key (random ids);
 * - `runtime` (per test): the tenant's runtime API over HTTP (events, task records), as an agent runtime uses it;
 * - `loginAs(page, email, password)`: signs in through the /login form, like a person;
 * - `seedIncidentTask(runtime, taskId)`: a checkpointed task with events on all four planes, two sandboxes, an
 *   interruption between them and an `update_record` write whose outcome is `unknown`.
 * Specs seed what they need through these and never share data.
 */
import { test as base, expect, type APIRequestContext, type Page } from "@playwright/test";
import { openDatabase } from "@/db";
import type { CheckpointResult, EventInput, EventResult, TaskRecord } from "@/lib/contract/api";
import { testDatabaseUrl } from "../tests/support/env";
import { makeRecord, rid } from "../tests/support/factories";
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
      expect(
        results.filter((r) => r.status !== "stored"),
        "every event stored",
      ).toEqual([]);
      return results;
    },
  };
}

/** Signs in through the /login form and waits to land on `expectPath` (default /tasks). */
export async function loginAs(
  page: Page,
  email: string,
  password: string,
  expectPath: RegExp = /\/tasks/,
): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(expectPath);
}

/** What {@link seedIncidentTask} created. */
export type IncidentTask = {
  taskId: string;
  /** The side effect left `unknown`. */
  effect: "update_record";
  idempotencyKey: string;
  /** Environment ids of the two sandboxes (attempt 1, attempt 2). */
  sandboxes: [string, string];
  /** Id of the `run.interrupted` event. */
  interruptionId: string;
};

/**
 * Seeds, through the runtime API, the shape of the reference scenario without running it: checkpoint v1, then
 * events on all four planes — sandbox attempt 1, a credential, a tool call, the `update_record` intent and its
 * egress, the run interrupted before any receipt, sandbox attempt 2 with a fresh credential. The server then
 * shows `update_record` as `unknown` and the gate says `stop` (side_effect_unknown). Times end a few seconds
 * before now.
 */
export async function seedIncidentTask(runtime: RuntimeApi, taskId: string): Promise<IncidentTask> {
  const key = `idem:${taskId}:update_record:1`;
  const sbx1 = `sbx-${rid(4)}-1`;
  const sbx2 = `sbx-${rid(4)}-2`;
  const t0 = Date.now() - 60_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  let seq = 0;
  const ev = (plane: EventInput["plane"], type: string, s: number, extra: Partial<EventInput> = {}): EventInput => ({
    id: `${taskId}:seed:${++seq}`,
    task_id: taskId,
    plane,
    type,
    occurred_at: at(s),
    ...extra,
  });
  await runtime.putRecord(
    makeRecord(taskId, { phase: "record_updated", policy_version: "policy-v1", side_effects: {} }),
  );
  const interrupted = ev("session", "run.interrupted", 30, {
    environment_id: sbx1,
    attempt: 1,
    attrs: { reason: "sandbox_lost" },
  });
  await runtime.postEvents([
    ev("session", "task.created", 0, { attrs: { principal: "tenant/acme:user/42" } }),
    ev("environment", "sandbox.created", 1, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { image: "demo/doc-agent:1.0" },
    }),
    ev("vault", "credential.issued", 2, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { credential_ref: "records-api", audience: "records.local" },
    }),
    ev("tools", "tool.called", 5, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { tool: "update_record", call_id: "c1" },
    }),
    ev("tools", "side_effect.intent", 6, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { name: "update_record", idempotency_key: key, action: "records.update", tool: "update_record" },
    }),
    ev("vault", "credential.used", 7, { environment_id: sbx1, attempt: 1, attrs: { credential_ref: "records-api" } }),
    ev("tools", "egress.allowed", 8, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { host: "records.local", method: "PUT" },
    }),
    interrupted,
    ev("environment", "sandbox.destroyed", 31, {
      environment_id: sbx1,
      attempt: 1,
      attrs: { reason: "lost", environment_id: sbx1, attempt: 1 },
    }),
    ev("environment", "sandbox.created", 40, {
      environment_id: sbx2,
      attempt: 2,
      attrs: { image: "demo/doc-agent:1.0" },
    }),
    ev("vault", "credential.issued", 41, {
      environment_id: sbx2,
      attempt: 2,
      attrs: { credential_ref: "records-api", audience: "records.local" },
    }),
  ]);
  return {
    taskId,
    effect: "update_record",
    idempotencyKey: key,
    sandboxes: [sbx1, sbx2],
    interruptionId: interrupted.id,
  };
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
