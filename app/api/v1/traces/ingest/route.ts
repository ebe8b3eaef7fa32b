import { withSigningKey } from "@/lib/server/verb-context";
import { apiRoute, otherMethods, readJson, requireJsonContentType } from "@/lib/server/route";
import { ingestAgentsTraceExport } from "@/lib/domain/traces/ingest";

/** Largest trace export body accepted, in bytes. */
const MAX_EXPORT_BYTES = 4 * 1024 * 1024;

/**
 * POST /api/v1/traces/ingest — the OpenAI Agents SDK's trace export (its exporter's `endpoint`), `Authorization: Bearer
 * <runtime key>`, body `{"data": [trace | span, …]}` (JSON, at most 4 MiB).
 * → 200 `{"accepted": n, "rejected": [{"index", "error": {"code": "invalid_item", "message"}}]}`: an item that is neither
 * a trace nor a span, lacks its id, or makes an event the events path refuses is rejected by its position in `data`;
 * the rest is stored (a resent item stores nothing twice). Traces name the task (`group_id`, else `metadata.task_id`,
 * else the trace id); spans map onto the four planes by `span_data.type`.
 * Errors: 400 invalid_json, 401, 403 (not a runtime key), 413, 415 (not JSON), 422 validation_failed (not
 * `{"data": [...]}`), 503 database_unavailable. Source: decision 0039; docs/api.md#traces.
 */
export const POST = apiRoute(async ({ req, ctx }) => {
  requireJsonContentType(req);
  const body = await readJson(req, MAX_EXPORT_BYTES, { perItem: true });
  return ingestAgentsTraceExport(withSigningKey(ctx), { body });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
