/**
 * OTLP/HTTP trace requests (`ExportTraceServiceRequest`) read into spans (decision 0039). Protobuf bodies are decoded
 * by the protobufjs code generated from the OTLP protos that `@opentelemetry/otlp-transformer` 0.215 ships (never a
 * decoder of our own); JSON bodies follow the OTLP/JSON mapping (ids as hex, 64-bit integers as strings or numbers,
 * enums as numbers or names). Both become the same plain shape, and each span is checked on its own: a span whose trace
 * or span id is not hex of the right length, or whose times are not unsigned integers, is rejected by itself.
 * Pure: no database, no Next.
 */
import { gunzipSync } from "node:zlib";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root";
import { DomainError } from "../errors";
import { parseJsonText } from "../json/text";
import { spanMeaning } from "./meaning";
import { bounded, type ReadSpan } from "./spans";

/** A message type of the generated code (its declarations type the root only as a protobufjs `Root`). */
type MessageType = {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
  fromObject(object: Record<string, unknown>): unknown;
  encode(message: unknown): { finish(): Uint8Array };
};
const traceV1 = (
  generated as unknown as {
    opentelemetry: {
      proto: {
        collector: { trace: { v1: Record<"ExportTraceServiceRequest" | "ExportTraceServiceResponse", MessageType> } };
      };
    };
  }
).opentelemetry.proto.collector.trace.v1;
const TraceRequest = traceV1.ExportTraceServiceRequest;
const TraceResponse = traceV1.ExportTraceServiceResponse;

/** Largest OTLP body accepted, compressed and after decompression, in bytes (413 above). */
export const MAX_OTLP_BYTES = 4 * 1024 * 1024;

/** The two body encodings of OTLP/HTTP. */
export type OtlpEncoding = "protobuf" | "json";

/** The body's encoding from its media type (parameters ignored), or null when it is neither (415). */
export function otlpEncoding(mediaType: string): OtlpEncoding | null {
  if (mediaType === "application/x-protobuf" || mediaType === "application/protobuf") return "protobuf";
  if (mediaType === "application/json") return "json";
  return null;
}

/**
 * The body's bytes after its `Content-Encoding` (none, `identity` or `gzip`).
 * @throws DomainError unsupported_media_type (415: another encoding), bad_request (400: not gzip), payload_too_large
 *   (413: more than {@link MAX_OTLP_BYTES} once decompressed).
 */
export function decompress(body: Buffer, contentEncoding: string | null): Buffer {
  const enc = (contentEncoding ?? "").trim().toLowerCase();
  if (enc === "" || enc === "identity") return body;
  if (enc !== "gzip")
    throw new DomainError(
      "unsupported_media_type",
      `Content-Encoding ${enc.slice(0, 40)} is not served; send gzip or none.`,
    );
  try {
    return gunzipSync(body, { maxOutputLength: MAX_OTLP_BYTES });
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
      throw new DomainError(
        "payload_too_large",
        `The body is larger than ${MAX_OTLP_BYTES / 1024 / 1024} MiB once decompressed; send smaller batches.`,
      );
    throw new DomainError("bad_request", "The body is not gzip data, as its Content-Encoding says.");
  }
}

/** An `ExportTraceServiceRequest` as plain data: the OTLP/JSON shape, which protobuf bodies are turned into too. */
type PlainRequest = { resourceSpans?: unknown };

/**
 * Decodes a request body.
 * @throws DomainError bad_request (400) when the body is not what its content type says: not an OTLP protobuf
 *   message, not JSON, JSON that is not an object, or nesting deeper than 64 levels.
 */
export function decodeOtlp(body: Buffer, encoding: OtlpEncoding): PlainRequest {
  if (encoding === "protobuf") {
    let message: unknown;
    try {
      message = TraceRequest.decode(body);
    } catch {
      throw new DomainError(
        "bad_request",
        "The body is not an OTLP ExportTraceServiceRequest in protobuf, as its content type says.",
      );
    }
    // bytes as base64 (ids are turned into hex below), 64-bit integers as decimal strings, enums as numbers.
    const plain = TraceRequest.toObject(message, { longs: String, bytes: String, enums: Number }) as PlainRequest;
    hexIds(plain);
    return plain;
  }
  const textBody = body.toString("utf8");
  const read = parseJsonText(textBody, 64);
  if ("invalid" in read) throw new DomainError("bad_request", "The body is not valid JSON, as its content type says.");
  if ("problem" in read)
    throw new DomainError("bad_request", `${read.problem.path || "The body"} ${read.problem.message}.`);
  const parsed = read.value;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new DomainError(
      "bad_request",
      'The body must be an OTLP ExportTraceServiceRequest object {"resourceSpans": [...]}.',
    );
  return parsed as PlainRequest;
}

/** Protobuf ids come as base64 bytes: turned into the lower-case hex OTLP/JSON uses. */
function hexIds(plain: PlainRequest): void {
  for (const rs of arr(plain.resourceSpans))
    for (const ss of arr((rs as Rec).scopeSpans))
      for (const s of arr((ss as Rec).spans)) {
        const span = s as Rec;
        for (const k of ["traceId", "spanId", "parentSpanId"])
          if (typeof span[k] === "string") span[k] = Buffer.from(span[k], "base64").toString("hex");
      }
}

/** The answer body: `ExportTraceServiceResponse`, with `partialSuccess` when spans were rejected. */
export function encodeOtlpResponse(
  encoding: OtlpEncoding,
  rejected: { count: number; message: string } | null,
): { body: Uint8Array | string; contentType: string } {
  const partialSuccess = rejected
    ? { rejectedSpans: String(rejected.count), errorMessage: rejected.message }
    : undefined;
  if (encoding === "json")
    return { body: JSON.stringify(partialSuccess ? { partialSuccess } : {}), contentType: "application/json" };
  const message = TraceResponse.fromObject(partialSuccess ? { partialSuccess } : {});
  return { body: TraceResponse.encode(message).finish(), contentType: "application/x-protobuf" };
}

type Rec = Record<string, unknown>;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Rec => (v && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : {});

/** An OTLP `AnyValue` (JSON shape) as a plain value: every kind — string, bool, int, double, bytes, array, kvlist. */
export function anyValue(v: unknown, depth = 0): unknown {
  const value = rec(v);
  if (depth > 16) return "[nested too deep]";
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) {
    const n = Number(value.intValue);
    return Number.isSafeInteger(n) ? n : String(value.intValue);
  }
  if ("doubleValue" in value) {
    const n = Number(value.doubleValue);
    return Number.isFinite(n) ? n : String(value.doubleValue);
  }
  if ("bytesValue" in value) return { bytes_base64: String(value.bytesValue) };
  if ("arrayValue" in value) return arr(rec(value.arrayValue).values).map((x) => anyValue(x, depth + 1));
  if ("kvlistValue" in value) return keyValues(rec(value.kvlistValue).values, depth + 1);
  return null;
}

/** A list of OTLP `KeyValue` as an object (a later key wins, as the OTLP data model says keys are unique). */
export function keyValues(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of arr(list)) {
    const { key, value } = rec(kv);
    if (typeof key !== "string" || key === "__proto__") continue;
    out[key] = anyValue(value, depth);
  }
  return out;
}

const SPAN_KINDS = [
  "SPAN_KIND_UNSPECIFIED",
  "SPAN_KIND_INTERNAL",
  "SPAN_KIND_SERVER",
  "SPAN_KIND_CLIENT",
  "SPAN_KIND_PRODUCER",
  "SPAN_KIND_CONSUMER",
];

/** A span's `kind` as its enum name, whether sent as a number or a name. */
function kindName(kind: unknown): string {
  if (typeof kind === "number") return SPAN_KINDS[kind] ?? `SPAN_KIND_${kind}`;
  return typeof kind === "string" && kind ? kind : "SPAN_KIND_UNSPECIFIED";
}

/** True when `status.code` says error (2 or `STATUS_CODE_ERROR`). */
function isError(status: Rec): boolean {
  return status.code === 2 || status.code === "STATUS_CODE_ERROR" || status.code === "2";
}

const HEX32 = /^[0-9a-f]{32}$/i;
const HEX16 = /^[0-9a-f]{16}$/i;

/**
 * Nanoseconds since the epoch (a string or number of digits) as an ISO 8601 time with microseconds, null for `0` or
 * absent (not set), or undefined when it is not an unsigned integer.
 */
function nanosToIso(v: unknown): string | null | undefined {
  if (v === undefined || v === null) return null;
  const s = typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : typeof v === "string" ? v : "";
  if (!/^\d{1,20}$/.test(s)) return undefined;
  const ns = BigInt(s);
  if (ns === BigInt(0)) return null;
  const micros = ns / BigInt(1000);
  const ms = Number(micros / BigInt(1000));
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return undefined;
  return `${d.toISOString().slice(0, 19)}.${String(micros % BigInt(1000000)).padStart(6, "0")}Z`;
}

/** One span of a request, read, or why it was rejected. */
export type OtlpSpanRead = { ok: true; span: ReadSpan } | { ok: false; label: string; message: string };

/**
 * The spans of a request, in request order, each read or rejected. The task id of a span: its `gen_ai.conversation.id`
 * (or OpenInference's `session.id`), else `custody.task_id` on the span or its resource, else the task another span of
 * the same trace in the request names, else the trace id. The attempt: `custody.attempt` on the span or its resource.
 */
export function readOtlpSpans(request: PlainRequest): OtlpSpanRead[] {
  type Raw = { span: Rec; attrs: Rec; resource: Rec; scope: Rec };
  const raws: Raw[] = [];
  for (const rs of arr(request.resourceSpans)) {
    const resource = keyValues(rec(rec(rs).resource).attributes);
    for (const ss of arr(rec(rs).scopeSpans)) {
      const scope = rec(rec(ss).scope);
      for (const s of arr(rec(ss).spans))
        raws.push({ span: rec(s), attrs: keyValues(rec(s).attributes), resource, scope });
    }
  }
  const own = (r: Raw) =>
    str(r.attrs["gen_ai.conversation.id"]) ?? str(r.attrs["session.id"]) ?? str(r.attrs["custody.task_id"]);
  const byTrace = new Map<string, string>();
  for (const r of raws) {
    const t = own(r);
    const traceId = typeof r.span.traceId === "string" ? r.span.traceId.toLowerCase() : "";
    if (t && !byTrace.has(traceId)) byTrace.set(traceId, t);
  }
  return raws.map((r) => {
    const spanId = typeof r.span.spanId === "string" ? r.span.spanId.toLowerCase() : "";
    const traceId = typeof r.span.traceId === "string" ? r.span.traceId.toLowerCase() : "";
    const label = `span ${String(r.span.spanId ?? "").slice(0, 40)} (trace ${String(r.span.traceId ?? "").slice(0, 40)})`;
    if (!HEX32.test(traceId) || /^0+$/.test(traceId))
      return { ok: false, label, message: "traceId must be 32 hex digits, not all zero" };
    if (!HEX16.test(spanId) || /^0+$/.test(spanId))
      return { ok: false, label, message: "spanId must be 16 hex digits, not all zero" };
    const start = nanosToIso(r.span.startTimeUnixNano);
    const end = nanosToIso(r.span.endTimeUnixNano);
    if (!start) return { ok: false, label, message: "startTimeUnixNano must be a positive integer of nanoseconds" };
    if (end === undefined) return { ok: false, label, message: "endTimeUnixNano must be an integer of nanoseconds" };
    const name = typeof r.span.name === "string" ? r.span.name : "";
    const status = rec(r.span.status);
    const attempt = r.attrs["custody.attempt"] ?? r.resource["custody.attempt"];
    const service = str(r.resource["service.name"]);
    const parent =
      typeof r.span.parentSpanId === "string" && r.span.parentSpanId ? r.span.parentSpanId.toLowerCase() : undefined;
    const span: ReadSpan = {
      label,
      idBase: `otel:${traceId}:${spanId}`,
      taskId: own(r) ?? str(r.resource["custody.task_id"]) ?? byTrace.get(traceId) ?? traceId,
      ...(attempt === undefined ? {} : { attempt: attempt as number }),
      ...(service ? { actor: service } : {}),
      start,
      end,
      error: isError(status) ? (typeof status.message === "string" ? status.message : "") : null,
      meaning: spanMeaning(r.attrs, name, spanId),
      origin: {
        source: "otlp",
        trace_id: traceId,
        span_id: spanId,
        ...(parent ? { parent_span_id: parent } : {}),
        span_name: name,
      },
      detail: bounded({
        kind: kindName(r.span.kind),
        ...(Object.keys(status).length ? { status: { ...status, code: status.code ?? 0 } } : {}),
        attributes: r.attrs,
        resource: r.resource,
        scope: { name: r.scope.name, version: r.scope.version },
      }) as Record<string, unknown>,
    };
    return { ok: true, span };
  });
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : typeof v === "number" ? String(v) : undefined;
}
