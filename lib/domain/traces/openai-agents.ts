/**
 * The OpenAI Agents SDK's trace export read into spans (decision 0039): the body its exporter (`BackendSpanExporter` in
 * Python, `OpenAITracingExporter` in JavaScript) posts, `{"data": [trace | span, …]}`.
 * - a trace (`object: "trace"`, `id`, `workflow_name`, `group_id`, `metadata`) → `x.workflow.started`; it names the task
 *   of its spans: `group_id`, else `metadata.task_id`, else the trace id;
 * - a span (`object: "trace.span"`, `id`, `trace_id`, `parent_id`, `started_at`, `ended_at`, `span_data`, `error`), by
 *   `span_data.type`: `agent` → the session plane's run start and end (an error ends it as `run.interrupted`);
 *   `function` → `tool.called` and its outcome, the span id as call id (the SDK's function spans carry no call id);
 *   `generation` and `response` → `x.model.called`; `handoff` → `x.agent.handoff`; `guardrail` →
 *   `x.guardrail.checked`; `mcp_tools` → `x.mcp.tools_listed` (tools plane); `custom` and any other type → `x.span`,
 *   kept as sent.
 * An item that is neither a trace nor a span, or lacks its id, is rejected by its position. Pure.
 */
import { DomainError } from "../errors";
import { bounded, jsonish, type SpanMeaning } from "./spans";
import type { SpanInput } from "./store";

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : {});
const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);

/** Longest trace or span id accepted (the SDK's are `trace_` / `span_` and 32 or 24 hex digits). */
const MAX_ID = 120;

/** The items of a body, or 422 when it is not `{"data": [...]}`. */
export function exportItems(body: unknown): unknown[] {
  const data = rec(body).data;
  if (!Array.isArray(data))
    throw new DomainError("validation_failed", 'The body must be the trace export {"data": [trace | span, ...]}.', {
      fields: [{ path: "data", message: "an array of traces and spans" }],
    });
  return data;
}

/** The event id prefix of a trace: its stored start event names the task its later spans join. */
export function traceIdBase(traceId: string): string {
  return `oai:${traceId}`;
}

/** The trace ids whose task this body does not say (spans without their trace in the same body). */
export function tracesToLookUp(items: unknown[]): string[] {
  const here = new Set(items.filter((i) => rec(i).object === "trace").map((i) => str(rec(i).id)));
  const out = new Set<string>();
  for (const i of items) {
    const t = str(rec(i).trace_id);
    if (rec(i).object === "trace.span" && t && !here.has(t)) out.add(t);
  }
  return [...out];
}

/**
 * The items as spans, in body order.
 * @param known the task id of traces received before (by trace id), from their stored start events.
 * @param now the server's time, for a trace item (which carries none): the earliest start of its spans in the body when
 *   there is one.
 */
export function readExportItems(items: unknown[], known: ReadonlyMap<string, string>, now: string): SpanInput[] {
  const taskOf = new Map(known);
  const firstStart = new Map<string, string>();
  for (const i of items) {
    const it = rec(i);
    if (it.object === "trace" && str(it.id)) {
      const meta = rec(it.metadata);
      taskOf.set(it.id as string, str(it.group_id) ?? str(meta.task_id) ?? (it.id as string));
    }
    const t = str(it.trace_id);
    const s = str(it.started_at);
    if (t && s && (!firstStart.has(t) || s < firstStart.get(t)!)) firstStart.set(t, s);
  }
  return items.map((item, index): SpanInput => {
    const it = rec(item);
    const label = `item ${index}`;
    if (it.object === "trace") {
      const id = str(it.id);
      if (!id || id.length > MAX_ID)
        return { label, message: `item ${index}: a trace needs its id (1–${MAX_ID} characters)` };
      const meta = rec(it.metadata);
      return {
        label: `${label} (trace ${id})`,
        idBase: traceIdBase(id),
        taskId: taskOf.get(id)!,
        start: firstStart.get(id) ?? now,
        end: null,
        error: null,
        meaning: {
          kind: "other",
          plane: "session",
          type: "x.workflow.started",
          attrs: stripUndefined({ workflow_name: str(it.workflow_name), group_id: str(it.group_id) }),
        },
        origin: { source: "openai_agents", trace_id: id },
        detail: bounded({ metadata: meta }) as Rec,
      };
    }
    if (it.object === "trace.span") {
      const id = str(it.id);
      const traceId = str(it.trace_id);
      if (!id || id.length > MAX_ID)
        return { label, message: `item ${index}: a span needs its id (1–${MAX_ID} characters)` };
      if (!traceId || traceId.length > MAX_ID)
        return { label, message: `item ${index}: span ${id} needs its trace_id (1–${MAX_ID} characters)` };
      const start = str(it.started_at);
      if (!start) return { label, message: `item ${index}: span ${id} needs started_at (an ISO 8601 time)` };
      const data = rec(it.span_data);
      const error = it.error === null || it.error === undefined ? null : (str(rec(it.error).message) ?? "error");
      const meta = rec(Object.keys(data).length ? data : {});
      return {
        label: `${label} (span ${id})`,
        idBase: `oai:${traceId}:${id}`,
        taskId: taskOf.get(traceId) ?? traceId,
        start,
        end: str(it.ended_at) ?? null,
        error,
        meaning: spanDataMeaning(data, id),
        origin: stripUndefined({
          source: "openai_agents",
          trace_id: traceId,
          span_id: id,
          parent_span_id: str(it.parent_id),
          span_type: str(data.type) ?? "unknown",
        }),
        detail: bounded(error === null ? meta : { ...meta, error: it.error }) as Rec,
      };
    }
    return { label, message: `item ${index}: neither a trace (object "trace") nor a span (object "trace.span")` };
  });
}

/** What a span's `span_data` means, by its `type`. */
function spanDataMeaning(data: Rec, spanId: string): SpanMeaning {
  switch (data.type) {
    case "agent":
      return { kind: "agent", name: str(data.name) };
    case "function":
      return {
        kind: "tool",
        name: str(data.name) ?? "function",
        callId: spanId,
        type: "function",
        args: jsonish(data.input),
        result: jsonish(data.output),
        mutating: false,
      };
    case "generation":
      return {
        kind: "model",
        operation: "generation",
        attrs: stripUndefined({ model: str(data.model), usage: data.usage }),
        toolCalls: [],
      };
    case "response":
      return {
        kind: "model",
        operation: "response",
        attrs: stripUndefined({ response_id: str(data.response_id) }),
        toolCalls: [],
      };
    case "handoff":
      return {
        kind: "other",
        plane: "session",
        type: "x.agent.handoff",
        attrs: stripUndefined({ from_agent: str(data.from_agent), to_agent: str(data.to_agent) }),
      };
    case "guardrail":
      return {
        kind: "other",
        plane: "session",
        type: "x.guardrail.checked",
        attrs: stripUndefined({ guardrail: str(data.name), triggered: data.triggered === true }),
      };
    case "mcp_tools":
      return {
        kind: "other",
        plane: "tools",
        type: "x.mcp.tools_listed",
        attrs: stripUndefined({ server: str(data.server) }),
      };
    default:
      return {
        kind: "other",
        plane: "session",
        type: "x.span",
        attrs: stripUndefined({ span_type: str(data.type) ?? "unknown", name: str(data.name) }),
      };
  }
}

function stripUndefined(o: Rec): Rec {
  const out: Rec = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}
