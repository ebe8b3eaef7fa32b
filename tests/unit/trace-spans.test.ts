/**
 * Trace intake's pure parts (decision 0039): OTLP values of every kind, protobuf bodies decoded by the generated code
 * into the same shape as JSON, the span checks, what each emitter's span means, and the events a span makes.
 */
import { describe, expect, it } from "vitest";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { modelToolCalls, spanMeaning } from "@/lib/domain/traces/meaning";
import { anyValue, decodeOtlp, readOtlpSpans } from "@/lib/domain/traces/otlp";
import { fitted, spanEvents, type ReadSpan } from "@/lib/domain/traces/spans";

function sdkSpans() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("unit");
  tracer
    .startSpan("execute_tool get_weather", {
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": "call_1",
        "custody.task_id": "task-1",
        "custody.attempt": 2,
      },
    })
    .end();
  return memory.getFinishedSpans();
}

describe("OTLP bodies", () => {
  it("reads every AnyValue kind", () => {
    expect(anyValue({ stringValue: "a" })).toBe("a");
    expect(anyValue({ intValue: "42" })).toBe(42);
    expect(anyValue({ intValue: "18446744073709551615" })).toBe("18446744073709551615");
    expect(anyValue({ doubleValue: 0.25 })).toBe(0.25);
    expect(anyValue({ boolValue: false })).toBe(false);
    expect(anyValue({ bytesValue: "AAEC" })).toEqual({ bytes_base64: "AAEC" });
    expect(anyValue({ arrayValue: { values: [{ intValue: 1 }, { stringValue: "x" }] } })).toEqual([1, "x"]);
    expect(anyValue({ kvlistValue: { values: [{ key: "k", value: { boolValue: true } }] } })).toEqual({ k: true });
    expect(anyValue({})).toBeNull();
  });

  it("decodes a protobuf body (the SDK's own serializer) to the same spans as its JSON body", () => {
    const spans = sdkSpans();
    const fromProto = readOtlpSpans(
      decodeOtlp(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!), "protobuf"),
    );
    const fromJson = readOtlpSpans(decodeOtlp(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!), "json"));
    expect(fromProto).toEqual(fromJson);
    const read = fromProto[0]!;
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.span).toMatchObject({
      taskId: "task-1",
      attempt: 2,
      meaning: { kind: "tool", name: "get_weather", callId: "call_1" },
    });
    expect(read.span.idBase).toMatch(/^otel:[0-9a-f]{32}:[0-9a-f]{16}$/);
    expect(read.span.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("refuses bodies that are not what their type says", () => {
    expect(() => decodeOtlp(Buffer.from("[1,2]"), "json")).toThrow(/ExportTraceServiceRequest/);
    expect(() => decodeOtlp(Buffer.from("nope"), "json")).toThrow(/not valid JSON/);
    expect(() => decodeOtlp(Buffer.from([0xff, 0xff, 0xff]), "protobuf")).toThrow(/protobuf/);
  });
});

describe("what a span means", () => {
  it("reads tool calls from each emitter's output shape", () => {
    expect(
      modelToolCalls(
        {
          "gen_ai.output.messages": JSON.stringify([
            { role: "assistant", parts: [{ type: "tool_call", id: "a", name: "t1", arguments: { x: 1 } }] },
          ]),
          "ai.response.toolCalls": JSON.stringify([{ toolCallId: "b", toolName: "t2", input: '{"y":2}' }]),
          "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c",
          "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "t3",
          "gen_ai.completion.0.tool_calls.0.name": "t4",
        },
        "00000000000000aa",
      ),
    ).toEqual([
      { id: "a", name: "t1", args: { x: 1 } },
      { id: "b", name: "t2", args: { y: 2 } },
      { id: "c", name: "t3", args: undefined },
      { id: "00000000000000aa-3", name: "t4", args: undefined },
    ]);
  });

  it("keeps an unknown span as x.otel.span and reads agents from each convention", () => {
    expect(spanMeaning({ "http.route": "/x" }, "GET /x", "1")).toMatchObject({ kind: "other", type: "x.otel.span" });
    expect(spanMeaning({ "openinference.span.kind": "AGENT", "agent.name": "a" }, "x", "1")).toMatchObject({
      kind: "agent",
      name: "a",
    });
    expect(spanMeaning({ "gen_ai.operation.name": "invoke_agent" }, "invoke_agent planner", "1")).toMatchObject({
      kind: "agent",
      name: "planner",
    });
    expect(
      spanMeaning(
        { "traceloop.span.kind": "tool", "traceloop.entity.name": "t", "custody.mutation": "true" },
        "x",
        "1",
      ),
    ).toMatchObject({
      kind: "tool",
      name: "t",
      callId: "1",
      mutating: true,
    });
  });
});

describe("the events of a span", () => {
  const span = (over: Partial<ReadSpan>): ReadSpan => ({
    label: "s",
    idBase: "otel:t:s",
    taskId: "task",
    start: "2026-01-01T00:00:00.000000Z",
    end: "2026-01-01T00:00:01.000000Z",
    error: null,
    meaning: { kind: "tool", name: "Refund", callId: "c1", mutating: false },
    origin: { source: "otlp" },
    detail: {},
    ...over,
  });

  it("an ended tool span: called and completed; the policy's list (any case) marks the write; an open span only its call", () => {
    const events = spanEvents(span({}), new Set(["refund"]));
    expect(events.map((e) => [e.id, e.type])).toEqual([
      ["otel:t:s:called", "tool.called"],
      ["otel:t:s:completed", "tool.completed"],
    ]);
    expect(events[0]!.attrs).toMatchObject({ call_id: "c1", tool: "Refund", mutation: true });
    const open = spanEvents(span({ end: null }), new Set());
    expect(open.map((e) => e.type)).toEqual(["tool.called"]);
    // The start event is the same whether the span came open or ended: a resend after the end is a duplicate.
    expect(spanEvents(span({ end: null }), new Set(["refund"]))[0]).toEqual(events[0]);
  });

  it("an agent that ended in error interrupts the run", () => {
    const events = spanEvents(span({ meaning: { kind: "agent", name: "a" }, error: "killed" }), new Set());
    expect(events.map((e) => e.type)).toEqual(["x.agent.started", "run.interrupted"]);
    expect(events[1]!.attrs).toMatchObject({ reason: "killed", agent: "a" });
  });

  it("fits a large detail within its budget, cutting the largest entries first", () => {
    const out = fitted({ small: "x", big: "y".repeat(50_000), nested: { a: "z".repeat(30_000), b: 1 } }, 10_000);
    expect(JSON.stringify(out).length).toBeLessThanOrEqual(10_000);
    expect(out.small).toBe("x");
    expect(out.big).toBe("[cut: 50002 characters]");
  });
});
