/**
 * Typed HTTP client of the Run Custody runtime API v1, for any agent runtime (a harness, a workflow worker,
 * the demo runtime). Plain `fetch`, no Next.js or React imports, so it runs in Node scripts, workers and tests.
 *
 * Errors: every non-2xx answer throws {@link CustodyApiError} built from the server's
 * `{error: {code, message, details?}}`; a transport failure (connection refused, reset, timeout) throws a
 * `CustodyApiError` with `status` 0 and code `network_error`.
 *
 * Retries: only calls that are safe to repeat are retried, with exponential backoff and jitter, on a transport
 * failure or a 5xx answer: `GET`s, event batches (idempotent by event id) and side-effect intents and receipts
 * (idempotent by idempotency key). A checkpoint (`PUT` adds a version) and a resume-gate request are sent once.
 */
import type {
  CheckpointResult,
  EventInput,
  EventResult,
  GateVerdict,
  IntentResult,
  Receipt,
  SideEffectStatus,
  TaskList,
  TaskRecord,
  TaskView,
  TimelinePage,
} from "@/lib/contract/api";

/** Largest batch `POST /api/v1/events` accepts; longer lists are split. */
export const MAX_EVENTS_PER_BATCH = 1000;

/** An Ed25519 public key as a JWK (RFC 8037), as served by `GET /api/v1/signing-keys`. */
export type PublicSigningJwk = {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid?: string;
  alg?: string;
  use?: string;
};

/** `GET /api/v1/signing-keys` answer: a JWK Set. */
export type SigningKeySet = { keys: PublicSigningJwk[] };

/** Filters and paging of `GET /api/v1/tasks`. */
export type ListTasksParams = {
  cursor?: string | null;
  limit?: number;
  /** Part of a task id. */
  q?: string;
  phase?: string;
  /** Only tasks with a side effect in this status. */
  status?: SideEffectStatus;
  /** Only tasks of this workflow (the `workflow` of their first `task.created` event). */
  workflow?: string;
};

/** Paging of `GET /api/v1/tasks/{id}/timeline`. */
export type TimelineParams = { cursor?: string | null; limit?: number };

/** Body of `POST /api/v1/tasks/{id}/side-effects/{name}/intent`. */
export type IntentInput = {
  idempotency_key: string;
  /** sha256 (hex) of the canonical payload the write will send. */
  payload_digest: string;
  /** Action class, e.g. `records.update`. */
  action: string;
  mutation: boolean;
  /** Tool that performs the write (defaults to the side effect's name on the server). */
  tool?: string;
  /** The sandbox attempt registering it (an older attempt than the task's current one is refused). */
  attempt: number;
  /**
   * The write needs an approver's decision (docs/concepts.md#intent): a first intent creates the request and is
   * answered 403.
   */
  requires_approval?: boolean;
  /** The tool arguments, for the approver to read. */
  payload?: unknown;
  /** The agent making the write and its version (an approval is bound to both). */
  agent?: string;
  agent_version?: string;
  /**
   * The earlier effect of the task this write deliberately repeats (same action and payload digest). Without it, a
   * write of a payload another effect of the task wrote, is writing or may have written is refused (409
   * `duplicate_payload`).
   */
  repeats?: string;
};

/** `GET /api/v1/approvals/{id}` as a runtime reads it (fields the client relies on; anything else is kept). */
export type ApprovalAnswer = {
  id: string;
  status: "pending" | "stale" | "approved" | "rejected";
  stale_reasons?: string[];
  decision?: {
    decision: "approve" | "reject";
    reason?: string | null;
    decided_by?: string;
    decided_at?: string;
    expires_at?: string | null;
  } | null;
  /** The request that re-binds this one after a stale approval was re-approved. */
  superseded_by?: string | null;
} & Record<string, unknown>;

/** Body of `POST /api/v1/tasks/{id}/side-effects/{name}/receipt` for a write that was made. */
export type ReceiptInput = {
  idempotency_key: string;
  /** `applied` (the default when absent). */
  outcome?: "applied";
  external_operation_id: string;
  result_digest: string;
  /** ISO 8601 time with offset. */
  completed_at: string;
  /** The sandbox attempt reporting it. */
  attempt: number;
};

/**
 * Body of the receipt route when the tool owner knows nothing of the write was applied (a clean failure): the effect
 * returns to where a retry starts and the same key gets a fresh `go`.
 */
export type NotAppliedInput = {
  idempotency_key: string;
  outcome: "not_applied";
  /** The tool's message (kept with credentials redacted, at most 1000 characters). */
  error: string;
  attempt: number;
};

/**
 * Answer of the receipt route. Not in `lib/contract/api.ts`: the fields the client relies on are typed,
 * anything else the server adds is kept.
 */
export type ReceiptResult = {
  status?: SideEffectStatus;
  receipt?: Receipt;
  /** `not_applied` for a not_applied receipt. */
  outcome?: "not_applied";
  /** The tool's message as kept. */
  error?: string;
} & Record<string, unknown>;

/** Body of `POST /api/v1/tasks/{id}/resume`: the runtime's current tool definitions (name → sha256). */
export type ResumeInput = { tool_definitions?: Record<string, string>; attempt?: number };

export type CustodyClientOptions = {
  /** Server origin, e.g. `http://localhost:3000` (a trailing slash is ignored). */
  baseUrl: string;
  /** Tenant runtime API key, sent as a bearer token. Never logged. */
  apiKey: string;
  /** A `fetch` implementation (tests, instrumentation); defaults to the global one. */
  fetch?: typeof fetch;
  /** Attempts for a safe call, the first included (default 5). */
  maxAttempts?: number;
  /** First backoff delay in ms (default 200); doubles per attempt, capped at 5 s, with jitter. */
  backoffMs?: number;
  /** Per-request timeout in ms (default 30 000). */
  timeoutMs?: number;
};

/** A non-2xx answer of the API (or `status` 0 when the server could not be reached). */
export class CustodyApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  /**
   * @param status HTTP status (0 for a transport failure).
   * @param code the server's stable error code (`reconcile_required`, `not_found` …).
   */
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "CustodyApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

type RequestOptions = {
  method: "GET" | "POST" | "PUT";
  path: string;
  query?: Record<string, string | number | null | undefined>;
  body?: unknown;
  /** Bytes sent as they are (`application/octet-stream`) instead of a JSON `body`. */
  bytes?: Uint8Array;
  headers?: Record<string, string>;
  /** Safe to send again after a transport failure or a 5xx. */
  retry: boolean;
};

type RawResponse = { status: number; headers: Headers; body: unknown };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Client of the runtime API; one instance per server and key. */
export class CustodyClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  /**
   * @param opts server origin, API key, and optional fetch / retry / timeout settings.
   * @throws Error when `baseUrl` is not an http(s) URL or `apiKey` is empty.
   */
  constructor(opts: CustodyClientOptions) {
    const url = new URL(opts.baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`baseUrl must be an http(s) URL, got ${url.protocol}`);
    }
    if (!opts.apiKey) throw new Error("apiKey is required");
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
    this.backoffMs = Math.max(0, opts.backoffMs ?? 200);
    this.timeoutMs = Math.max(1, opts.timeoutMs ?? 30_000);
  }

  /**
   * Sends events (`POST /api/v1/events`), split into batches of at most 1000, in order.
   * Retried: the server deduplicates by event id, so a repeated batch stores nothing twice.
   * @returns one result per event, in input order (`stored`, `duplicate` or `rejected` with a reason).
   * @throws CustodyApiError when a batch is refused as a whole (4xx) or the server stays unreachable.
   */
  async postEvents(events: EventInput[]): Promise<EventResult[]> {
    const results: EventResult[] = [];
    for (let i = 0; i < events.length; i += MAX_EVENTS_PER_BATCH) {
      const batch = events.slice(i, i + MAX_EVENTS_PER_BATCH);
      const res = await this.request({ method: "POST", path: "/api/v1/events", body: { events: batch }, retry: true });
      results.push(...(res.body as { results: EventResult[] }).results);
    }
    return results;
  }

  /**
   * Checkpoints the task record (`PUT /api/v1/tasks/{id}`); every call adds a signed version. The record names the
   * attempt writing it (`record.attempt`); `opts.baseVersion` sends `If-Match` so a write based on an older version is
   * refused instead of overwriting a newer one. Not retried (a repeat would add another version).
   * @returns version, RFC 8785 digest, Ed25519 signature and key id of the stored record.
   * @throws CustodyApiError 409 stale_attempt (a newer attempt has started: stop this sandbox), 409 version_conflict
   *   (another write came first; `details.current_version`), 422 validation_failed (field named), 409 conflict, 403, 401.
   */
  async checkpoint(taskId: string, record: TaskRecord, opts: { baseVersion?: number } = {}): Promise<CheckpointResult> {
    const res = await this.request({
      method: "PUT",
      path: `/api/v1/tasks/${enc(taskId)}`,
      body: record,
      retry: false,
      headers: opts.baseVersion !== undefined ? { "if-match": `"${opts.baseVersion}"` } : undefined,
    });
    return res.body as CheckpointResult;
  }

  /**
   * Reads one task (`GET /api/v1/tasks/{id}`): latest record, signature check, side-effect view.
   * @returns the task, or `null` when the tenant has no such task (404).
   * @throws CustodyApiError for any other non-2xx answer.
   */
  async getTask(taskId: string): Promise<TaskView | null> {
    try {
      const res = await this.request({ method: "GET", path: `/api/v1/tasks/${enc(taskId)}`, retry: true });
      return res.body as TaskView;
    } catch (err) {
      if (err instanceof CustodyApiError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * Lists the tenant's tasks (`GET /api/v1/tasks`), newest first.
   * @returns a page of tasks and the cursor of the next page (`null` at the end).
   * @throws CustodyApiError 400 on a bad limit, cursor or status filter.
   */
  async listTasks(params: ListTasksParams = {}): Promise<TaskList> {
    const res = await this.request({
      method: "GET",
      path: "/api/v1/tasks",
      query: {
        cursor: params.cursor,
        limit: params.limit,
        q: params.q,
        phase: params.phase,
        status: params.status,
        workflow: params.workflow,
      },
      retry: true,
    });
    return res.body as TaskList;
  }

  /**
   * Reads one page of a task's timeline (`GET /api/v1/tasks/{id}/timeline`), ordered by occurred_at, id.
   * @returns events and `next_cursor` (`null` on the last page).
   * @throws CustodyApiError 404 for an unknown task, 400 on a bad cursor or limit (1–1000).
   */
  async timeline(taskId: string, params: TimelineParams = {}): Promise<TimelinePage> {
    const res = await this.request({
      method: "GET",
      path: `/api/v1/tasks/${enc(taskId)}/timeline`,
      query: { cursor: params.cursor, limit: params.limit },
      retry: true,
    });
    return res.body as TimelinePage;
  }

  /**
   * Reads the public keys that verify checkpoint signatures (`GET /api/v1/signing-keys`).
   * @returns a JWK Set of Ed25519 keys.
   */
  async signingKeys(): Promise<SigningKeySet> {
    const res = await this.request({ method: "GET", path: "/api/v1/signing-keys", retry: true });
    return res.body as SigningKeySet;
  }

  /**
   * Registers the intent to perform an external write (`POST …/side-effects/{name}/intent`), before making it.
   * Retried: the server answers a repeated intent by its idempotency key.
   * @returns `{decision: "go", lease_expires_at}` — make the write now with this key; or
   *   `{decision: "replay", receipt}` — the write already completed: use the stored receipt, do not write again.
   * @throws CustodyApiError 409 `in_flight` (another holder's lease is live), 409 `reconcile_required` (the
   *   outcome is unknown: a person must reconcile), 409 `duplicate_payload` (another effect of the task wrote, is
   *   writing or may have written the same payload: `details` name it, and a completed one's `receipt` to use instead;
   *   a deliberate repeat sets `repeats`), 422 `idempotency_key_mismatch` (same key, other payload), 422
   *   `repeats_mismatch`, 422 `payload_digest_mismatch` (`payload` sent with another digest), 403 `approval_required`,
   *   400 (key missing or malformed), 404.
   */
  async intent(taskId: string, name: string, input: IntentInput): Promise<IntentResult> {
    const res = await this.request({
      method: "POST",
      path: `/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/intent`,
      body: input,
      retry: true,
    });
    return res.body as IntentResult;
  }

  /**
   * Records the receipt of an external write (`POST …/side-effects/{name}/receipt`): a completed one, or (`outcome:
   * "not_applied"` with the tool's `error`) the tool owner's word that nothing of it was applied, after which the same
   * key gets a fresh `go`. Retried: an identical second receipt is a no-op on the server.
   * @returns the server's answer (the effect's status and stored receipt; for not_applied, the status a retry starts
   *   from and the message as kept).
   * @throws CustodyApiError 409 (no intent for this effect, or a conflicting receipt, or an outcome already unknown or
   *   settled), 404, 422.
   */
  async receipt(taskId: string, name: string, input: ReceiptInput | NotAppliedInput): Promise<ReceiptResult> {
    const res = await this.request({
      method: "POST",
      path: `/api/v1/tasks/${enc(taskId)}/side-effects/${enc(name)}/receipt`,
      body: input,
      retry: true,
    });
    return res.body as ReceiptResult;
  }

  /**
   * Asks the resume gate whether the task may continue (`POST /api/v1/tasks/{id}/resume`). Sent once.
   * @param body the runtime's current tool definitions (name → sha256), compared with the last checkpoint's.
   * @returns `{verdict: "resume" | "replay" | "stop", reasons[], next_phase, permitted_side_effects[]}`.
   * @throws CustodyApiError 404 for an unknown task.
   */
  async resume(taskId: string, body: ResumeInput = {}): Promise<GateVerdict> {
    const res = await this.request({ method: "POST", path: `/api/v1/tasks/${enc(taskId)}/resume`, body, retry: false });
    return res.body as GateVerdict;
  }

  /**
   * Reads one approval request (`GET /api/v1/approvals/{id}`): runtimes read approvals, never decide them. Retried.
   * @returns the approval with its `status` (`pending`, `stale`, `approved`, `rejected`) and decision, if any.
   * @throws CustodyApiError 404.
   */
  async getApproval(id: string): Promise<ApprovalAnswer> {
    const res = await this.request({ method: "GET", path: `/api/v1/approvals/${enc(id)}`, retry: true });
    return res.body as ApprovalAnswer;
  }

  /**
   * Uploads an artifact's bytes (`PUT /api/v1/tasks/{id}/artifacts/{sha256}/content`, decision 0045) so the task and
   * approval pages can show them and the download serves them. The server stores them only under the sha256 they hash
   * to; the same bytes again store nothing (safe to retry). The task must exist (after its first event or
   * checkpoint); upload before the checkpoint that lists the artifact, so the page finds the bytes with the listing.
   * @param sha256 lower-case hex sha256 of `bytes` (as the checkpoint lists it).
   * @returns `created` false when the same bytes were already stored.
   * @throws CustodyApiError 422 content_digest_mismatch (the bytes hash to another digest), 413 payload_too_large
   *   (over the server's CUSTODY_ARTIFACT_MAX_BYTES), 404 (no such task), 403, 401.
   */
  async uploadArtifact(
    taskId: string,
    sha256: string,
    bytes: Uint8Array,
  ): Promise<{ sha256: string; size: number; created: boolean }> {
    const res = await this.request({
      method: "PUT",
      path: `/api/v1/tasks/${enc(taskId)}/artifacts/${enc(sha256)}/content`,
      bytes,
      retry: true,
    });
    return res.body as { sha256: string; size: number; created: boolean };
  }

  /** Sends one request, retrying safe calls on transport failures and 5xx answers. */
  private async request(opts: RequestOptions): Promise<RawResponse> {
    const attempts = opts.retry ? this.maxAttempts : 1;
    let lastError: CustodyApiError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(this.backoff(attempt - 1));
      let res: RawResponse;
      try {
        res = await this.send(opts);
      } catch (err) {
        lastError = new CustodyApiError(
          0,
          "network_error",
          `${opts.method} ${opts.path}: could not reach ${this.baseUrl} (${describe(err)})`,
        );
        continue;
      }
      if (res.status >= 200 && res.status < 300) return res;
      lastError = toApiError(res, opts);
      if (res.status < 500) break;
    }
    throw lastError ?? new CustodyApiError(0, "network_error", `${opts.method} ${opts.path}: no answer`);
  }

  /** One HTTP exchange; throws on transport failure or timeout. */
  private async send(opts: RequestOptions): Promise<RawResponse> {
    const url = new URL(this.baseUrl + opts.path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    if (opts.bytes !== undefined) headers["content-type"] = "application/octet-stream";
    Object.assign(headers, opts.headers);
    const res = await this.fetchImpl(url, {
      method: opts.method,
      headers,
      body:
        opts.bytes !== undefined
          ? new Uint8Array(opts.bytes)
          : opts.body !== undefined
            ? JSON.stringify(opts.body)
            : undefined,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        body = text;
      }
    }
    return { status: res.status, headers: res.headers, body };
  }

  /** Delay before retry number `n` (1-based): base · 2^(n-1), capped at 5 s, with ±25 % jitter. */
  private backoff(n: number): number {
    const base = Math.min(5000, this.backoffMs * 2 ** (n - 1));
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const causeCode = cause && typeof cause === "object" ? (cause as { code?: unknown }).code : undefined;
    return typeof causeCode === "string" ? `${err.message}: ${causeCode}` : err.message;
  }
  return String(err);
}

/** Builds the error of a non-2xx answer from the server's `{error: {code, message, details?}}`. */
function toApiError(res: RawResponse, opts: RequestOptions): CustodyApiError {
  const err =
    res.body && typeof res.body === "object"
      ? (res.body as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error
      : undefined;
  const code = typeof err?.code === "string" ? err.code : `http_${res.status}`;
  const message =
    typeof err?.message === "string"
      ? err.message
      : `${opts.method} ${opts.path} answered ${res.status} without an error body`;
  return new CustodyApiError(res.status, code, message, err?.details);
}
