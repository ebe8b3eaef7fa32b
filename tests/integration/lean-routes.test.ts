/**
 * The lean layer (scripts/serve.ts, lib/server/lean/serve.ts) against the pages' server: two production servers of
 * the same build on the same database and secrets, one answering the runtime's hot routes through the lean layer and
 * one (`CUSTODY_LEAN_ROUTES=off`) through Next's request pipeline. The same story and the same bad requests go to both;
 * every answer must match in status, error code, the headers a client acts on and the shape of its body, and the lean
 * server must have answered each authenticated hot route itself (`x-custody-layer: lean`), the other never.
 * The rest of the integration suite runs against the lean server (the default `npm start`).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";
import { api, createTestTenant, makeEvent, makeRecord, newTaskId, testDbForFile, type TestTenant } from "./helpers";
import { hex, intentBody, newKey, receiptBody } from "./support/custody-calls";
import { signInAs } from "./support/people";

const handle = testDbForFile();

let lean: NextServer;
let pages: NextServer;
let t: TestTenant;
let readOnlyKey: string;

/** What a client acts on in an answer: status, error code, the headers that matter and the body's top-level keys. */
type Seen = {
  status: number;
  code: string | null;
  allow: string | null;
  replayed: string | null;
  retryAfter: string | null;
  contentType: string | null;
  keys: string[];
  layer: string | null;
};

type Step = {
  name: string;
  method: string;
  /** The path, with `{task}` for the server's own task id (each server gets its own task). */
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** Which key to send: the runtime key (default), the read-only key, a made-up one, or none. */
  auth?: "runtime" | "read-only" | "wrong" | "none";
  /** Whether the lean server answers this one itself (an authenticated hot route with a well-formed path). */
  leanAnswers: boolean;
};

async function send(server: NextServer, taskId: string, step: Step): Promise<Seen> {
  const headers: Record<string, string> = { ...(step.headers ?? {}) };
  const auth = step.auth ?? "runtime";
  if (auth === "runtime") headers.authorization = `Bearer ${t.apiKey}`;
  if (auth === "read-only") headers.authorization = `Bearer ${readOnlyKey}`;
  if (auth === "wrong") headers.authorization = "Bearer rck_not_a_key_at_all";
  if (step.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${server.baseUrl}${step.path.replaceAll("{task}", encodeURIComponent(taskId))}`, {
    method: step.method,
    headers,
    body: step.body,
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  const obj = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  return {
    status: res.status,
    code: ((obj.error as { code?: string } | undefined)?.code ?? null) as string | null,
    allow: res.headers.get("allow"),
    replayed: res.headers.get("idempotent-replayed"),
    retryAfter: res.headers.get("retry-after"),
    contentType: res.headers.get("content-type")?.split(";")[0] ?? null,
    keys: Object.keys(obj).sort(),
    layer: res.headers.get("x-custody-layer"),
  };
}

/** The runtime's story on one task, then requests each layer must refuse the same way. */
function story(): Step[] {
  const key = newKey();
  return [
    {
      name: "task.created event",
      method: "POST",
      path: "/api/v1/events",
      body: "{EVENTS}",
      leanAnswers: true,
    },
    { name: "checkpoint", method: "PUT", path: "/api/v1/tasks/{task}", body: "{RECORD}", leanAnswers: true },
    { name: "stale checkpoint", method: "PUT", path: "/api/v1/tasks/{task}", body: "{RECORD}", leanAnswers: true },
    { name: "read the task", method: "GET", path: "/api/v1/tasks/{task}", leanAnswers: true },
    { name: "checkpoint history", method: "GET", path: "/api/v1/tasks/{task}/checkpoints", leanAnswers: true },
    {
      name: "intent go",
      method: "POST",
      path: "/api/v1/tasks/{task}/side-effects/update_record/intent",
      body: JSON.stringify(intentBody(key)),
      leanAnswers: true,
    },
    {
      name: "intent while in flight",
      method: "POST",
      path: "/api/v1/tasks/{task}/side-effects/update_record/intent",
      body: JSON.stringify(intentBody(key)),
      leanAnswers: true,
    },
    {
      name: "intent under the same key with another digest",
      method: "POST",
      path: "/api/v1/tasks/{task}/side-effects/update_record/intent",
      body: JSON.stringify(intentBody(key, { payload_digest: hex("f") })),
      leanAnswers: true,
    },
    {
      name: "receipt",
      method: "POST",
      path: "/api/v1/tasks/{task}/side-effects/update_record/receipt",
      body: JSON.stringify(receiptBody(key)),
      leanAnswers: true,
    },
    {
      name: "intent replayed",
      method: "POST",
      path: "/api/v1/tasks/{task}/side-effects/update_record/intent",
      body: JSON.stringify(intentBody(key)),
      leanAnswers: true,
    },
    { name: "resume gate", method: "POST", path: "/api/v1/tasks/{task}/resume", body: "{}", leanAnswers: true },
    {
      name: "trace ingest (OpenAI Agents SDK) at the root alias",
      method: "POST",
      path: "/v1/traces/ingest",
      body: JSON.stringify({ data: [] }),
      leanAnswers: true,
    },
    {
      name: "OTLP JSON at the root alias",
      method: "POST",
      path: "/v1/traces",
      body: JSON.stringify({ resourceSpans: [] }),
      leanAnswers: true,
    },
    // Refusals.
    { name: "malformed JSON", method: "POST", path: "/api/v1/events", body: "{", leanAnswers: true },
    {
      name: "a body over 1 MiB",
      method: "POST",
      path: "/api/v1/events",
      body: JSON.stringify({ events: [{ pad: "x".repeat(1024 * 1024 + 10) }] }),
      leanAnswers: true,
    },
    {
      name: "a body nested too deep",
      method: "POST",
      path: "/api/v1/tasks/{task}/resume",
      body: "[".repeat(5000) + "]".repeat(5000),
      leanAnswers: true,
    },
    {
      name: "not JSON",
      method: "POST",
      path: "/api/v1/tasks/{task}/resume",
      body: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      leanAnswers: true,
    },
    { name: "NUL in the task id", method: "GET", path: "/api/v1/tasks/a%00b", leanAnswers: true },
    { name: "NUL in the query", method: "GET", path: "/api/v1/tasks/{task}/checkpoints?cursor=%00", leanAnswers: true },
    {
      name: "a malformed %-escape",
      method: "POST",
      path: "/api/v1/tasks/%E0%A4%A/resume",
      body: "{}",
      leanAnswers: false,
    },
    { name: "another method", method: "GET", path: "/api/v1/events", leanAnswers: true },
    { name: "an unknown task", method: "GET", path: "/api/v1/tasks/no-such-task-here", leanAnswers: true },
    {
      name: "no key",
      method: "POST",
      path: "/api/v1/tasks/{task}/resume",
      body: "{}",
      auth: "none",
      leanAnswers: false,
    },
    { name: "a wrong key", method: "POST", path: "/api/v1/events", body: "{EVENTS}", auth: "wrong", leanAnswers: true },
    {
      name: "a read-only key writing",
      method: "POST",
      path: "/api/v1/events",
      body: "{EVENTS}",
      auth: "read-only",
      leanAnswers: true,
    },
    {
      name: "a read-only key reading",
      method: "GET",
      path: "/api/v1/tasks/{task}",
      auth: "read-only",
      leanAnswers: true,
    },
  ];
}

function fill(step: Step, taskId: string): Step {
  if (step.body === "{EVENTS}") {
    return {
      ...step,
      body: JSON.stringify({
        events: [makeEvent(taskId, { type: "task.created", attrs: { workflow: "lean-parity" } })],
      }),
    };
  }
  if (step.body === "{RECORD}") return { ...step, body: JSON.stringify({ ...makeRecord(taskId), base_version: 0 }) };
  return step;
}

beforeAll(async () => {
  const full = await createTestTenant(handle.db);
  t = full;
  const owner = await signInAs(full, "owner");
  const made = await api(owner).post<{ key: string }>("/api/v1/settings/api-keys", {
    name: "read-only key",
    scope: "read_only",
  });
  expect(made.status, made.text).toBe(200);
  readOnlyKey = made.body.key;
  const secrets = testServerSecrets();
  const start = async (name: string, extra: Record<string, string>) => {
    const port = await freePort();
    const server = new NextServer({
      root: process.cwd(),
      port,
      env: { ...serverEnv({ port, databaseUrl: process.env.TEST_DATABASE_URL ?? "", ...secrets }), ...extra },
      logFile: path.join(process.cwd(), "test-results", `lean-routes-${name}.log`),
      healthTimeoutMs: 150_000,
    });
    await server.start();
    return server;
  };
  // "on" explicitly: the suite's second pass runs with the layer off in its environment (scripts/verify.sh).
  [lean, pages] = await Promise.all([
    start("lean", { CUSTODY_LEAN_ROUTES: "on" }),
    start("pages", { CUSTODY_LEAN_ROUTES: "off" }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([lean?.stop(), pages?.stop()]);
});

describe("the lean layer answers the runtime's hot routes exactly as the pages' server does", () => {
  it("gives the same answers to the same story and the same bad requests", async () => {
    // Each server plays the story on its own task under its own idempotency key (a key binds one task).
    const [leanSteps, pagesSteps] = [story(), story()];
    const leanTask = newTaskId("lean");
    const pagesTask = newTaskId("pages");
    for (const [i, step] of leanSteps.entries()) {
      const [a, b] = [
        await send(lean, leanTask, fill(step, leanTask)),
        await send(pages, pagesTask, fill(pagesSteps[i]!, pagesTask)),
      ];
      expect({ ...a, layer: null }, step.name).toEqual({ ...b, layer: null });
      expect(a.layer, `${step.name}: answered by the lean layer`).toBe(step.leanAnswers ? "lean" : null);
      expect(b.layer, `${step.name}: the pages' server has no lean layer`).toBeNull();
    }
  }, 120_000);

  it("keeps a connection usable after a refusal that did not read the body", async () => {
    const big = JSON.stringify({ events: [{ pad: "y".repeat(2 * 1024 * 1024) }] });
    const first = await fetch(`${lean.baseUrl}/api/v1/events`, {
      method: "POST",
      headers: { authorization: "Bearer rck_wrong", "content-type": "application/json" },
      body: big,
    });
    expect(first.status).toBe(401);
    await first.text();
    const next = await fetch(`${lean.baseUrl}/api/v1/tasks/${encodeURIComponent(newTaskId())}`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(next.status).toBe(404);
  });
});
