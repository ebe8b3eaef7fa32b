/**
 * Tool-call bars of the Tools lane: each call paired with its outcome by call id, or the reason it has none.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/tool-calls.test.ts.
 */
import type { SideEffectView } from "@/lib/contract/api";
import type { TimedEvent } from "./events";
import { sideEffectNameOf } from "./outcome";
import { packRows } from "./rows";

/**
 * Where a tool call stands: `completed` / `failed` by its outcome event; without one, `pending` while its attempt
 * goes on, and once the attempt has ended `unknown` for a mutating call (the write may or may not have happened) or
 * `no_result` for a read (nothing to fear, nothing recorded). A call is mutating when it says so
 * (`attrs.mutation === true`) or when it is the call of a declared effect: a `side_effect.intent` of the same attempt,
 * after the call, names its call id, or (naming none) its tool, and is not marked `mutation: false`. An unknown call
 * of an effect a person has since reconciled (the effect is no longer `unknown`) is `reconciled`.
 */
export type ToolCallStatus = "completed" | "failed" | "pending" | "unknown" | "reconciled" | "no_result";

/** One tool call drawn as a bar in the Tools lane, from `tool.called` to its outcome. */
export type ToolCallBar = {
  callId: string;
  /** `attrs.tool`, else `attrs.name`, else null. */
  tool: string | null;
  attempt: number | null;
  environmentId: string | null;
  mutation: boolean;
  /** The declared effect the call belongs to (its intent's `attrs.name`), or null. */
  effect: string | null;
  status: ToolCallStatus;
  start: number;
  /** The outcome's time; without one, when the attempt ended (`unknown` / `no_result`) or the end of data (`pending`). */
  end: number;
  calledEventId: string;
  outcomeEventId: string | null;
  /** The event that ended the call's attempt, for a call left without an outcome. */
  endedByEventId: string | null;
  /** Sub-row inside the Tools lane (overlapping calls do not hide each other); at most `maxRows - 1`. */
  row: number;
};

/** The words for a tool call's status (with the call's bar, its tooltip and the legend). */
export const TOOL_CALL_WORD: Record<ToolCallStatus, string> = {
  completed: "completed",
  failed: "failed",
  pending: "no outcome yet",
  unknown: "outcome unknown",
  reconciled: "outcome reconciled",
  no_result: "no result recorded",
};

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** Two events belong to the same attempt unless both name one and they differ. */
const sameAttempt = (a: number | null, b: number | null) => a === null || b === null || a === b;

/**
 * Tool-call bars from time-ordered events (docs/concepts.md#tool-calls). A `tool.called` pairs with the
 * `tool.completed` / `tool.failed` carrying the same `attrs.call_id` (and, when both name one, the same attempt),
 * never with whichever outcome comes next: calls that overlap or finish out of order keep their own outcomes. A
 * call's attempt has ended at the first later `run.interrupted` or `run.stopped` of that attempt (or naming none),
 * `sandbox.destroyed` / `sandbox.replaced` of its sandbox, or `sandbox.created` of a higher attempt. Calls
 * without a call id cannot be paired and get no bar (their marks stay). Rows: greedy packing, capped at `maxRows`
 * (further calls share the last row).
 */
export function deriveToolCallBars(
  sorted: readonly TimedEvent[],
  endOfData: number,
  maxRows = 3,
  sideEffects?: Readonly<Record<string, Pick<SideEffectView, "status">>>,
): ToolCallBar[] {
  const outcomes = new Map<string, TimedEvent[]>();
  for (const te of sorted) {
    if (te.event.type !== "tool.completed" && te.event.type !== "tool.failed") continue;
    const id = str(te.event.attrs.call_id);
    if (id === null) continue;
    const list = outcomes.get(id);
    if (list) list.push(te);
    else outcomes.set(id, [te]);
  }
  const enders = sorted.filter((te) =>
    ["run.interrupted", "run.stopped", "sandbox.destroyed", "sandbox.replaced", "sandbox.created"].includes(
      te.event.type,
    ),
  );
  // Intents that may claim a call: by the call id they name, else by their tool (indexed: a task may have thousands).
  const intentsByCall = new Map<string, TimedEvent[]>();
  const intentsByTool = new Map<string, TimedEvent[]>();
  for (const te of sorted) {
    if (te.event.type !== "side_effect.intent" || te.event.attrs.mutation === false) continue;
    const callId = str(te.event.attrs.call_id);
    const tool = str(te.event.attrs.tool);
    const [map, key] = callId !== null ? [intentsByCall, callId] : [intentsByTool, tool];
    if (key === null) continue;
    const list = map.get(key);
    if (list) list.push(te);
    else map.set(key, [te]);
  }
  /** The intent of the declared effect the call is of (see {@link ToolCallStatus}), if any. */
  const intentOf = (call: TimedEvent, callId: string, tool: string | null) =>
    [...(intentsByCall.get(callId) ?? []), ...(tool !== null ? (intentsByTool.get(tool) ?? []) : [])].find(
      (i) => i.t >= call.t && sameAttempt(call.event.attempt, i.event.attempt),
    );
  const claimed = new Set<string>();
  const bars: Omit<ToolCallBar, "row">[] = [];
  for (const te of sorted) {
    if (te.event.type !== "tool.called") continue;
    const callId = str(te.event.attrs.call_id);
    if (callId === null) continue;
    const attempt = te.event.attempt;
    const env = te.event.environment_id;
    const outcome = (outcomes.get(callId) ?? []).find(
      (o) => !claimed.has(o.event.id) && sameAttempt(attempt, o.event.attempt),
    );
    const tool = str(te.event.attrs.tool) ?? str(te.event.attrs.name);
    const intent = intentOf(te, callId, tool);
    const effect = intent ? sideEffectNameOf(intent.event) : null;
    const base = {
      callId,
      tool,
      attempt,
      environmentId: env,
      mutation: te.event.attrs.mutation === true || intent !== undefined,
      effect,
      start: te.t,
      calledEventId: te.event.id,
    };
    if (outcome) {
      claimed.add(outcome.event.id);
      bars.push({
        ...base,
        status: outcome.event.type === "tool.failed" ? "failed" : "completed",
        end: Math.max(outcome.t, te.t),
        outcomeEventId: outcome.event.id,
        endedByEventId: null,
      });
      continue;
    }
    const ender = enders.find((e) => {
      if (e.t < te.t || e.event.id === te.event.id) return false;
      const ev = e.event;
      switch (ev.type) {
        case "run.interrupted":
        case "run.stopped":
          return sameAttempt(attempt, ev.attempt);
        case "sandbox.destroyed":
        case "sandbox.replaced":
          return env !== null && ev.environment_id === env;
        default: // sandbox.created
          return attempt !== null && ev.attempt !== null && ev.attempt > attempt;
      }
    });
    const settled =
      effect !== null && sideEffects && Object.hasOwn(sideEffects, effect) && sideEffects[effect]?.status !== "unknown";
    bars.push({
      ...base,
      status: ender ? (base.mutation ? (settled ? "reconciled" : "unknown") : "no_result") : "pending",
      end: ender ? ender.t : Math.max(endOfData, te.t),
      outcomeEventId: null,
      endedByEventId: ender?.event.id ?? null,
    });
  }
  const rows = packRows(bars);
  return bars.map((b, i) => ({ ...b, row: Math.min(rows[i] ?? 0, Math.max(0, maxRows - 1)) }));
}

/** Label of a tool-call bar: `tool · status` (just the tool when it completed), or the call id without a tool name. */
export function toolCallLabel(bar: Pick<ToolCallBar, "tool" | "callId" | "status">): string {
  const name = bar.tool ?? bar.callId;
  return bar.status === "completed" ? name : `${name} · ${TOOL_CALL_WORD[bar.status]}`;
}
