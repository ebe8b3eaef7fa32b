/**
 * Trace intake on real PostgreSQL through the built server (decision 0039): the captured OTLP/JSON GenAI fixture, spans
 * exported by the real OpenTelemetry exporters (`@opentelemetry/exporter-trace-otlp-proto` and `-http`) and by the
 * OpenAI Agents SDK's own exporter pointed at `/api/v1/traces/ingest`; the run on the four-lane timeline with paired tool
 * calls; an interrupted `execute_tool` of a mutating tool stopping the gate with `side_effect_unknown`; resends that
 * store nothing twice; the bad-input answers of OTLP/HTTP; wrong role and wrong tenant.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { Field, Type } from "protobufjs";
import { beforeAll, describe, expect, it } from "vitest";

/** `EXPORT_SUCCESS` of @opentelemetry/core (what an exporter reports when the receiver took the spans). */
const EXPORT_SUCCESS = 0;
import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import {
  Agent,
  BatchTraceProcessor,
  getGlobalTraceProvider,
  OpenAITracingExporter,
  Runner,
  setTraceProcessors,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import { z } from "zod";
import { queryRows } from "@/db";
import type { StoredEvent, TimelinePage } from "@/lib/contract/api";
import { sortEvents } from "@/components/timeline/model/events";
import { deriveToolCallBars } from "@/components/timeline/model/tool-calls";
import { ScriptedTurnsModel } from "../support/sdk-run-states";
import { askGate } from "./support/custody-calls";
import { signInAs } from "./support/people";
import { api, baseUrl, createTestTenant, newTaskId, testDbForFile, type Auth, type FullTestTenant } from "./helpers";

const handle = testDbForFile();
const FIXTURE = path.join("/work/shared/fixtures/real/otel-genai", "otel-util-genai-chat-toolcall.otlp.json");
const StatusType = new Type("Status").add(new Field("code", 1, "int32")).add(new Field("message", 2, "string"));

let t: FullTestTenant;
beforeAll(async () => {
  t = await createTestTenant(handle.db);
});

/** POST a raw OTLP body. */
async function postOtlp(
  key: string | undefined,
  body: Buffer | string,
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; bytes: Buffer; headers: Headers; json: () => Record<string, unknown> }> {
  const res = await fetch(`${baseUrl()}/api/v1/traces`, {
    method: "POST",
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    bytes,
    headers: res.headers,
    json: () => JSON.parse(bytes.toString("utf8")) as Record<string, unknown>,
  };
}

async function eventRows(tenantId: string, taskId: string) {
  return queryRows<{
    event_id: string;
    plane: string;
    type: string;
    attempt: number | null;
    attrs: Record<string, unknown>;
    redaction_count: number;
  }>(
    handle.db,
    sql`select event_id, plane, type, attempt, attrs, redaction_count from events
        where tenant_id = ${tenantId} and task_id = ${taskId} order by seq`,
  );
}

async function countEvents(tenantId: string): Promise<number> {
  const [r] = await queryRows<{ n: string }>(
    handle.db,
    sql`select count(*) as n from events where tenant_id = ${tenantId}`,
  );
  return Number(r!.n);
}

async function timeline(auth: Auth, taskId: string): Promise<StoredEvent[]> {
  const res = await api(auth).get<TimelinePage>(`/api/v1/tasks/${encodeURIComponent(taskId)}/timeline?limit=1000`);
  expect(res.status, res.text).toBe(200);
  return res.body.events;
}

/** Exports spans through an exporter and waits for its answer. */
function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(spans, (r) => resolve(r)));
}

/** A tracer whose ended spans are kept in memory (to be exported, and exported again, by the OTLP exporters). */
function memoryTracer(resource: Record<string, string | number>): { tracer: Tracer; memory: InMemorySpanExporter } {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "support-agent", ...resource }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  return { tracer: provider.getTracer("test-genai"), memory };
}

/**
 * One agent run as GenAI-instrumented frameworks report it: invoke_agent → chat (asking for a tool call in
 * gen_ai.output.messages) → execute_tool (the same call id, arguments holding a secret) → chat.
 */
function genAiRun(tracer: Tracer, callId: string): void {
  tracer.startActiveSpan(
    "invoke_agent support",
    {
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "gen_ai.agent.version": "7",
      },
    },
    (agent) => {
      const chat = tracer.startSpan("chat gpt-4o-mini", {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-4o-mini",
          "gen_ai.usage.input_tokens": 40,
          "gen_ai.output.messages": JSON.stringify([
            {
              role: "assistant",
              parts: [{ type: "tool_call", id: callId, name: "lookup_order", arguments: { order_id: "A-1" } }],
            },
          ]),
        },
      });
      chat.end();
      const exec = tracer.startSpan("execute_tool lookup_order", {
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "lookup_order",
          "gen_ai.tool.type": "function",
          "gen_ai.tool.call.id": callId,
          "gen_ai.tool.call.arguments": JSON.stringify({
            order_id: "A-1",
            api_key: "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
          }),
          "gen_ai.tool.call.result": JSON.stringify({ status: "shipped" }),
          "custody.flags": [1, 2, 3],
          "custody.ratio": 0.5,
          "custody.ok": true,
        },
      });
      exec.end();
      tracer.startSpan("chat gpt-4o-mini", { attributes: { "gen_ai.operation.name": "chat" } }).end();
      agent.end();
    },
  );
}

describe("OTLP/HTTP: POST /api/v1/traces", () => {
  it("stores the captured GenAI fixture (chat span with a tool call in gen_ai.output.messages), plain and gzip, once", async () => {
    const body = fs.readFileSync(FIXTURE);
    const first = await postOtlp(t.apiKey, body);
    expect(first.status, first.bytes.toString()).toBe(200);
    expect(first.json()).toEqual({});
    const taskId = "053074667b1113278073667614bb3e19"; // no conversation id or custody.task_id: the trace id
    const rows = await eventRows(t.tenantId, taskId);
    expect(rows.map((r) => `${r.plane}/${r.type}`)).toEqual(["session/x.model.called", "tools/tool.called"]);
    expect(rows[0]!.attrs).toMatchObject({
      operation: "chat",
      model: "gpt-4o-mini-2024-07-18",
      provider: "openai",
      input_tokens: 412,
    });
    expect(rows[1]!.attrs).toMatchObject({
      call_id: "call_9RtYbK2mXqLp",
      tool: "lookup_order",
      arguments: { order_id: "A-1187" },
    });
    const before = await countEvents(t.tenantId);
    const again = await postOtlp(t.apiKey, gzipSync(body), {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual({});
    expect(await countEvents(t.tenantId)).toBe(before);
  });

  /**
   * The protobuf exporter is configured only by the environment variables the README documents, with gzip (what the
   * Collector's `otlphttp` exporter sends by default: protobuf, gzip, `/v1/traces` after the endpoint, here the bare
   * host); the JSON one by its constructor options, at `/api/v1/traces`.
   */
  const exporters: Array<[string, () => SpanExporter]> = [
    [
      "protobuf",
      () => {
        const env = {
          // The generic endpoint: the exporter appends /v1/traces to the bare host, as the Collector does.
          OTEL_EXPORTER_OTLP_ENDPOINT: baseUrl(),
          OTEL_EXPORTER_OTLP_TRACES_HEADERS: `Authorization=Bearer%20${t.apiKey}`,
          OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: "gzip",
        };
        Object.assign(process.env, env);
        try {
          return new ProtoExporter();
        } finally {
          for (const k of Object.keys(env)) delete process.env[k];
        }
      },
    ],
    [
      "JSON",
      () => new JsonExporter({ url: `${baseUrl()}/api/v1/traces`, headers: { authorization: `Bearer ${t.apiKey}` } }),
    ],
  ];
  for (const [name, makeExporter] of exporters) {
    it(`the real ${name} OTLP exporter reports a run: four lanes, paired tool call, redacted arguments, resend stores nothing`, async () => {
      const taskId = newTaskId();
      const { tracer, memory } = memoryTracer({ "custody.task_id": taskId });
      genAiRun(tracer, `call_${name}_1`);
      const spans = memory.getFinishedSpans();
      expect(spans).toHaveLength(4);
      const exporter = makeExporter();
      const result = await exportWith(exporter, spans);
      expect(result.code, String(result.error)).toBe(EXPORT_SUCCESS);

      const events = await timeline(t.apiKey, taskId);
      const types = events.map((e) => `${e.plane}/${e.type}`).sort();
      expect(types).toEqual(
        [
          "session/x.agent.started",
          "session/x.agent.ended",
          "session/x.model.called",
          "session/x.model.called",
          "tools/tool.called",
          "tools/tool.completed",
        ].sort(),
      );
      const started = events.find((e) => e.type === "x.agent.started")!;
      expect(started.attrs).toMatchObject({ agent: "support", agent_version: "7", source: "otlp" });
      // One tool.called for the call (the model asked for it, the tool span ran it), paired with its outcome.
      const bars = deriveToolCallBars(sortEvents(events), Date.now());
      expect(bars).toHaveLength(1);
      expect(bars[0]).toMatchObject({ callId: `call_${name}_1`, tool: "lookup_order", status: "completed" });
      const rows = await eventRows(t.tenantId, taskId);
      const completed = rows.find((r) => r.type === "tool.completed")!;
      expect(completed.attrs.result).toEqual({ status: "shipped" });
      const spanAttrs = (completed.attrs.span as { attributes: Record<string, unknown> }).attributes;
      expect(spanAttrs["custody.flags"]).toEqual([1, 2, 3]);
      expect(spanAttrs["custody.ratio"]).toBe(0.5);
      expect(spanAttrs["custody.ok"]).toBe(true);
      expect(JSON.stringify(rows)).not.toContain("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789");
      expect(rows.reduce((n, r) => n + r.redaction_count, 0)).toBeGreaterThan(0);

      // An exporter's retry: the same spans again store nothing.
      const before = await countEvents(t.tenantId);
      expect((await exportWith(exporter, spans)).code).toBe(EXPORT_SUCCESS);
      expect(await countEvents(t.tenantId)).toBe(before);
      await exporter.shutdown();
    });
  }

  it("an execute_tool of a policy-mutating tool that never ended, in a run that was interrupted, stops the gate (side_effect_unknown)", async () => {
    const owner = await signInAs(t, "owner");
    const policy = await api(owner).post<{ version: number; valid: boolean }>("/api/v1/policies", {
      network: { access: "open" },
      credentials: [],
      tools: [{ name: "refund_payment", mutation: true }],
    });
    expect(policy.body.valid, policy.text).toBe(true);
    expect((await api(owner).request("POST", `/api/v1/policies/${policy.body.version}/activate`)).status).toBe(200);

    const taskId = newTaskId();
    const { tracer, memory } = memoryTracer({ "custody.task_id": taskId, "custody.attempt": 1 });
    tracer.startActiveSpan(
      "invoke_agent refunds",
      { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds" } },
      (agent) => {
        tracer
          .startSpan("chat", {
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.output.messages": JSON.stringify([
                {
                  role: "assistant",
                  parts: [
                    { type: "tool_call", id: "call_refund_1", name: "refund_payment", arguments: { amount: 40 } },
                  ],
                },
              ]),
            },
          })
          .end();
        // The tool's span starts and never ends: the process was cut off while refunding.
        tracer.startSpan("execute_tool refund_payment", {
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "refund_payment",
            "gen_ai.tool.call.id": "call_refund_1",
          },
        });
        agent.setStatus({ code: SpanStatusCode.ERROR, message: "worker interrupted (SIGTERM)" });
        agent.end();
      },
    );
    const exporter = new ProtoExporter({
      url: `${baseUrl()}/api/v1/traces`,
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect((await exportWith(exporter, memory.getFinishedSpans())).code).toBe(EXPORT_SUCCESS);
    await exporter.shutdown();

    const rows = await eventRows(t.tenantId, taskId);
    expect(rows.map((r) => r.type)).toContain("run.interrupted");
    const called = rows.find((r) => r.type === "tool.called")!;
    expect(called.attrs).toMatchObject({ call_id: "call_refund_1", mutation: true });
    expect(called.attempt).toBe(1);
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.verdict).toBe("stop");
    expect(gate.body.reasons.map((r) => r.code)).toContain("side_effect_unknown");
  });

  it("a span attribute marks a tool mutating; a span exported open (no end) is a call without an outcome", async () => {
    const taskId = newTaskId();
    const traceId = "5b8efff798038103d269b633813fc60c";
    const ns = (ms: number) => String(BigInt(ms) * BigInt(1_000_000));
    const now = Date.now() - 60_000;
    const span = (
      spanId: string,
      name: string,
      attrs: Record<string, unknown>,
      start: number,
      end: number | null,
      status?: unknown,
    ) => ({
      traceId,
      spanId,
      name,
      kind: 1,
      startTimeUnixNano: ns(start),
      ...(end === null ? {} : { endTimeUnixNano: ns(end) }),
      attributes: Object.entries(attrs).map(([key, v]) => ({
        key,
        value:
          typeof v === "boolean"
            ? { boolValue: v }
            : typeof v === "number"
              ? { intValue: String(v) }
              : { stringValue: String(v) },
      })),
      ...(status ? { status } : {}),
    });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "custody.task_id", value: { stringValue: taskId } }] },
          scopeSpans: [
            {
              spans: [
                span(
                  "1111111111111111",
                  "execute_tool wire_funds",
                  {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "wire_funds",
                    "gen_ai.tool.call.id": "call_w1",
                    "custody.mutation": true,
                  },
                  now,
                  null,
                ),
                span(
                  "2222222222222222",
                  "invoke_agent payer",
                  { "gen_ai.operation.name": "invoke_agent" },
                  now - 10,
                  now + 10,
                  {
                    code: "STATUS_CODE_ERROR",
                    message: "cancelled",
                  },
                ),
              ],
            },
          ],
        },
      ],
    };
    const res = await postOtlp(t.apiKey, JSON.stringify(body));
    expect(res.status, res.bytes.toString()).toBe(200);
    expect(res.json()).toEqual({});
    const gate = await askGate(t.apiKey, taskId);
    expect(gate.body.reasons.map((r) => r.code)).toContain("side_effect_unknown");
  });

  it("rejects spans with bad ids or times in partialSuccess and stores the rest; OpenInference and Vercel AI SDK shapes", async () => {
    const taskId = newTaskId();
    const good = (spanId: string, attrs: Array<{ key: string; value: unknown }>) => ({
      traceId: "aaaabbbbccccddddeeeeffff00001111",
      spanId,
      name: "x",
      kind: "SPAN_KIND_INTERNAL",
      startTimeUnixNano: "1764000000000000000",
      endTimeUnixNano: "1764000001000000000",
      attributes: [{ key: "custody.task_id", value: { stringValue: taskId } }, ...attrs],
    });
    const body = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { ...good("0000000000000001", []), traceId: "not-hex" },
                { ...good("00000000000000", []) },
                { ...good("0000000000000003", []), startTimeUnixNano: "soon" },
                good("0000000000000004", [
                  { key: "openinference.span.kind", value: { stringValue: "LLM" } },
                  {
                    key: "llm.output_messages.0.message.tool_calls.0.tool_call.id",
                    value: { stringValue: "oi_call_1" },
                  },
                  {
                    key: "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                    value: { stringValue: "search_docs" },
                  },
                  {
                    key: "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
                    value: { stringValue: '{"q":"refunds"}' },
                  },
                  { key: "custody.blob", value: { bytesValue: "AAEC" } },
                  { key: "custody.kv", value: { kvlistValue: { values: [{ key: "a", value: { intValue: 5 } }] } } },
                ]),
                good("0000000000000005", [
                  { key: "operation.name", value: { stringValue: "ai.toolCall" } },
                  { key: "ai.operationId", value: { stringValue: "ai.toolCall" } },
                  { key: "ai.toolCall.name", value: { stringValue: "search_docs" } },
                  { key: "ai.toolCall.id", value: { stringValue: "oi_call_1" } },
                  {
                    key: "ai.toolCall.args",
                    value: { stringValue: '{"q":"refunds","password":"hunter2-secret-value"}' },
                  },
                  { key: "ai.toolCall.result", value: { stringValue: '"3 hits"' } },
                ]),
                good("0000000000000006", [{ key: "http.route", value: { stringValue: "/unknown" } }]),
              ],
            },
          ],
        },
      ],
    };
    const res = await postOtlp(t.apiKey, JSON.stringify(body));
    expect(res.status).toBe(200);
    const partial = res.json().partialSuccess as { rejectedSpans: string; errorMessage: string };
    expect(partial.rejectedSpans).toBe("3");
    expect(partial.errorMessage).toContain("traceId must be 32 hex digits");
    expect(partial.errorMessage).toContain("spanId must be 16 hex digits");
    expect(partial.errorMessage).toContain("startTimeUnixNano");
    const rows = await eventRows(t.tenantId, taskId);
    expect(rows.map((r) => r.type)).toEqual(["x.model.called", "tool.called", "tool.completed", "x.otel.span"]);
    expect(rows[1]!.attrs).toMatchObject({ call_id: "oi_call_1", tool: "search_docs", arguments: { q: "refunds" } });
    expect(rows[2]!.attrs).toMatchObject({ call_id: "oi_call_1", result: "3 hits" });
    const kept = (rows[0]!.attrs.span as { attributes: Record<string, unknown> }).attributes;
    expect(kept["custody.blob"]).toEqual({ bytes_base64: "AAEC" });
    expect(kept["custody.kv"]).toEqual({ a: 5 });
    expect(JSON.stringify(rows)).not.toContain("hunter2-secret-value");
    const bars = deriveToolCallBars(sortEvents(await timeline(t.apiKey, taskId)), Date.now());
    expect(bars.map((b) => b.status)).toEqual(["completed"]);
  });

  it("answers bad bodies with a Status: 400 (not what the type says), 413, 415; protobuf errors in protobuf", async () => {
    const before = await countEvents(t.tenantId);
    const notJson = await postOtlp(t.apiKey, "{nope");
    expect(notJson.status).toBe(400);
    expect(notJson.json()).toMatchObject({ code: 3 });
    expect(String(notJson.json().message)).toContain("not valid JSON");

    const notProto = await postOtlp(t.apiKey, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), {
      "content-type": "application/x-protobuf",
    });
    expect(notProto.status).toBe(400);
    expect(notProto.headers.get("content-type")).toBe("application/x-protobuf");
    const status = StatusType.toObject(StatusType.decode(notProto.bytes)) as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toContain("protobuf");

    const notGzip = await postOtlp(t.apiKey, "{}", { "content-type": "application/json", "content-encoding": "gzip" });
    expect(notGzip.status).toBe(400);

    const big = await postOtlp(t.apiKey, Buffer.alloc(4 * 1024 * 1024 + 10, 0x20));
    expect(big.status).toBe(413);
    expect(big.json()).toMatchObject({ code: 8 });
    const bomb = await postOtlp(t.apiKey, gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20)), {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    expect(bomb.status).toBe(413);

    const text = await postOtlp(t.apiKey, "hello", { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect(text.json()).toMatchObject({ code: 3 });
    const brotli = await postOtlp(t.apiKey, "{}", { "content-type": "application/json", "content-encoding": "br" });
    expect(brotli.status).toBe(415);
    expect(await countEvents(t.tenantId)).toBe(before);
  });

  it("wrong credentials: 401 without a key, 403 for a person; another tenant's key stores in its own tenant only", async () => {
    const body = fs.readFileSync(FIXTURE);
    const none = await postOtlp(undefined, body);
    expect(none.status).toBe(401);
    expect(none.json()).toMatchObject({ code: 16 });
    const owner = await signInAs(t, "owner");
    const person = await postOtlp(undefined, body, { "content-type": "application/json", cookie: owner.cookie });
    expect(person.status).toBe(403);
    expect(person.json()).toMatchObject({ code: 7 });

    const other = await createTestTenant(handle.db);
    const taskId = "053074667b1113278073667614bb3e19";
    const mine = (await eventRows(t.tenantId, taskId)).length;
    expect((await postOtlp(other.apiKey, body)).status).toBe(200);
    expect((await eventRows(other.tenantId, taskId)).length).toBe(2);
    expect((await eventRows(t.tenantId, taskId)).length).toBe(mine);
    expect((await api(other.apiKey).get(`/api/v1/tasks/${taskId}/timeline`)).status).toBe(200);
  });
});

describe("OpenAI Agents SDK trace export: POST /api/v1/traces/ingest", () => {
  it("the SDK's own exporter reports a run (group_id names the task; a resumed run joins it): agent, paired function call; a resend stores nothing", async () => {
    const taskId = newTaskId();
    setTracingDisabled(false);
    const exporter = new OpenAITracingExporter({ apiKey: t.apiKey, endpoint: `${baseUrl()}/api/v1/traces/ingest` });
    setTraceProcessors([new BatchTraceProcessor(exporter)]);
    const lookup = tool({
      name: "lookup",
      description: "Look a record up.",
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }) => `record ${id}: ok`,
    });
    const agent = new Agent({
      name: "records",
      instructions: "Look records up.",
      model: new ScriptedTurnsModel([[{ tool: "lookup", args: { id: "r-1" }, callId: "call_sdk_1" }]]),
      tools: [lookup],
    });
    const runner = new Runner({ groupId: taskId, workflowName: "records workflow" });
    await runner.run(agent, "look r-1 up");
    // The run resumed later (a new trace, the same group id) joins the same task.
    const resumed = new Agent({
      name: "records",
      instructions: "Done.",
      model: new ScriptedTurnsModel([]),
      tools: [lookup],
    });
    await new Runner({ groupId: taskId, workflowName: "records workflow" }).run(resumed, "anything else?");
    await getGlobalTraceProvider().forceFlush();
    setTracingDisabled(true);

    const events = await timeline(t.apiKey, taskId);
    const types = events.map((e) => e.type);
    expect(types.filter((x) => x === "x.workflow.started")).toHaveLength(2);
    expect(types).toContain("x.agent.started");
    expect(types).toContain("x.agent.ended");
    const bars = deriveToolCallBars(sortEvents(events), Date.now());
    expect(bars).toHaveLength(1);
    expect(bars[0]).toMatchObject({ tool: "lookup", status: "completed" });
    const completed = events.find((e) => e.type === "tool.completed")!;
    expect(completed.attrs.result).toBe("record r-1: ok");

    // The same items sent again (as the exporter's retry would): nothing new.
    const rows = await eventRows(t.tenantId, taskId);
    const before = await countEvents(t.tenantId);
    const workflow = rows.find((r) => r.type === "x.workflow.started")!;
    const resend = await api(t.apiKey).post<{ accepted: number; rejected: unknown[] }>("/api/v1/traces/ingest", {
      data: [
        {
          object: "trace",
          id: workflow.attrs.trace_id,
          workflow_name: "records workflow",
          group_id: taskId,
          metadata: {},
        },
      ],
    });
    expect(resend.status, resend.text).toBe(200);
    expect(resend.body).toEqual({ accepted: 1, rejected: [] });
    expect(await countEvents(t.tenantId)).toBe(before);
  });

  it("rejects bad items by position and stores the rest; a later span joins its trace's task; unknown types kept", async () => {
    const taskId = newTaskId();
    const traceId = `trace_${"a".repeat(32)}`;
    const first = await api(t.apiKey).post<{
      accepted: number;
      rejected: Array<{ index: number; error: { message: string } }>;
    }>("/api/v1/traces/ingest", {
      data: [
        { object: "trace", id: traceId, workflow_name: "w", group_id: null, metadata: { task_id: taskId } },
        { object: "something" },
        { object: "trace.span", trace_id: traceId, started_at: "2026-11-01T10:00:00.000Z" },
        {
          object: "trace.span",
          id: "span_1",
          trace_id: traceId,
          started_at: "2026-11-01T10:00:00.000Z",
          ended_at: "2026-11-01T10:00:01.000Z",
          span_data: { type: "future_thing", payload: { password: "hunter2-secret-value" } },
          error: null,
        },
      ],
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.accepted).toBe(2);
    expect(first.body.rejected.map((r) => r.index)).toEqual([1, 2]);
    // A span of the same trace in a later body: it joins the task its trace named.
    const later = await api(t.apiKey).post<{ accepted: number }>("/api/v1/traces/ingest", {
      data: [
        {
          object: "trace.span",
          id: "span_2",
          trace_id: traceId,
          parent_id: null,
          started_at: "2026-11-01T10:00:02.000Z",
          ended_at: "2026-11-01T10:00:03.000Z",
          span_data: { type: "function", name: "send_mail", input: '{"to":"a@example.com"}', output: null },
          error: { message: "SMTP refused", data: {} },
        },
      ],
    });
    expect(later.body.accepted).toBe(1);
    const rows = await eventRows(t.tenantId, taskId);
    expect(rows.map((r) => r.type)).toEqual(["x.workflow.started", "x.span", "tool.called", "tool.failed"]);
    expect(rows[1]!.attrs).toMatchObject({ span_type: "future_thing" });
    expect(JSON.stringify(rows)).not.toContain("hunter2-secret-value");
    expect(rows[3]!.attrs).toMatchObject({ error: "SMTP refused", tool: "send_mail" });
    expect((await api(t.apiKey).post("/api/v1/traces/ingest", { items: [] })).status).toBe(422);
  });
});
