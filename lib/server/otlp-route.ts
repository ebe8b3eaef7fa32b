/**
 * The OTLP/HTTP route wrapper (decision 0039): like `apiRoute` (request id, the caller's key, the walled database), but
 * every failure answers as the OTLP/HTTP specification asks — the HTTP status with a `google.rpc.Status` body
 * (`{code, message}`), encoded as the request was (protobuf or JSON), and `Retry-After` on 429 and 503 — so exporters
 * and the OpenTelemetry Collector read our refusals as they read any OTLP receiver's.
 */
import { randomUUID } from "node:crypto";
import { Field, Type } from "protobufjs";
import { connectionErrorCode, dbFor, withDbScope } from "@/db";
import type { VerbContext } from "@/lib/domain/context";
import { databaseUnavailable, DomainError, isDomainError, RETRY_AFTER_SECONDS } from "@/lib/domain/errors";
import { otlpEncoding, type OtlpEncoding } from "@/lib/domain/traces/otlp";
import { mediaType } from "@/lib/domain/web/media-type";
import { requireActor } from "./actor";
import { refuseNulInAddress } from "./route";

/** `google.rpc.Status` (code, message; no details), built by protobufjs from its definition. */
const StatusType = new Type("Status").add(new Field("code", 1, "int32")).add(new Field("message", 2, "string"));

/** The gRPC code of an HTTP status, as OTLP/HTTP's Status bodies carry it. */
function grpcCode(status: number): number {
  if (status === 401) return 16; // UNAUTHENTICATED
  if (status === 403) return 7; // PERMISSION_DENIED
  if (status === 404) return 5; // NOT_FOUND
  if (status === 405) return 12; // UNIMPLEMENTED
  if (status === 413 || status === 429) return 8; // RESOURCE_EXHAUSTED
  if (status === 503) return 14; // UNAVAILABLE
  if (status >= 500) return 13; // INTERNAL
  return 3; // INVALID_ARGUMENT
}

/** An OTLP error answer: `status` with a Status body in `encoding` (JSON when the request's type was not OTLP's). */
export function statusResponse(err: DomainError, encoding: OtlpEncoding, requestId: string): Response {
  const status = { code: grpcCode(err.status), message: `${err.code}: ${err.message}` };
  const headers: Record<string, string> = { "x-request-id": requestId };
  const retryAfter = RETRY_AFTER_SECONDS[err.code];
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  if (encoding === "protobuf") {
    headers["content-type"] = "application/x-protobuf";
    const bytes = StatusType.encode(StatusType.fromObject(status)).finish();
    return new Response(Buffer.from(bytes), { status: err.status, headers });
  }
  headers["content-type"] = "application/json";
  return new Response(JSON.stringify(status), { status: err.status, headers });
}

/**
 * Wraps an OTLP handler. It gets the request, the verb context and the body's encoding (from `content-type`; an
 * unsupported type is refused with 415 before the key is even looked at, as no answer could be encoded for it).
 * @returns the handler's Response, or a Status answer for any error (a lost database: 503 with `Retry-After`).
 */
export function otlpRoute(
  handler: (c: { req: Request; ctx: VerbContext; encoding: OtlpEncoding; requestId: string }) => Promise<Response>,
) {
  return async (req: Request): Promise<Response> => {
    const requestId = randomUUID();
    const type = mediaType(req);
    const encoding = otlpEncoding(type);
    try {
      refuseNulInAddress(req.url);
      if (!encoding)
        throw new DomainError(
          "unsupported_media_type",
          `Send OTLP as application/x-protobuf or application/json${type ? `, not ${type.slice(0, 60)}` : ""}.`,
        );
      const actor = await requireActor(req);
      const scope = { tenantId: actor.tenantId, userId: actor.kind === "user" ? actor.userId : null };
      const ctx: VerbContext = { db: await dbFor(scope), actor };
      const res = await withDbScope(scope, () => handler({ req, ctx, encoding, requestId }));
      res.headers.set("x-request-id", requestId);
      return res;
    } catch (err) {
      const enc = encoding ?? "json";
      if (isDomainError(err)) return statusResponse(err, enc, requestId);
      const lost = connectionErrorCode(err);
      if (lost) {
        console.error(`[${requestId}] database unavailable (${lost})`);
        return statusResponse(databaseUnavailable(), enc, requestId);
      }
      console.error(`[${requestId}] unhandled error:`, err instanceof Error ? (err.stack ?? err.message) : String(err));
      return statusResponse(
        new DomainError(
          "internal",
          `Something went wrong on our side. Quote request id ${requestId} when reporting it.`,
        ),
        enc,
        requestId,
      );
    }
  };
}
