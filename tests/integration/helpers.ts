/**
 * Helpers for integration tests: a fresh tenant per test, a small HTTP client for the started server,
 * sign-in through the real next-auth HTTP flow, and a direct database handle for assertions.
 * Every test makes its own tenant with random ids; nothing here is shared mutable state.
 */
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import { openDatabase, queryRows, type Db } from "@/db";
import type { EventResult } from "@/lib/contract/api";

export { makeEvent, makeRecord, newTaskId, rid } from "../support/factories";
export { createTestTenant, type FullTestTenant, type TestTenant } from "../support/tenants";

/** Base URL of the server started by global-setup.ts. */
export function baseUrl(): string {
  return inject("baseUrl");
}

type DbHandle = Awaited<ReturnType<typeof openDatabase>>;

/** Opens a direct handle on the test database (migrations already applied). Close it in afterAll. */
export async function openTestDb(): Promise<DbHandle> {
  return openDatabase({ url: inject("databaseUrl"), max: 3 });
}

/**
 * Opens a direct handle on the test database before the file's tests and closes it after them.
 * @returns an object whose `db` is the handle's database (read it inside tests and hooks, not at import).
 */
export function testDbForFile(): { readonly db: Db } {
  let handle: DbHandle | undefined;
  beforeAll(async () => {
    handle = await openTestDb();
  });
  afterAll(async () => {
    await handle?.close();
  });
  return {
    get db(): Db {
      if (!handle) throw new Error("the test database is open only inside tests and hooks");
      return handle.db;
    },
  };
}

/** Stoppers (servers, children) registered by a test, all run after it whatever happened, last first. */
export function cleanupsAfterEachTest(): Array<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
  });
  return cleanups;
}

export type ApiResponse<T = unknown> = { status: number; body: T; headers: Headers; text: string };

/** Credentials for {@link api}: a runtime API key, a session cookie header, or nothing. */
export type Auth = string | { cookie: string } | undefined;

function authHeaders(auth: Auth): Record<string, string> {
  if (typeof auth === "string") return { authorization: `Bearer ${auth}` };
  if (auth) return { cookie: auth.cookie };
  return {};
}

/**
 * A small fetch client for the started server (or the server at `base`, e.g. one a test started itself).
 * `body` parses JSON when the answer is JSON, else it is the text.
 */
export function api(auth?: Auth, base?: string) {
  const request = async <T = unknown>(
    method: string,
    path: string,
    init: { json?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...authHeaders(auth), ...(init.headers ?? {}) };
    let body: string | undefined;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers["content-type"] ??= "application/json";
    } else if (init.raw !== undefined) {
      body = init.raw;
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${base ?? baseUrl()}${path}`, { method, headers, body, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("application/json") && text) {
      parsed = JSON.parse(text);
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  };
  return {
    request,
    get: <T = unknown>(path: string) => request<T>("GET", path),
    post: <T = unknown>(path: string, json: unknown) => request<T>("POST", path, { json }),
    put: <T = unknown>(path: string, json: unknown) => request<T>("PUT", path, { json }),
    patch: <T = unknown>(path: string, json: unknown) => request<T>("PATCH", path, { json }),
    delete: <T = unknown>(path: string) => request<T>("DELETE", path),
  };
}

/** Posts a batch of events with a runtime key; returns the response. */
export function postEvents(apiKey: string, events: unknown[]): Promise<ApiResponse<{ results: EventResult[] }>> {
  return api(apiKey).post<{ results: EventResult[] }>("/api/v1/events", { events });
}

/** Counts rows of a table for a tenant (optionally one task). */
export async function countRows(
  db: Db,
  table: "events" | "tasks" | "task_checkpoints" | "side_effects" | "artifacts" | "audit_log",
  tenantId: string,
  taskId?: string,
): Promise<number> {
  const rows = await queryRows<{ n: string | number }>(
    db,
    taskId === undefined
      ? sql`select count(*) as n from ${sql.identifier(table)} where tenant_id = ${tenantId}`
      : sql`select count(*) as n from ${sql.identifier(table)} where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  return Number(rows[0]!.n);
}

/** Cookies from a response's Set-Cookie headers as `name → value` (expired ones removed). */
function cookiesFrom(res: Response, jar: Map<string, string>): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    if (!value || /max-age=0/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
}

function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

export type SignInAttempt = { cookie: string | null; url: string | null; status: number };

/**
 * Options of {@link trySignIn}: the client address to claim (`x-forwarded-for`), the workspace (tenant id) to start in,
 * the server to sign in at (default the suite's server).
 */
export type SignInOptions = { source?: string; workspace?: string; base?: string };

/**
 * Signs in through next-auth's HTTP flow: `GET /api/auth/csrf`, then a form-encoded
 * `POST /api/auth/callback/credentials` (csrfToken, email, password, json=true).
 * @returns the cookie header carrying the session token, or `cookie: null` when sign-in was refused
 *   (`url` then holds next-auth's error redirect).
 */
export async function trySignIn(email: string, password: string, opts: SignInOptions = {}): Promise<SignInAttempt> {
  const base = opts.base ?? baseUrl();
  const jar = new Map<string, string>();
  const source: Record<string, string> = opts.source ? { "x-forwarded-for": opts.source } : {};
  const csrfRes = await fetch(`${base}/api/auth/csrf`, { redirect: "manual", headers: source });
  cookiesFrom(csrfRes, jar);
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const form: Record<string, string> = { csrfToken, email, password, json: "true", callbackUrl: `${base}/tasks` };
  if (opts.workspace) form.workspace = opts.workspace;
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader(jar), ...source },
    body: new URLSearchParams(form).toString(),
  });
  cookiesFrom(res, jar);
  const text = await res.text();
  let url: string | null = null;
  try {
    url = (JSON.parse(text) as { url?: string }).url ?? null;
  } catch {
    url = res.headers.get("location");
  }
  const hasSession = [...jar.keys()].some((k) => k.endsWith("next-auth.session-token"));
  return { cookie: hasSession ? cookieHeader(jar) : null, url, status: res.status };
}

/** Signs in and returns the cookie header of the session. @throws Error when sign-in is refused. */
export async function signIn(email: string, password: string, opts: SignInOptions = {}): Promise<string> {
  const attempt = await trySignIn(email, password, opts);
  if (!attempt.cookie)
    throw new Error(`sign-in of ${email} was refused (status ${attempt.status}, url ${attempt.url})`);
  return attempt.cookie;
}

/**
 * Signs out through next-auth's HTTP flow (`GET /api/auth/csrf` with the session cookie, then a form-encoded
 * `POST /api/auth/signout`), as the Sign out button does. The caller keeps its copy of the old cookie, so a test
 * can show that the cookie no longer works. `base`: the server to sign out on (default the started one).
 * @returns the status of the sign-out request.
 */
export async function signOut(cookie: string, base = baseUrl()): Promise<number> {
  const csrfRes = await fetch(`${base}/api/auth/csrf`, { redirect: "manual", headers: { cookie } });
  const jar = new Map(
    cookie.split("; ").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as [string, string]),
  );
  cookiesFrom(csrfRes, jar);
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader(jar) },
    body: new URLSearchParams({ csrfToken, json: "true", callbackUrl: `${base}/login` }).toString(),
  });
  await res.text();
  return res.status;
}
