/**
 * Helpers for the side-effect custody suites (intents, receipts, reconcile, lookups, the resume gate and the
 * failure catalogue): typed calls of the custody routes, direct reads of the stored rows for assertions,
 * people signed in by role, and small local HTTP servers (the records service, a lookup that never answers,
 * a lookup with a fixed answer). Everything is per test: no shared mutable state.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import type {
  ApiErrorBody,
  CheckpointResult,
  GateVerdict,
  IntentResult,
  Receipt,
  TaskRecord,
  TaskView,
} from "@/lib/contract/api";
import type { AuditAction } from "@/lib/domain/audit/actions";
import { ensureMembership, ensureUser } from "@/lib/domain/tenancy/people";
import { startRecordsService, type RecordsService } from "@/scripts/records-service";
import {
  api,
  makeEvent,
  makeRecord,
  newTaskId,
  postEvents,
  rid,
  signIn,
  type ApiResponse,
  type Auth,
  type TestTenant,
} from "./helpers";

/** A lower-case hex sha256-looking value made of one repeated character (for digests that only need to differ). */
export const hex = (c: string): string => c.repeat(64);

/** A fresh idempotency key that passes the server's format (8–200 of `[A-Za-z0-9._:-]`). */
export function newKey(prefix = "idem"): string {
  return `${prefix}:${rid()}`;
}

/** Body of an intent; any field can be overridden. */
export function intentBody(key: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    idempotency_key: key,
    payload_digest: hex("e"),
    action: "records.update",
    mutation: true,
    attempt: 1,
    ...over,
  };
}

/**
 * The default `completed_at` of {@link receiptBody}: a whole minute six hours ahead of when the tests started, so it
 * is after every intent a test registers (a receipt dated before its intent is flagged) and within the plausible range.
 */
export const RECEIPT_AT = new Date(Math.ceil((Date.now() + 6 * 3_600_000) / 60_000) * 60_000).toISOString();

/** `iso` written with a UTC offset of `hours` (the same instant), e.g. `…T11:05:00+02:00`. */
export function withOffset(iso: string, hours: number): string {
  const local = new Date(Date.parse(iso) + hours * 3_600_000).toISOString().slice(0, 19);
  const sign = hours < 0 ? "-" : "+";
  return `${local}${sign}${String(Math.abs(hours)).padStart(2, "0")}:00`;
}

/** Body of a receipt; any field can be overridden. */
export function receiptBody(key: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    idempotency_key: key,
    external_operation_id: "op-771",
    result_digest: hex("f"),
    completed_at: RECEIPT_AT,
    attempt: 1,
    ...over,
  };
}

const effectPath = (taskId: string, name: string, verb: string) =>
  `/api/v1/tasks/${encodeURIComponent(taskId)}/side-effects/${encodeURIComponent(name)}/${verb}`;

/** `POST …/intent`. */
export function postIntent(
  auth: Auth,
  taskId: string,
  name: string,
  body: unknown,
): Promise<ApiResponse<IntentResult>> {
  return api(auth).post<IntentResult>(effectPath(taskId, name, "intent"), body);
}

/** `POST …/receipt`. */
export function postReceipt(
  auth: Auth,
  taskId: string,
  name: string,
  body: unknown,
): Promise<ApiResponse<{ status: string; receipt: Receipt; replayed: boolean }>> {
  return api(auth).post(effectPath(taskId, name, "receipt"), body);
}

export type ReconcileAnswer = {
  name: string;
  status: string;
  reconcile: {
    outcome: string;
    evidence: string;
    external_operation_id: string | null;
    lookup?: LookupAnswerBody;
    by: string;
    at: string;
  };
  audit_seq: number;
};

/** `POST …/reconcile`. */
export function postReconcile(
  auth: Auth,
  taskId: string,
  name: string,
  body: unknown,
): Promise<ApiResponse<ReconcileAnswer>> {
  return api(auth).post<ReconcileAnswer>(effectPath(taskId, name, "reconcile"), body);
}

export type LookupAnswerBody = {
  configured: boolean;
  outcome?: "found" | "not_found" | "ambiguous" | "timeout" | "error";
  external_operation_id?: string | null;
  result_digest?: string | null;
  completed_at?: string | null;
  http_status?: number | null;
  answer?: unknown;
  message: string;
};

/** `POST …/lookup`. */
export function postLookup(auth: Auth, taskId: string, name: string): Promise<ApiResponse<LookupAnswerBody>> {
  return api(auth).post<LookupAnswerBody>(effectPath(taskId, name, "lookup"), {});
}

/** `POST /api/v1/tasks/{id}/resume`. */
export function askGate(auth: Auth, taskId: string, body: unknown = {}): Promise<ApiResponse<GateVerdict>> {
  return api(auth).post<GateVerdict>(`/api/v1/tasks/${encodeURIComponent(taskId)}/resume`, body);
}

/** `GET /api/v1/tasks/{id}`; fails the caller's expectations by returning the raw response. */
export function getTask(auth: Auth, taskId: string): Promise<ApiResponse<TaskView>> {
  return api(auth).get<TaskView>(`/api/v1/tasks/${encodeURIComponent(taskId)}`);
}

/**
 * Checkpoints a record (`PUT /api/v1/tasks/{id}`) with the tenant's runtime key.
 * @throws Error when the server does not answer 200.
 */
export async function checkpoint(
  t: TestTenant,
  taskId: string,
  over: Partial<TaskRecord> = {},
): Promise<CheckpointResult> {
  const res = await api(t.apiKey).put<CheckpointResult>(
    `/api/v1/tasks/${encodeURIComponent(taskId)}`,
    makeRecord(taskId, over),
  );
  if (res.status !== 200) throw new Error(`checkpoint of ${taskId} answered ${res.status}: ${res.text}`);
  return res.body;
}

/**
 * Creates a task by reporting one `task.created` event (no checkpoint).
 * @throws Error when the event is not stored.
 */
export async function createTaskByEvent(t: TestTenant, taskId: string): Promise<void> {
  const res = await postEvents(t.apiKey, [
    makeEvent(taskId, { type: "task.created", attrs: { principal: "tenant/acme:user/42" } }),
  ]);
  if (res.status !== 200 || res.body.results[0]?.status !== "stored") {
    throw new Error(`task.created for ${taskId} answered ${res.status}: ${res.text}`);
  }
}

/**
 * Reports events and requires every one to be stored.
 * @throws Error naming the first event that was not stored.
 */
export async function sendEvents(t: TestTenant, events: Parameters<typeof postEvents>[1]): Promise<void> {
  const res = await postEvents(t.apiKey, events);
  if (res.status !== 200) throw new Error(`events answered ${res.status}: ${res.text}`);
  const bad = res.body.results.find((r) => r.status !== "stored");
  if (bad) throw new Error(`event ${bad.id} was ${bad.status}: ${JSON.stringify(bad.error)}`);
}

/** The cookie auth of the tenant's user with `role`, signed in through next-auth. */
export async function signInAs(t: TestTenant, role: Role): Promise<{ cookie: string }> {
  const user = t.users[role];
  if (!user) throw new Error(`tenant ${t.slug} has no ${role}`);
  return { cookie: await signIn(user.email, t.password) };
}

export type EffectRow = {
  name: string;
  idempotency_key: string;
  status: string;
  payload_digest: string | null;
  receipt: Receipt | null;
  last_reconcile: Record<string, unknown> | null;
  lease_expires_at: string | null;
  intent_at: string | null;
  status_reason: string | null;
  retry_status: string | null;
  updated_at: string;
};

/**
 * A checkpointed task whose effect went in flight (intent → go) and whose run was then interrupted: the effect is
 * `unknown`, ready to reconcile.
 * @param opts `name` of the effect (default update_record), its `tool` (default the name), and the status it was
 *   `declared` with before the intent (`not_started` or `approved`).
 */
export async function unknownEffect(
  db: Db,
  t: TestTenant,
  opts: { name?: string; tool?: string; declared?: "not_started" | "approved" } = {},
): Promise<{ taskId: string; key: string; name: string }> {
  const taskId = newTaskId();
  const key = newKey();
  const name = opts.name ?? "update_record";
  const tool = opts.tool ?? name;
  await checkpoint(t, taskId, {
    side_effects: { [name]: { idempotency_key: key, status: opts.declared ?? "not_started", tool } },
  });
  if (opts.declared === "approved") await approveDirectly(db, t.tenantId, taskId, name);
  const go = await postIntent(t.apiKey, taskId, name, intentBody(key, { tool }));
  expect(go.status, go.text).toBe(200);
  expect(go.body.decision).toBe("go");
  await sendEvents(t, [
    makeEvent(taskId, {
      type: "run.interrupted",
      occurred_at: new Date(Date.now() + 1000).toISOString(),
      attrs: { reason: "sandbox_lost" },
    }),
  ]);
  expect((await effectRow(db, t.tenantId, taskId, name))?.status).toBe("unknown");
  return { taskId, key, name };
}

/**
 * Moves a declared effect from `awaiting_approval` to `approved` directly in the database. A checkpoint cannot approve
 * an effect (only an approver's recorded decision does); this stands in for that decision in tests of what follows it.
 */
export async function approveDirectly(
  db: Db,
  tenantId: string,
  taskId: string,
  name: string,
  bind: { payloadDigest?: string; action?: string } = {},
): Promise<void> {
  const rows = await queryRows(
    db,
    sql`update side_effects set status = 'approved' where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}
          and status = 'awaiting_approval' returning name`,
  );
  if (!rows.length) throw new Error(`${name} of ${taskId} was not awaiting approval`);
  // The checkpoint's declaration made an approval request (issue 8): record the decision on it, bound to the digest and
  // action the test's intent sends (intentBody's by default; no approver id: the approver's role is then not checked).
  await db.execute(sql`
    update approval_requests
    set payload_digest = coalesce(payload_digest, ${bind.payloadDigest ?? hex("e")}), action = ${bind.action ?? "records.update"},
        decision = 'approve', decided_by = 'approver (test)',
        decided_at = now(), expires_at = now() + interval '1 day'
    where tenant_id = ${tenantId} and task_id = ${taskId} and side_effect = ${name} and superseded_by is null and decision is null`);
}

/** One side-effect row as stored (direct SQL, bypassing the API). */
export async function effectRow(
  db: Db,
  tenantId: string,
  taskId: string,
  name: string,
): Promise<EffectRow | undefined> {
  const rows = await queryRows<EffectRow>(
    db,
    sql`select name, idempotency_key, status::text as status, payload_digest, receipt, last_reconcile,
               lease_expires_at::text as lease_expires_at, intent_at::text as intent_at, status_reason,
               retry_status::text as retry_status, updated_at::text as updated_at
        from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  return rows[0];
}

export type AuditRow = {
  seq: number;
  action: string;
  target: string;
  actor_kind: string;
  actor_label: string;
  details: Record<string, unknown>;
};

/** The tenant's audit rows (optionally one action), oldest first. */
export async function auditRows(db: Db, tenantId: string, action?: AuditAction): Promise<AuditRow[]> {
  const rows = await queryRows<AuditRow & { seq: string | number }>(
    db,
    sql`select seq, action, target, actor_kind::text as actor_kind, actor_label, details from audit_log
        where tenant_id = ${tenantId} ${action ? sql`and action = ${action}` : sql``} order by seq`,
  );
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/**
 * Everything the custody routes may write for one tenant and task, as one comparable value: the side-effect rows,
 * the audit log size, and the event and checkpoint counts. Two equal snapshots mean nothing was written.
 */
export async function custodySnapshot(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{ effects: unknown; counts: Record<string, string> }> {
  const effects = await queryRows(
    db,
    sql`select name, idempotency_key, status::text as status, payload_digest, receipt, last_reconcile,
               lease_expires_at::text as lease, intent_at::text as intent_at, status_reason, updated_at::text as updated_at
        from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} order by name`,
  );
  const [counts] = await queryRows<{ audit: string; events: string; checkpoints: string; lookups: string }>(
    db,
    // Refused intents and receipts are audited and a refused receipt is kept as evidence, but neither changes the
    // custody state: see refusals() for those.
    sql`select (select count(*) from audit_log where tenant_id = ${tenantId} and not details ? 'refused') as audit,
               (select count(*) from events where tenant_id = ${tenantId} and task_id = ${taskId}) as events,
               (select count(*) from task_checkpoints where tenant_id = ${tenantId} and task_id = ${taskId}) as checkpoints,
               (select count(*) from tool_lookups where tenant_id = ${tenantId}) as lookups`,
  );
  return { effects, counts: counts ?? {} };
}

/**
 * What refusals left behind for a tenant's task: the audit rows of refused intents and receipts (`refused` = their
 * codes, oldest first) and the receipts kept as evidence (`kept` = their reasons).
 */
export async function refusals(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{ refused: string[]; kept: string[] }> {
  const audit = await queryRows<{ code: string }>(
    db,
    sql`select details ->> 'refused' as code from audit_log
        where tenant_id = ${tenantId} and details ? 'refused' and target like ${`side_effect:${taskId}/%`} order by seq`,
  );
  const kept = await queryRows<{ reason: string }>(
    db,
    sql`select reason from unapplied_receipts where tenant_id = ${tenantId} and task_id = ${taskId} order by received_at, id`,
  );
  return { refused: audit.map((r) => r.code), kept: kept.map((r) => r.reason) };
}

/** The `error` object of an error response (`{error: {code, message, details?}}`); an empty one when absent. */
export function errorOf(res: { body: unknown }): { code?: string; message: string; details?: unknown } {
  return (
    (res.body as { error?: { code?: string; message: string; details?: unknown } } | null)?.error ?? { message: "" }
  );
}

/** Code of the error body of a response, or undefined when the body has no error. */
export function errorCode(res: ApiResponse): string | undefined {
  return (res.body as { error?: { code?: string } } | null)?.error?.code;
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` until it returns a value that is not undefined, or throws after `timeoutMs` with `what`.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A records service in this process with its state in a fresh temporary directory; `close()` removes both. */
export async function startTempRecords(): Promise<RecordsService & { dir: string; stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-records-"));
  const service = await startRecordsService({ port: 0, stateFile: path.join(dir, "records.json") });
  return {
    ...service,
    dir,
    stop: async () => {
      await service.close().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type LocalServer = { url: string; requests: string[]; close: () => Promise<void> };

/**
 * A local HTTP server whose every answer is decided by `respond` (which may never answer: then the request is
 * held until the server closes). Records each request's URL.
 */
export async function localServer(
  respond: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<LocalServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    respond(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Registers a lookup endpoint for `tool` as the tenant's owner (`PUT /api/v1/settings/lookups/{tool}`). */
export async function registerLookup(owner: Auth, tool: string, url: string, timeoutMs?: number): Promise<ApiResponse> {
  return api(owner).put(`/api/v1/settings/lookups/${encodeURIComponent(tool)}`, {
    url,
    ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}),
  });
}

/**
 * Adds one more person with `role` to a test tenant (same password as the tenant's other users), e.g. a second
 * responder. @returns the new user's email.
 */
export async function addPerson(db: Db, t: TestTenant, role: Role): Promise<string> {
  const email = `${role}-extra-${rid()}@${t.slug}.test`;
  const userId = await ensureUser(db, email, `Extra ${role}`, t.password);
  await ensureMembership(db, t.tenantId, userId, role);
  return email;
}

/** Asserts an answer is `status` with the API's error shape, a given code and a non-empty message. */
export function expectError(res: { status: number; body: unknown; text: string }, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect((res.body as ApiErrorBody).error).toMatchObject({ code, message: expect.any(String) });
  expect((res.body as ApiErrorBody).error.message.length).toBeGreaterThan(0);
}
