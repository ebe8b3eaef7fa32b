import { withSigningKey } from "@/lib/server/verb-context";
import { otlpRoute } from "@/lib/server/otlp-route";
import { otherMethods } from "@/lib/server/route";
import { DomainError } from "@/lib/domain/errors";
import { ingestOtlpTraces } from "@/lib/domain/traces/ingest";
import { MAX_OTLP_BYTES } from "@/lib/domain/traces/otlp";
import { readCappedBytes } from "@/lib/domain/web/read-capped";

/**
 * POST /api/v1/traces — OTLP/HTTP trace export (`ExportTraceServiceRequest`), the path an OTLP exporter appends to the
 * endpoint `https://<host>/api`. `Authorization: Bearer <runtime key>`; body `application/x-protobuf` or
 * `application/json`, optionally `Content-Encoding: gzip`, at most 4 MiB (compressed and decompressed).
 * → 200 `ExportTraceServiceResponse` in the request's encoding: `{}` when every span was stored (or had been: the span
 * id is the dedupe key), `{"partialSuccess": {"rejectedSpans": "<n>", "errorMessage": "…"}}` naming each rejected span
 * and why (ids not hex of the right length, times not integers, an event the events path refuses).
 * Errors, each with a `google.rpc.Status` body `{code, message}` in the request's encoding: 400 (the body is not what
 * its content type says), 401, 403 (not a runtime key), 413 (too large), 415 (another content type or encoding), 503
 * database_unavailable (with `Retry-After`). Spans map onto runtime events (GenAI semantic conventions, OpenInference,
 * Vercel AI SDK). Source: decision 0039; docs/api.md#traces.
 */
export const POST = otlpRoute(async ({ req, ctx, encoding }) => {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  const tooLarge = () =>
    new DomainError(
      "payload_too_large",
      `The body is larger than ${MAX_OTLP_BYTES / 1024 / 1024} MiB; send smaller batches.`,
    );
  if (Number.isFinite(declared) && declared > MAX_OTLP_BYTES) throw tooLarge();
  if (!req.body) throw new DomainError("bad_request", "The request has no body; send an ExportTraceServiceRequest.");
  const body = await readCappedBytes(req.body, MAX_OTLP_BYTES);
  if (body === null) throw tooLarge();
  const answer = await ingestOtlpTraces(withSigningKey(ctx), {
    body,
    encoding,
    contentEncoding: req.headers.get("content-encoding"),
  });
  return new Response(typeof answer.body === "string" ? answer.body : Buffer.from(answer.body), {
    status: 200,
    headers: { "content-type": answer.contentType },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
