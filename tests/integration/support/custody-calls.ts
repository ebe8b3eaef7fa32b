/**
 * Typed calls of the custody routes (intent, receipt, reconcile, lookup, resume, task read, checkpoint, events,
 * lookup registration) and the request bodies they send.
 * Everything is per test: no shared mutable state.
 */
import type { CheckpointResult, GateVerdict, IntentResult, Receipt, TaskRecord, TaskView } from "@/lib/contract/api";
import { api, makeEvent, makeRecord, postEvents, rid, type ApiResponse, type Auth, type TestTenant } from "../helpers";

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

/** Registers a lookup endpoint for `tool` as the tenant's owner (`PUT /api/v1/settings/lookups/{tool}`). */
export async function registerLookup(owner: Auth, tool: string, url: string, timeoutMs?: number): Promise<ApiResponse> {
  return api(owner).put(`/api/v1/settings/lookups/${encodeURIComponent(tool)}`, {
    url,
    ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}),
  });
}
