/**
 * Spans as events (decision 0039): the one vocabulary both trace formats — OTLP (./otlp.ts) and the OpenAI Agents SDK's
 * trace export (./openai-agents.ts) — are read into, and how a read span becomes runtime events on the four planes.
 * Nothing here stores anything or decides custody: the events go through the events path (./store.ts → ingestEvents),
 * which owns dedupe, attempts, orphaned mutating calls, redaction, receive order and the boundary limits.
 * Pure: no database, no Next.
 */
import type { Plane } from "@/db/schema/enums";
import { parseJsonWithin } from "../json/text";

/** What a span means to custody, read from whichever attribute keys its emitter writes (./meaning.ts). */
export type SpanMeaning =
  | { kind: "agent"; name?: string; id?: string; version?: string; description?: string }
  | {
      kind: "tool";
      name: string;
      /** The id that pairs the call with its outcome; the span's own id when the emitter gave none. */
      callId: string;
      type?: string;
      args?: unknown;
      result?: unknown;
      /** The span itself says the tool writes outside the sandbox (`custody.mutation`). */
      mutating: boolean;
    }
  | {
      kind: "model";
      operation: string;
      attrs: Record<string, unknown>;
      /** Tool calls the model asked for (its output messages): each becomes a `tool.called`. */
      toolCalls: Array<{ id: string; name: string; args?: unknown }>;
    }
  | { kind: "other"; plane: Plane; type: `x.${string}`; attrs: Record<string, unknown> };

/** One span (or trace item) read and checked: everything the events are made from. */
export type ReadSpan = {
  /** How the answer names it when it is rejected (`span 0af7651916cd43dd (trace 4bf9…)`, `item 3`). */
  label: string;
  /** Prefix of its events' ids: the span's identity, so a resent span makes the same ids (the dedupe key). */
  idBase: string;
  taskId: string;
  attempt?: number;
  actor?: string;
  /** ISO 8601 times; `end` null when the span has not ended (it started and was exported open). */
  start: string;
  end: string | null;
  /** The span ended in error: the message it gave (empty when none). */
  error: string | null;
  meaning: SpanMeaning;
  /** Kept on every event of the span: where it came from (trace and span ids, source, span name). */
  origin: Record<string, unknown>;
  /** Kept on the event that records the whole span: its attributes (values cut to a bounded length). */
  detail: Record<string, unknown>;
};

/** An event input as `POST /api/v1/events` takes it (docs/concepts.md#events). */
export type EventInput = {
  id: string;
  task_id: string;
  plane: Plane;
  type: string;
  occurred_at: string;
  attempt?: number;
  actor?: string;
  attrs: Record<string, unknown>;
};

/** Longest string kept of a span attribute, tool argument or result (longer ones are cut, marked with `…`). */
export const MAX_KEPT_STRING = 8 * 1024;

/** A value with every string cut to {@link MAX_KEPT_STRING} characters (deterministic: a resend cuts the same). */
export function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === "string")
    return value.length > MAX_KEPT_STRING ? `${value.slice(0, MAX_KEPT_STRING)}…[cut]` : value;
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => bounded(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = bounded(v, depth + 1);
  return out;
}

/** The most of an event's attrs a span's kept detail may take (the events path refuses attrs over 64 KiB). */
export const DETAIL_BUDGET = 40 * 1024;

/**
 * `value` within `budget` characters of JSON: the largest entries are cut first (an object entry is fitted inside,
 * anything else becomes `"[cut: n characters]"`), so what is small survives whole. Deterministic.
 */
export function fitted(value: Record<string, unknown>, budget = DETAIL_BUDGET): Record<string, unknown> {
  const out = { ...value };
  const size = (v: unknown) => JSON.stringify(v)?.length ?? 0;
  let total = size(out);
  for (let guard = 0; total > budget && guard < 64; guard++) {
    let largest: string | undefined;
    for (const k of Object.keys(out)) if (largest === undefined || size(out[k]) > size(out[largest])) largest = k;
    if (largest === undefined) break;
    const v = out[largest];
    const before = size(v);
    const excess = total - budget;
    out[largest] =
      v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 1 && before - excess > 200
        ? fitted(v as Record<string, unknown>, before - excess)
        : `[cut: ${before} characters]`;
    total = size(out);
  }
  return out;
}

/** A tool's arguments or result within 12 KiB of JSON ({@link fitted}). */
function fitValue(v: unknown): unknown {
  const n = JSON.stringify(v)?.length ?? 0;
  if (n <= 12 * 1024) return v;
  return v && typeof v === "object" && !Array.isArray(v)
    ? fitted(v as Record<string, unknown>, 12 * 1024)
    : `[cut: ${n} characters]`;
}

/**
 * A JSON text parsed when it is an object, array or string (so redaction sees its fields), else the value bounded.
 * A text that is not JSON, or is nested deeper than 32 levels, is kept as the (bounded) text it is: too deep is not
 * parsed at all.
 */
export function jsonish(value: unknown): unknown {
  if (typeof value === "string" && /^\s*[[{"]/.test(value)) {
    const read = parseJsonWithin(value, 32);
    if (read) return bounded(read.value);
  }
  return bounded(value);
}

/**
 * The events of one read span, in the order they happened (a start before its end):
 * - agent → `x.agent.started`, then at its end `x.agent.ended`, or `run.interrupted` when it ended in error (the
 *   attempt it names, or every attempt so far, ends: its mutating calls without an outcome become unknown effects);
 * - tool → `tool.called` (with `mutation: true` when `mutating` names the tool or the span says so), then
 *   `tool.completed` or `tool.failed`, paired by `call_id`;
 * - model → `x.model.called` on the session plane, and a `tool.called` for each tool call in its output;
 * - other → its own `x.` type, kept whole.
 * Only what is known when the span starts goes into its start event, so a span exported open and later again ended
 * makes the same start event (a duplicate) and adds its end.
 * @param mutating canonical (lower-case) names of the tools the policy marks `mutation: true`.
 */
export function spanEvents(span: ReadSpan, mutating: ReadonlySet<string>): EventInput[] {
  span = { ...span, detail: fitted(span.detail) };
  const base = stripUndefined({ task_id: span.taskId, attempt: span.attempt, actor: span.actor }) as Pick<
    EventInput,
    "task_id" | "attempt" | "actor"
  >;
  const at = (suffix: string, plane: Plane, type: string, occurred_at: string, attrs: Record<string, unknown>) => ({
    ...base,
    id: `${span.idBase}:${suffix}`,
    plane,
    type,
    occurred_at,
    attrs: { ...span.origin, ...attrs },
  });
  const m = span.meaning;
  const out: EventInput[] = [];
  const ended = span.end === null ? {} : { ended_at: span.end };
  switch (m.kind) {
    case "agent": {
      const who = stripUndefined({
        agent: m.name,
        agent_id: m.id,
        agent_version: m.version,
        description: m.description,
      });
      out.push(at("start", "session", "x.agent.started", span.start, who));
      if (span.end !== null) {
        const detail = { ...who, started_at: span.start, span: span.detail };
        out.push(
          span.error === null
            ? at("end", "session", "x.agent.ended", span.end, detail)
            : at("end", "session", "run.interrupted", span.end, { ...detail, reason: span.error || "error" }),
        );
      }
      break;
    }
    case "tool": {
      const call = { call_id: m.callId, tool: m.name };
      const writes = m.mutating || mutating.has(m.name.toLowerCase());
      out.push(
        at(
          "called",
          "tools",
          "tool.called",
          span.start,
          stripUndefined({
            ...call,
            tool_type: m.type,
            arguments: fitValue(m.args),
            ...(writes ? { mutation: true } : {}),
          }),
        ),
      );
      if (span.end !== null) {
        const detail = { ...call, started_at: span.start, span: span.detail };
        out.push(
          span.error === null
            ? at(
                "completed",
                "tools",
                "tool.completed",
                span.end,
                stripUndefined({ ...detail, result: fitValue(m.result) }),
              )
            : at(
                "failed",
                "tools",
                "tool.failed",
                span.end,
                stripUndefined({ ...detail, error: span.error || "error", result: fitValue(m.result) }),
              ),
        );
      }
      break;
    }
    case "model": {
      out.push(
        at("model", "session", "x.model.called", span.start, {
          operation: m.operation,
          ...m.attrs,
          ...ended,
          ...(span.error === null ? {} : { error: span.error || "error" }),
          span: span.detail,
        }),
      );
      m.toolCalls.forEach((c, i) => {
        const writes = mutating.has(c.name.toLowerCase());
        out.push(
          at(
            `call:${i}`,
            "tools",
            "tool.called",
            span.end ?? span.start,
            stripUndefined({
              call_id: c.id,
              tool: c.name,
              arguments: fitValue(c.args),
              asked_by: "model",
              ...(writes ? { mutation: true } : {}),
            }),
          ),
        );
      });
      break;
    }
    case "other":
      out.push(
        at("span", m.plane, m.type, span.start, {
          ...m.attrs,
          ...ended,
          ...(span.error === null ? {} : { error: span.error || "error" }),
          span: span.detail,
        }),
      );
      break;
  }
  return out;
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}
