/**
 * One error class for the domain, with a stable string code, and the one table that maps a code to an
 * HTTP status. Error body shape: `{error: {code, message, details?}}` (docs/api.md#errors).
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  validation_failed: 422,
  unauthorized: 401,
  // Runtime API keys with an expiry and a scope (decision 0044).
  api_key_expired: 401,
  scope_read_only: 403,
  scope_runtime_only: 403,
  scope_task_prefix: 403,
  forbidden: 403,
  approval_required: 403,
  approval_mismatch: 403,
  approval_rejected: 403,
  already_decided: 409,
  principal_revoked: 403,
  too_many_attempts: 429,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  stale_attempt: 409,
  attempt_too_far_ahead: 422,
  version_conflict: 409,
  policy_invalid: 422,
  gate_stop: 409,
  task_terminated: 409,
  // A task an owner deleted (decision 0054): every path answers 410 from then on.
  task_deleted: 410,
  export_required: 409,
  gate_replay: 409,
  in_flight: 409,
  reconcile_required: 409,
  no_intent: 409,
  receipt_conflict: 409,
  idempotency_key_mismatch: 422,
  duplicate_payload: 409,
  too_many_pending_approvals: 409,
  repeats_mismatch: 422,
  payload_digest_mismatch: 422,
  content_digest_mismatch: 422,
  artifact_content_mismatch: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_events: 413,
  lookup_failed: 502,
  last_owner: 409,
  not_allowed: 403,
  already_member: 409,
  gone: 410,
  internal: 500,
  database_unavailable: 503,
  invalid_run_state: 422,
  unsupported_schema_version: 422,
  workspace_read_only: 409,
  export_range_too_large: 422,
  workspace_not_empty: 409,
  bundle_invalid: 422,
  signoff_by_last_editor: 403,
  already_signed_off: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Seconds a client should wait before sending again, per code, sent as `Retry-After` (RFC 9110 §10.2.3). */
export const RETRY_AFTER_SECONDS: Partial<Record<ErrorCode, number>> = { database_unavailable: 1 };

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Shorthand for the not-found answer that also hides other tenants' rows. Long names are shortened. */
export function notFound(what: string): DomainError {
  const shown = what.length > 160 ? `${what.slice(0, 157)}…` : what;
  return new DomainError("not_found", `${shown} was not found.`);
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

/**
 * The answer to a request whose database connection failed or could not be made (db/connection-errors.ts): 503 with
 * `Retry-After` ({@link RETRY_AFTER_SECONDS}). Each write is one transaction, committed whole or not at all, and
 * idempotent to resend (docs/decisions/0011-crash-safety.md), so sending the request again is safe.
 */
export function databaseUnavailable(): DomainError {
  return new DomainError(
    "database_unavailable",
    "The database cannot be reached right now. Send the request again in a moment: what it changed was kept whole or not at all.",
  );
}

/** A zod issue as {@link validationError} reads it (zod's own issue objects fit). */
export type ValidationIssue = {
  path: ReadonlyArray<PropertyKey>;
  message: string;
  code?: string;
  expected?: unknown;
  keys?: readonly string[];
};

/**
 * Turns a zod issue list into a `validation_failed` error naming each field path. zod's generic messages
 * ("Invalid input: expected string, received undefined", "Unrecognized key: …") are replaced by ones that name
 * the field and say what to send; schema-specific messages are kept. A message that already starts with its
 * field name is not prefixed with it again.
 */
export function validationError(issues: ReadonlyArray<ValidationIssue>, prefix = ""): DomainError {
  const fields = issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
    return { path, message: humanIssueMessage(i, path) };
  });
  const first = fields[0];
  const name = first?.path || "body";
  const lead = first ? (first.message.startsWith(`${name} `) ? first.message : `${name}: ${first.message}`) : "";
  const message = first
    ? `${lead}${fields.length > 1 ? ` (and ${fields.length - 1} more)` : ""}`
    : "The request is not valid.";
  return new DomainError("validation_failed", message, { fields });
}

function humanIssueMessage(issue: ValidationIssue, path: string): string {
  const field = path || "body";
  if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
    const received = /received (\w+)/.exec(issue.message)?.[1];
    const expected = typeof issue.expected === "string" ? issue.expected : "a value";
    if (received === "undefined") return `${field} is required (${expected})`;
    return `${field} must be ${expected === "object" || expected === "array" ? `an ${expected}` : `a ${expected}`}${received ? `, not ${received}` : ""}`;
  }
  if (issue.code === "unrecognized_keys" && issue.keys?.length && issue.message.startsWith("Unrecognized key")) {
    const names = issue.keys.map((k) => `"${k}"`).join(", ");
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${names}; remove ${issue.keys.length > 1 ? "them" : "it"} (the fields are listed in /api/v1/openapi.json)`;
  }
  return issue.message;
}
