/**
 * One error class for the domain, with a stable string code, and the one table that maps a code to an
 * HTTP status. Error body shape: `{error: {code, message, details?}}` (DESIGN.md "Runtime API").
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  validation_failed: 422,
  unauthorized: 401,
  forbidden: 403,
  approval_required: 403,
  principal_revoked: 403,
  too_many_attempts: 429,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  in_flight: 409,
  reconcile_required: 409,
  no_intent: 409,
  receipt_conflict: 409,
  idempotency_key_mismatch: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_events: 413,
  lookup_failed: 502,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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

/** Turns a zod issue list into a `validation_failed` error naming each field path. */
export function validationError(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix = "",
): DomainError {
  const fields = issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].filter(Boolean).join("."),
    message: i.message,
  }));
  const first = fields[0];
  const message = first
    ? `${first.path || "body"}: ${first.message}${fields.length > 1 ? ` (and ${fields.length - 1} more)` : ""}`
    : "The request is not valid.";
  return new DomainError("validation_failed", message, { fields });
}
