/**
 * What an OpenTelemetry span means to custody, read from the attribute keys real emitters write (decision 0039):
 * - GenAI semantic conventions (`gen_ai.operation.name`: `invoke_agent`, `execute_tool`, `chat`, `text_completion`,
 *   `generate_content`, `embeddings`), as OpenAI Agents, Google ADK, CrewAI and Pydantic AI write them, with the tool
 *   keys `gen_ai.tool.name`, `gen_ai.tool.type`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`,
 *   `gen_ai.tool.call.result`, and the model's output in `gen_ai.output.messages` (a JSON string of messages whose
 *   parts of type `tool_call` are tool calls);
 * - OpenInference (`openinference.span.kind` AGENT / TOOL / LLM / EMBEDDING; `tool.name`, `tool_call.id`,
 *   `input.value`, `output.value`; tool calls flattened as `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.…`);
 * - the Vercel AI SDK (`ai.toolCall` spans with `ai.toolCall.name` / `.id` / `.args` / `.result`; model calls
 *   `ai.*.doGenerate` / `ai.*.doStream` with `ai.response.toolCalls`);
 * - OpenLLMetry (`traceloop.span.kind` agent / tool; `gen_ai.completion.<i>.tool_calls.<j>.…`).
 * Anything else is kept as an `x.otel.span` on the session plane. Pure.
 */
import { jsonish, type SpanMeaning } from "./spans";
import { parseJsonWithin } from "../json/text";

type Attrs = Record<string, unknown>;

const INFERENCE_OPS: ReadonlySet<string> = new Set(["chat", "text_completion", "generate_content", "embeddings"]);

/** The first of `keys` that holds a non-empty string (numbers are written as text). */
function text(attrs: Attrs, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = attrs[k];
    if (typeof v === "string" && v.trim() !== "") return v;
    if (typeof v === "number" || typeof v === "bigint") return String(v);
  }
  return undefined;
}

/** The first of `keys` present (any kind). */
function any(attrs: Attrs, ...keys: string[]): unknown {
  for (const k of keys) if (attrs[k] !== undefined && attrs[k] !== null) return attrs[k];
  return undefined;
}

/** True for `true` or the text `"true"`. */
function flag(v: unknown): boolean {
  return v === true || (typeof v === "string" && v.trim().toLowerCase() === "true");
}

/** The name after an operation prefix in a span name (`execute_tool get_weather` → `get_weather`). */
function afterPrefix(name: string, prefix: string): string | undefined {
  return name.startsWith(`${prefix} `) ? name.slice(prefix.length + 1).trim() || undefined : undefined;
}

/**
 * What one span means.
 * @param attrs the span's attributes, values decoded (./otlp.ts `anyValue`).
 * @param name the span's name; `spanId` its id in hex (the call id of a tool span that names none).
 */
export function spanMeaning(attrs: Attrs, name: string, spanId: string): SpanMeaning {
  const op = text(attrs, "gen_ai.operation.name");
  const oi = text(attrs, "openinference.span.kind")?.toUpperCase();
  const tl = text(attrs, "traceloop.span.kind")?.toLowerCase();
  const ai = text(attrs, "ai.operationId", "operation.name");

  if (op === "invoke_agent" || oi === "AGENT" || tl === "agent") {
    return {
      kind: "agent",
      name:
        text(attrs, "gen_ai.agent.name", "agent.name", "traceloop.entity.name") ?? afterPrefix(name, "invoke_agent"),
      id: text(attrs, "gen_ai.agent.id"),
      version: text(attrs, "gen_ai.agent.version", "custody.agent_version"),
      description: text(attrs, "gen_ai.agent.description"),
    };
  }
  if (op === "execute_tool" || oi === "TOOL" || tl === "tool" || ai?.startsWith("ai.toolCall")) {
    return {
      kind: "tool",
      name:
        text(attrs, "gen_ai.tool.name", "tool.name", "ai.toolCall.name", "traceloop.entity.name") ??
        afterPrefix(name, "execute_tool") ??
        name,
      callId: text(attrs, "gen_ai.tool.call.id", "tool_call.id", "ai.toolCall.id") ?? spanId,
      type: text(attrs, "gen_ai.tool.type"),
      args: jsonish(
        any(
          attrs,
          "gen_ai.tool.call.arguments",
          "tool_call.function.arguments",
          "ai.toolCall.args",
          "ai.toolCall.input",
          "gcp.vertex.agent.tool_call_args",
          "tool_arguments",
          "input.value",
          "traceloop.entity.input",
        ),
      ),
      result: jsonish(
        any(
          attrs,
          "gen_ai.tool.call.result",
          "ai.toolCall.result",
          "ai.toolCall.output",
          "gcp.vertex.agent.tool_response",
          "tool_response",
          "output.value",
          "traceloop.entity.output",
        ),
      ),
      mutating: flag(attrs["custody.mutation"]),
    };
  }
  const vercelModel = ai !== undefined && /^ai\.\w+\.do(Generate|Stream|Embed)/.test(ai);
  if ((op !== undefined && INFERENCE_OPS.has(op)) || oi === "LLM" || oi === "EMBEDDING" || vercelModel) {
    const model = stripUndefined({
      model: text(attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id"),
      provider: text(attrs, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "ai.model.provider"),
      response_id: text(attrs, "gen_ai.response.id", "ai.response.id"),
      input_tokens: any(
        attrs,
        "gen_ai.usage.input_tokens",
        "llm.token_count.prompt",
        "ai.usage.inputTokens",
        "ai.usage.promptTokens",
      ),
      output_tokens: any(
        attrs,
        "gen_ai.usage.output_tokens",
        "llm.token_count.completion",
        "ai.usage.outputTokens",
        "ai.usage.completionTokens",
      ),
      finish_reasons: any(attrs, "gen_ai.response.finish_reasons", "ai.response.finishReason"),
    });
    return {
      kind: "model",
      operation: op ?? ai ?? oi!.toLowerCase(),
      attrs: model,
      toolCalls: modelToolCalls(attrs, spanId),
    };
  }
  return { kind: "other", plane: "session", type: "x.otel.span", attrs: { span_name: name } };
}

type ToolCall = { id: string; name: string; args?: unknown };

/**
 * The tool calls a model span's output asks for, in output order, from whichever shape the emitter wrote. A call without
 * an id gets `<span id>-<n>` (it can then pair with no outcome, and says so by its id).
 */
export function modelToolCalls(attrs: Attrs, spanId: string): ToolCall[] {
  const calls: Array<{ id?: string; name?: string; args?: unknown }> = [];
  // GenAI semantic conventions: gen_ai.output.messages, a JSON string of {role, parts: [{type: "tool_call", …}]}.
  for (const msg of jsonArray(attrs["gen_ai.output.messages"])) {
    const parts = (msg as { parts?: unknown })?.parts;
    if (!Array.isArray(parts)) continue;
    for (const p of parts as Array<Record<string, unknown>>) {
      if (p && p.type === "tool_call") calls.push({ id: str(p.id), name: str(p.name), args: p.arguments });
    }
  }
  // The Vercel AI SDK: ai.response.toolCalls, a JSON string of {toolCallId, toolName, args | input}.
  for (const c of jsonArray(attrs["ai.response.toolCalls"]) as Array<Record<string, unknown>>) {
    if (c && typeof c === "object")
      calls.push({ id: str(c.toolCallId), name: str(c.toolName), args: c.args ?? c.input });
  }
  // Flattened: OpenInference llm.output_messages.<i>.message.tool_calls.<j>.tool_call.{id,function.name,function.arguments}
  // and OpenLLMetry gen_ai.completion.<i>.tool_calls.<j>.{id,name,arguments}.
  const flat = new Map<string, { id?: string; name?: string; args?: unknown }>();
  const FLAT = [
    /^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$/,
    /^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name|arguments)$/,
  ];
  for (const [k, v] of Object.entries(attrs)) {
    for (const re of FLAT) {
      const m = re.exec(k);
      if (!m) continue;
      const key = `${re === FLAT[0] ? "oi" : "tl"}.${m[1]!.padStart(6, "0")}.${m[2]!.padStart(6, "0")}`;
      const entry = flat.get(key) ?? {};
      if (m[3] === "id") entry.id = str(v);
      else if (m[3]!.endsWith("name")) entry.name = str(v);
      else entry.args = v;
      flat.set(key, entry);
    }
  }
  for (const key of [...flat.keys()].sort()) calls.push(flat.get(key)!);
  return calls
    .filter((c) => c.name !== undefined)
    .map((c, i) => ({ id: c.id ?? `${spanId}-${i}`, name: c.name!, args: jsonish(c.args) }));
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : typeof v === "number" ? String(v) : undefined;
}

function jsonArray(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v !== "string") return [];
  // Not JSON, or nested deeper than 32 levels (not parsed at all): no entries.
  const read = parseJsonWithin(v, 32);
  return read && Array.isArray(read.value) ? read.value : [];
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}
