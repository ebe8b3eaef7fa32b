/**
 * Route-handler wrapper: request id, authentication, JSON body reading with a size cap, and the one mapping
 * from errors to `{error: {code, message, details?}}` responses. A lost database connection becomes a 503 with
 * `Retry-After`; unknown errors become a 500 that reveals nothing internal and are logged with the request id.
 */
import { randomUUID } from "node:crypto";
import { NextResponse } from "next/server";
import { connectionErrorCode, dbFor, withDbScope } from "@/db";
import type { ApiErrorBody } from "@/lib/contract/api";
import type { VerbContext } from "@/lib/domain/context";
import { databaseUnavailable, DomainError, isDomainError, RETRY_AFTER_SECONDS } from "@/lib/domain/errors";
import { MAX_JSON_DEPTH, unstorableJson } from "@/lib/domain/events/redact";
import { parseJsonText } from "@/lib/domain/json/text";
import { holdsNul, NUL_IN_ADDRESS_MESSAGE } from "@/lib/domain/web/address";
import { isJsonMediaType, mediaType } from "@/lib/domain/web/media-type";
import { readCappedText } from "@/lib/domain/web/read-capped";
import { refuseWriteToReadOnlyWorkspace } from "@/lib/domain/tenancy/read-only";
import { taskDeletedFromDbError } from "@/lib/domain/tasks/deleted";
import { requireActor } from "./actor";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Deepest nesting of a body read item by item (the events route): deeper events are refused one by one (32
 * levels per event), and a body deeper than this is refused whole before anything recursive walks it.
 */
export const MAX_BODY_DEPTH = 512;

/**
 * What an authenticated handler receives: the request, its path parameters, the request id, and `ctx`, the verb
 * context (`{db, actor}`) it passes to the domain verb it calls.
 */
export type RouteContext<P> = { req: Request; params: P; ctx: VerbContext; requestId: string };

/** JSON error response in the API's one error shape, with `Retry-After` for the codes that have one. */
export function errorResponse(err: DomainError, requestId?: string): NextResponse {
  const headers: Record<string, string> = {};
  if (requestId) headers["x-request-id"] = requestId;
  const retryAfter = RETRY_AFTER_SECONDS[err.code];
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return NextResponse.json<ApiErrorBody>(
    { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } },
    { status: err.status, headers },
  );
}

/**
 * Refuses an address whose path or query holds a NUL: PostgreSQL cannot store or compare text with one, so a task id,
 * a filter or a search term carrying it would otherwise fail its statement (500). One check for every API route, before
 * anything reads the address; the proxy does the same for pages.
 * @throws DomainError bad_request (400).
 */
export function refuseNulInAddress(url: string): void {
  if (holdsNul(url)) throw new DomainError("bad_request", NUL_IN_ADDRESS_MESSAGE);
}

/**
 * Wraps an authenticated API handler. The handler returns a Response or a JSON-able value (200). It gets the verb
 * context: the caller as `ctx.actor`, and as `ctx.db` the database walled by row-level security to the actor's tenant
 * (and, for a person, their own sessions and memberships) — docs/decisions/0016-tenant-walls.md. It also runs inside
 * the actor's ambient database scope, so anything it awaits that asks `getDb()` is walled the same way.
 */
export function apiRoute<P = Record<string, string>>(handler: (ctx: RouteContext<P>) => Promise<Response | unknown>) {
  return async (req: Request, context: { params: Promise<P> }): Promise<Response> => {
    const requestId = randomUUID();
    try {
      refuseNulInAddress(req.url);
      const actor = await requireActor(req);
      refuseWriteToReadOnlyWorkspace(actor, req.method, new URL(req.url).pathname);
      const params = context?.params ? await context.params : ({} as P);
      const scope = { tenantId: actor.tenantId, userId: actor.kind === "user" ? actor.userId : null };
      const ctx: VerbContext = { db: await dbFor(scope), actor };
      const out = await withDbScope(scope, () => handler({ req, params, ctx, requestId }));
      if (out instanceof Response) {
        out.headers.set("x-request-id", requestId);
        return out;
      }
      return NextResponse.json(out, { headers: { "x-request-id": requestId } });
    } catch (err) {
      return handleError(err, requestId);
    }
  };
}

/**
 * Wraps an API handler that needs no credentials (accepting an invitation: the link's token is the credential). It
 * runs in no database scope — `getDb()` there sees no tenant's rows — so the handler uses `getOwnerDb()` for what it
 * looks up by a secret (docs/decisions/0016-tenant-walls.md).
 * Same request id, JSON answer and error mapping as {@link apiRoute}.
 */
export function publicRoute<P = Record<string, string>>(
  handler: (ctx: { req: Request; params: P; requestId: string }) => Promise<Response | unknown>,
) {
  return async (req: Request, context: { params: Promise<P> }): Promise<Response> => {
    const requestId = randomUUID();
    try {
      refuseNulInAddress(req.url);
      const params = context?.params ? await context.params : ({} as P);
      const out = await handler({ req, params, requestId });
      if (out instanceof Response) {
        out.headers.set("x-request-id", requestId);
        return out;
      }
      return NextResponse.json(out, { headers: { "x-request-id": requestId } });
    } catch (err) {
      return handleError(err, requestId);
    }
  };
}

/** The methods an API route can serve (HEAD and OPTIONS are answered by Next itself). */
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * Handlers for the methods a route does not serve: 405 in the API's error shape with an `Allow` header
 * (RFC 9110 §15.5.6), where Next would answer an empty 405. Export the ones the route lacks:
 * `export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");` — OPTIONS answers 204 with the same
 * `Allow` (plus HEAD with GET).
 * @param served the methods the route file exports itself, named in `Allow` and in the message.
 */
export function otherMethods(...served: HttpMethod[]): Record<HttpMethod | "OPTIONS", (req: Request) => Response> {
  const allow = served.join(", ");
  const handler = (req: Request): Response => {
    const res = errorResponse(
      new DomainError(
        "method_not_allowed",
        `${req.method} is not served at ${new URL(req.url).pathname}; use ${allow}. See /api/v1/openapi.json for the routes.`,
      ),
    );
    res.headers.set("allow", allow);
    return res;
  };
  // Next's own OPTIONS would list the 405 handlers above as allowed; this one names what the route serves.
  const options = (): Response =>
    new Response(null, {
      status: 204,
      headers: { allow: [...served, ...(served.includes("GET") ? ["HEAD"] : []), "OPTIONS"].join(", ") },
    });
  const handlers = Object.fromEntries(HTTP_METHODS.map((m) => [m, handler])) as Record<
    HttpMethod,
    (req: Request) => Response
  >;
  return { ...handlers, OPTIONS: options };
}

/**
 * Maps any thrown value to a response: a DomainError to its status; a failed database connection
 * ({@link connectionErrorCode}) to 503 `database_unavailable` with `Retry-After`; anything else to 500 `internal`.
 * Logs the last two without request bodies.
 */
export function handleError(err: unknown, requestId: string): Response {
  if (isDomainError(err)) return errorResponse(err, requestId);
  // A row written under a deleted task's id, refused by the database (migration 0035): 410 task_deleted.
  const deleted = taskDeletedFromDbError(err);
  if (deleted) return errorResponse(deleted, requestId);
  const lost = connectionErrorCode(err);
  if (lost) {
    // The code only: a failed query's message carries the statement's parameters.
    console.error(`[${requestId}] database unavailable (${lost})`);
    return errorResponse(databaseUnavailable(), requestId);
  }
  console.error(`[${requestId}] unhandled error:`, err instanceof Error ? (err.stack ?? err.message) : String(err));
  return errorResponse(
    new DomainError("internal", `Something went wrong on our side. Quote request id ${requestId} when reporting it.`),
    requestId,
  );
}

/**
 * Reads a JSON body of at most `limit` bytes (the size is checked before anything else looks at it). Every body
 * is refused (422 naming the path) when it holds a number a double cannot carry exactly, the key `__proto__`, a
 * key repeated in one object, or nesting deeper than 32 levels (512 with `perItem`). Unless `perItem` is set (the
 * events route checks each event on its own), a body PostgreSQL could not store — NUL characters, unpaired
 * surrogates — is refused whole too.
 * @throws DomainError payload_too_large, invalid_json, validation_failed.
 */
export async function readJson(
  req: Request,
  limit = MAX_BODY_BYTES,
  opts: { perItem?: boolean } = {},
): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.body) throw new DomainError("invalid_json", "The request has no body; send a JSON document.");
  const text = await readCappedText(req.body, limit);
  if (text === null) throw tooLarge(limit);
  if (!text.trim()) throw new DomainError("invalid_json", "The request body is empty; send a JSON document.");
  // Before anything walks the value: nesting (before it is parsed), numbers a double cannot carry, __proto__ and
  // repeated keys.
  const read = parseJsonText(text, opts.perItem ? MAX_BODY_DEPTH : MAX_JSON_DEPTH);
  if ("invalid" in read) throw new DomainError("invalid_json", "The request body is not valid JSON.");
  if ("problem" in read) {
    const { problem } = read;
    throw new DomainError("validation_failed", `${problem.path || "The body"} ${problem.message}.`, {
      fields: [{ path: problem.path, message: problem.message }],
    });
  }
  const parsed = read.value;
  if (!opts.perItem) {
    const why = unstorableJson(parsed);
    if (why) throw new DomainError("validation_failed", `The body ${why}.`);
  }
  return parsed;
}

/**
 * Refuses a body not declared as JSON, as the policy routes do (lib/domain/policies/read-request.ts): `content-type`
 * must be `application/json` or a `…+json` type, with or without parameters such as `charset=utf-8`.
 * @throws DomainError unsupported_media_type (415: another type, or none).
 */
export function requireJsonContentType(req: Request): void {
  const type = mediaType(req);
  if (isJsonMediaType(type)) return;
  throw new DomainError(
    "unsupported_media_type",
    `Send the body as JSON (content-type: application/json)${type ? `, not ${type.slice(0, 60)}` : ""}.`,
  );
}

/** Like {@link readJson}, but an empty body reads as `{}`. */
export async function readOptionalJson(req: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = req.headers.get("content-length");
  if (!req.body || declared === "0") return {};
  try {
    return await readJson(req, limit);
  } catch (err) {
    if (err instanceof DomainError && err.code === "invalid_json" && /empty|no body/.test(err.message)) return {};
    throw err;
  }
}

/**
 * For actions that take no body (revoke, unlock): accepts none, or `{}`. Anything else is refused rather than
 * ignored, so a client that thinks it is sending options learns they do nothing.
 * @throws DomainError invalid_json (400), validation_failed (422: a non-empty body).
 */
export async function readNoBody(req: Request): Promise<void> {
  const body = await readOptionalJson(req, 4 * 1024);
  if (body && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw new DomainError("validation_failed", "This action takes no body; send none or {}.");
}

function tooLarge(limit: number): DomainError {
  return new DomainError(
    "payload_too_large",
    `The body is larger than ${Math.round(limit / 1024)} KiB; send smaller batches.`,
  );
}
