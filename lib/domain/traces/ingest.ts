/**
 * The two trace intakes (decision 0039; docs/api.md#traces): OTLP/HTTP `POST /api/v1/traces` and the OpenAI Agents
 * SDK's trace export `POST /api/v1/traces/ingest`. Both read their body into spans and store them through the events
 * path (./store.ts): a span is an event like any other.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { authorize } from "../authz";
import type { SigningContext } from "../context";
import { decodeOtlp, decompress, encodeOtlpResponse, readOtlpSpans, type OtlpEncoding } from "./otlp";
import { exportItems, readExportItems, traceIdBase, tracesToLookUp } from "./openai-agents";
import { storeSpans, type SpanInput, type SpanRejection } from "./store";

/** How many rejected spans the `partialSuccess.errorMessage` names one by one (the count covers all). */
const NAMED_REJECTIONS = 20;

/**
 * Stores an OTLP/HTTP `ExportTraceServiceRequest`.
 * @param input.body the raw body (at most MAX_OTLP_BYTES, checked by the caller); `encoding` from its content type;
 *   `contentEncoding` its `Content-Encoding` header.
 * @returns the `ExportTraceServiceResponse` in the request's encoding: empty when every span was stored (or had been),
 *   with `partialSuccess {rejectedSpans, errorMessage}` naming each rejected span and why otherwise.
 * @throws DomainError forbidden (403: not a runtime key), bad_request (400: the body is not what its content type
 *   says), payload_too_large (413), unsupported_media_type (415: a content encoding other than gzip).
 */
export async function ingestOtlpTraces(
  ctx: SigningContext,
  input: { body: Buffer; encoding: OtlpEncoding; contentEncoding: string | null },
): Promise<{ body: Uint8Array | string; contentType: string; accepted: number; rejected: SpanRejection[] }> {
  authorize(ctx.actor, "events.write");
  const request = decodeOtlp(decompress(input.body, input.contentEncoding), input.encoding);
  const spans: SpanInput[] = readOtlpSpans(request).map((r) =>
    r.ok ? r.span : { label: r.label, message: r.message },
  );
  const { accepted, rejected } = await storeSpans(ctx, spans);
  const answer = encodeOtlpResponse(
    input.encoding,
    rejected.length ? { count: rejected.length, message: rejectionMessage(rejected) } : null,
  );
  return { ...answer, accepted, rejected };
}

function rejectionMessage(rejected: SpanRejection[]): string {
  const named = rejected.slice(0, NAMED_REJECTIONS).map((r) => `${r.label}: ${r.message}`);
  const more = rejected.length > NAMED_REJECTIONS ? `; and ${rejected.length - NAMED_REJECTIONS} more` : "";
  return `${rejected.length} span${rejected.length === 1 ? "" : "s"} rejected — ${named.join("; ")}${more}`;
}

/** The answer of the trace export intake. */
export type TraceExportResult = {
  /** Items stored, or found stored before (a resend stores nothing twice). */
  accepted: number;
  /** Items not stored, by position in `data`, with why. */
  rejected: Array<{ index: number; error: { code: "invalid_item"; message: string } }>;
};

/**
 * Stores an OpenAI Agents SDK trace export `{"data": [trace | span, …]}`. A span whose trace came in an earlier body
 * joins that trace's task (found by the trace's stored start event); a trace sent again is found, not stored twice.
 * @param input.body the parsed JSON body.
 * @throws DomainError forbidden (403: not a runtime key), validation_failed (422: not `{"data": [...]}`).
 */
export async function ingestAgentsTraceExport(
  ctx: SigningContext,
  input: { body: unknown },
): Promise<TraceExportResult> {
  authorize(ctx.actor, "events.write");
  const items = exportItems(input.body);
  const traceIds = [
    ...new Set([
      ...tracesToLookUp(items),
      ...items
        .map((i) => (i && typeof i === "object" ? (i as { object?: unknown; id?: unknown }) : {}))
        .filter((i) => i.object === "trace" && typeof i.id === "string")
        .map((i) => i.id as string),
    ]),
  ];
  const stored = traceIds.length
    ? await queryRows<{ event_id: string; task_id: string }>(
        ctx.db,
        sql`select event_id, task_id from events where tenant_id = ${ctx.actor.tenantId} and event_id in (${sql.join(
          traceIds.map((t) => sql`${`${traceIdBase(t)}:span`}`),
          sql`, `,
        )})`,
      )
    : [];
  const known = new Map<string, string>();
  for (const t of traceIds) {
    const row = stored.find((r) => r.event_id === `${traceIdBase(t)}:span`);
    if (row) known.set(t, row.task_id);
  }
  const read = readExportItems(items, known, new Date().toISOString());
  // A trace already stored keeps its first record (its time was the server's when it had no span to date it by).
  const fresh = read.map((s) =>
    "meaning" in s &&
    s.meaning.kind === "other" &&
    s.meaning.type === "x.workflow.started" &&
    known.has(String(s.origin.trace_id))
      ? null
      : s,
  );
  const { rejected } = await storeSpans(
    ctx,
    fresh.filter((s): s is SpanInput => s !== null),
  );
  // Positions in what was stored back to positions in `data`.
  const positions = fresh.flatMap((s, i) => (s === null ? [] : [i]));
  return {
    accepted: items.length - rejected.length,
    rejected: rejected.map((r) => ({
      index: positions[r.index]!,
      error: {
        code: "invalid_item",
        message: r.message.startsWith("item ") ? r.message : `item ${positions[r.index]}: ${r.message}`,
      },
    })),
  };
}
