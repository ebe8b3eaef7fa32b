/**
 * Pure layout rules of the four-plane timeline (DESIGN.md "The four planes", UX.md "Timeline").
 * No React, no DOM: everything here is a function of events and numbers, unit-tested in
 * tests/unit/timeline-layout.test.ts.
 */
import { calendarTicks, linearScale, timeScale, type TimeScale } from "./scale";
import type { Plane, SideEffectView, StoredEvent } from "@/lib/contract/api";
import type { TimeZoneMode } from "./format";

/* ------------------------------------------------------------------------------------------------ */
/* Lanes                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/** One lane of the timeline: the plane it shows and its visible label. */
export type Lane = { plane: Plane; label: string };

/** The four lanes, top to bottom, in the same order as `PLANES` (session, environment, tools, vault). */
export const LANES: readonly Lane[] = [
  { plane: "session", label: "Session" },
  { plane: "environment", label: "Environment" },
  { plane: "tools", label: "Tools & egress" },
  { plane: "vault", label: "Vault" },
];

/** Visible label of a plane ("Tools & egress" for `tools`). */
export function planeLabel(plane: Plane): string {
  return LANES.find((l) => l.plane === plane)?.label ?? plane;
}

/** Index of the lane that shows a plane (0 = session … 3 = vault); -1 for a value outside the vocabulary. */
export function laneIndex(plane: Plane): number {
  return LANES.findIndex((l) => l.plane === plane);
}

/* ------------------------------------------------------------------------------------------------ */
/* Events in time order                                                                             */
/* ------------------------------------------------------------------------------------------------ */

/** An event with its parsed time (epoch ms). */
export type TimedEvent = { event: StoredEvent; t: number };

/**
 * Events in time order (`occurred_at`), keeping the input order for equal times (the server's order,
 * which breaks ties by id). Events whose time does not parse are dropped.
 */
export function sortEvents(events: readonly StoredEvent[]): TimedEvent[] {
  return events
    .map((event) => ({ event, t: Date.parse(event.occurred_at) }))
    .filter((x) => Number.isFinite(x.t))
    .sort((a, b) => a.t - b.t);
}

/* ------------------------------------------------------------------------------------------------ */
/* Mark shape and outcome                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/** Shape of a mark, by kind of event. */
export type MarkShape = "circle" | "diamond" | "square" | "triangle";

/** `diamond` for side_effect.*, `square` for credential.*, `triangle` for egress.*, else `circle`. */
export function markShape(type: string): MarkShape {
  if (type.startsWith("side_effect.")) return "diamond";
  if (type.startsWith("credential.")) return "square";
  if (type.startsWith("egress.")) return "triangle";
  return "circle";
}

/** Outcome an event's mark is coloured by. */
export type Outcome = "ok" | "denied" | "failed" | "unknown";

/** Outcomes from most to least alarming (a bin takes the first one any member has). */
export const OUTCOME_SEVERITY: readonly Outcome[] = ["failed", "denied", "unknown", "ok"];

/** The word for an outcome (colour never carries meaning alone). */
export const OUTCOME_WORD: Record<Outcome, string> = {
  ok: "ok",
  denied: "denied",
  failed: "failed",
  unknown: "unknown",
};

/** Name of the side effect a side_effect.* event refers to (`attrs.name`, else `attrs.side_effect`), or null. */
export function sideEffectNameOf(event: Pick<StoredEvent, "type" | "attrs">): string | null {
  if (!event.type.startsWith("side_effect.")) return null;
  const { name, side_effect: sideEffect } = event.attrs;
  if (typeof name === "string" && name !== "") return name;
  if (typeof sideEffect === "string" && sideEffect !== "") return sideEffect;
  return null;
}

/**
 * Outcome of one event:
 * - `denied` for egress.denied and credential.denied;
 * - `failed` for tool.failed;
 * - `unknown` for a side_effect.intent whose side effect currently has status `unknown`;
 * - `ok` otherwise.
 */
export function classifyOutcome(
  event: Pick<StoredEvent, "type" | "attrs">,
  sideEffects?: Readonly<Record<string, Pick<SideEffectView, "status">>>,
): Outcome {
  switch (event.type) {
    case "egress.denied":
    case "credential.denied":
      return "denied";
    case "tool.failed":
      return "failed";
    case "side_effect.intent": {
      const name = sideEffectNameOf(event);
      if (name !== null && sideEffects && Object.hasOwn(sideEffects, name) && sideEffects[name]?.status === "unknown") {
        return "unknown";
      }
      return "ok";
    }
    default:
      return "ok";
  }
}

/* ------------------------------------------------------------------------------------------------ */
/* Sandbox bars                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

/** One sandbox instance, drawn as a bar in the Environment lane. */
export type SandboxBar = {
  environmentId: string;
  attempt: number | null;
  start: number;
  end: number;
  /** No sandbox.destroyed / sandbox.replaced yet: the bar runs to the end of the data (or `now`). */
  open: boolean;
  endedBy: "destroyed" | "replaced" | null;
  /** The sandbox.created event, when the data holds it; otherwise `start` is the first event seen. */
  createdEventId: string | null;
  /** Sub-row inside the Environment lane, so that overlapping sandboxes do not hide each other. */
  row: number;
};

/**
 * Sandbox bars from time-ordered events, keyed by `environment_id`. A bar starts at the sandbox's
 * `sandbox.created` (or the first event carrying that environment id when the creation is not in the
 * data) and ends at its first `sandbox.destroyed` / `sandbox.replaced`, else when a sandbox of a higher attempt
 * is created (it was replaced), else at `endOfData` (open).
 * The attempt comes from the creation event, else the first event of that sandbox that has one.
 */
export function deriveSandboxBars(sorted: readonly TimedEvent[], endOfData: number): SandboxBar[] {
  type Acc = {
    environmentId: string;
    firstSeen: number;
    created: TimedEvent | null;
    ended: TimedEvent | null;
    attempt: number | null;
  };
  const byEnv = new Map<string, Acc>();
  for (const te of sorted) {
    const envId = te.event.environment_id;
    if (!envId) continue;
    let acc = byEnv.get(envId);
    if (!acc) {
      acc = { environmentId: envId, firstSeen: te.t, created: null, ended: null, attempt: null };
      byEnv.set(envId, acc);
    }
    const type = te.event.type;
    if (type === "sandbox.created" && !acc.created) acc.created = te;
    if ((type === "sandbox.destroyed" || type === "sandbox.replaced") && !acc.ended) acc.ended = te;
    if (acc.attempt === null && te.event.attempt !== null) acc.attempt = te.event.attempt;
  }
  const bars: Omit<SandboxBar, "row">[] = [];
  // A sandbox with no end event is over once a later attempt's sandbox is created: that one replaced it.
  const creations = [...byEnv.values()]
    .filter((a) => a.created && a.created.event.attempt !== null)
    .map((a) => ({ t: a.created!.t, attempt: a.created!.event.attempt! }));
  for (const acc of byEnv.values()) {
    const start = acc.created ? acc.created.t : acc.firstSeen;
    const attempt = acc.created?.event.attempt ?? acc.attempt;
    const successor =
      acc.ended === null && attempt !== null
        ? creations.filter((c) => c.attempt > attempt && c.t >= start).sort((a, b) => a.t - b.t)[0]
        : undefined;
    const open = acc.ended === null && !successor;
    const end = open ? Math.max(endOfData, start) : Math.max(acc.ended?.t ?? successor?.t ?? start, start);
    bars.push({
      environmentId: acc.environmentId,
      attempt,
      start,
      end,
      open,
      endedBy: acc.ended
        ? acc.ended.event.type === "sandbox.destroyed"
          ? "destroyed"
          : "replaced"
        : successor
          ? "replaced"
          : null,
      createdEventId: acc.created?.event.id ?? null,
    });
  }
  bars.sort((a, b) => a.start - b.start || a.end - b.end);
  const rows = packRows(bars);
  return bars.map((b, i) => ({ ...b, row: rows[i] ?? 0 }));
}

/**
 * Greedy interval packing: for intervals sorted by start, the row of each so that intervals sharing a
 * row never overlap (touching is allowed). Returns one row index per interval.
 */
export function packRows(intervals: readonly { start: number; end: number }[]): number[] {
  const rowEnds: number[] = [];
  return intervals.map(({ start, end }) => {
    let row = rowEnds.findIndex((e) => e <= start);
    if (row === -1) {
      row = rowEnds.length;
      rowEnds.push(end);
    } else {
      rowEnds[row] = end;
    }
    return row;
  });
}

/** Label of a sandbox bar: `attempt N`, or `sandbox` when no attempt is known. */
export function sandboxBarLabel(bar: Pick<SandboxBar, "attempt">): string {
  return bar.attempt === null ? "sandbox" : `attempt ${bar.attempt}`;
}

/** Approximate width in px of a 10 px timeline label (no DOM measurement needed for layout). */
export function labelWidth(text: string): number {
  return text.length * 5.8 + 4;
}

/**
 * The text drawn inside a sandbox bar with `room` px free: the longest of `attempt N (no end recorded)` (open
 * bars), `attempt N`, `#N` that fits whole, or null when none does. A label never spills out of its bar nor is
 * cut mid-word (a cut "attempt 1" read as "at" next to the following bar's "attempt 2"); the full label stays in
 * the bar's tooltip. `measure` defaults to {@link labelWidth}.
 */
export function fitSandboxBarLabel(
  bar: Pick<SandboxBar, "attempt" | "open">,
  room: number,
  measure: (text: string) => number = labelWidth,
): string | null {
  const base = sandboxBarLabel(bar);
  const candidates = [
    ...(bar.open ? [`${base} (no end recorded)`] : []),
    base,
    ...(bar.attempt !== null ? [`#${bar.attempt}`] : []),
  ];
  return candidates.find((text) => measure(text) <= room) ?? null;
}

/* ------------------------------------------------------------------------------------------------ */
/* Tool calls                                                                                       */
/* ------------------------------------------------------------------------------------------------ */

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
 * Tool-call bars from time-ordered events (DESIGN.md "Tool call"). A `tool.called` pairs with the
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

/* ------------------------------------------------------------------------------------------------ */
/* Idle stretches: a time scale that compresses them                                                */
/* ------------------------------------------------------------------------------------------------ */

/*
 * Why compress: a run that crashed after a second and then waited minutes for a person (the reference scenario)
 * drew, once it finished, its whole crash region (attempt 1, the interruption, the restart) within a few pixels at
 * the left edge: a linear scale spends the width on the wait. Instead, long stretches without any event are drawn
 * narrow, as a hatched band that says how long it lasted, and the rest of the width goes to where things happened.
 * Time is linear between bands, so durations between neighbouring events read true; a toolbar toggle turns the
 * compression off. Zoom and pan work in "virtual" time (idle stretches shortened), so zooming into a band widens it
 * smoothly.
 */

/** A stretch with no event, drawn narrow. Times are epoch ms. */
export type IdleGap = { start: number; end: number };

/** When a stretch counts as idle (see {@link findIdleGaps}) and how wide it is drawn (see {@link idleGapWidth}). */
export const IDLE_DEFAULTS = {
  /** A stretch shorter than this is never compressed. */
  minIdleMs: 10_000,
  /** …nor one shorter than this fraction of the whole span. */
  minFraction: 0.15,
  /** Compress only when the idle stretches together make up at least this fraction of the span. */
  minTotalFraction: 0.4,
  /** A compressed stretch lasts this fraction of the active (non-idle) time, in virtual time. */
  gapFraction: 0.06,
} as const;

/**
 * Idle stretches between consecutive instants (event times, sandbox bar ends, "now"): each at least
 * `minIdleMs` long and at least `minFraction` of the whole span, and only when together they make up
 * `minTotalFraction` of the span and some time is left outside them. Sorted, never overlapping.
 */
export function findIdleGaps(instants: readonly number[], opts: Partial<typeof IDLE_DEFAULTS> = {}): IdleGap[] {
  const { minIdleMs, minFraction, minTotalFraction } = { ...IDLE_DEFAULTS, ...opts };
  const ts = [...new Set(instants.filter((t) => Number.isFinite(t)))].sort((a, b) => a - b);
  if (ts.length < 3) return [];
  const span = ts[ts.length - 1]! - ts[0]!;
  const min = Math.max(minIdleMs, span * minFraction);
  const gaps: IdleGap[] = [];
  for (let i = 1; i < ts.length; i++) {
    const a = ts[i - 1]!;
    const b = ts[i]!;
    if (b - a >= min) gaps.push({ start: a, end: b });
  }
  const idle = gaps.reduce((n, g) => n + (g.end - g.start), 0);
  if (idle < span * minTotalFraction || idle >= span) return [];
  return gaps;
}

/** Virtual length of a compressed stretch: `gapFraction` of the active time, never longer than the stretch. */
export function idleGapWidth(
  gaps: readonly IdleGap[],
  span: number,
  gapFraction: number = IDLE_DEFAULTS.gapFraction,
): number {
  const idle = gaps.reduce((n, g) => n + (g.end - g.start), 0);
  return Math.max((span - idle) * gapFraction, 1);
}

/** A monotone map between real time and virtual time (idle stretches shortened to `gapMs`). */
export type TimeWarp = {
  gaps: readonly IdleGap[];
  toVirtual: (t: number) => number;
  toReal: (v: number) => number;
};

/** The identity warp (nothing compressed). */
export const NO_WARP: TimeWarp = { gaps: [], toVirtual: (t) => t, toReal: (v) => v };

/**
 * The warp that shortens each gap to `gapMs` (never lengthens one). Times before the first gap keep their value;
 * slopes are 1 outside gaps, so durations between events outside gaps are unchanged. A d3 polylinear scale does
 * the mapping and its inverse.
 */
export function makeTimeWarp(gaps: readonly IdleGap[], gapMs: number): TimeWarp {
  if (gaps.length === 0) return NO_WARP;
  const domain: number[] = [];
  const range: number[] = [];
  const push = (t: number, v: number) => {
    if (domain.length && t <= domain[domain.length - 1]!) return;
    domain.push(t);
    range.push(v);
  };
  let shift = 0;
  push(gaps[0]!.start - 1, gaps[0]!.start - 1);
  for (const g of gaps) {
    const len = Math.min(gapMs, g.end - g.start);
    push(g.start, g.start - shift);
    push(g.end, g.start - shift + len);
    shift += g.end - g.start - len;
  }
  const last = gaps[gaps.length - 1]!;
  push(last.end + 1, last.end + 1 - shift);
  const s = linearScale(domain, range);
  return { gaps, toVirtual: (t) => s(t), toReal: (v) => s.invert(v) };
}

/**
 * The pixel scale for a window `view` given in virtual time: a time scale (UTC or local ticks) whose domain is in
 * real time, piecewise linear with a break at each gap edge inside the window. `scale(date)` and `scale.invert(px)`
 * work as usual.
 */
export function warpedTimeScale(
  warp: TimeWarp,
  view: Domain,
  range: readonly [number, number],
  zone: TimeZoneMode,
): TimeScale {
  const [v0, v1] = view;
  const px = linearScale([v0, v1], range);
  const real: number[] = [warp.toReal(v0)];
  for (const g of warp.gaps) {
    for (const t of [g.start, g.end]) {
      const v = warp.toVirtual(t);
      if (v > v0 && v < v1 && t > real[real.length - 1]!) real.push(t);
    }
  }
  const end = warp.toReal(v1);
  if (end > real[real.length - 1]!) real.push(end);
  return timeScale(
    real,
    real.map((t) => px(warp.toVirtual(t))),
    zone,
  );
}

/**
 * Axis ticks of a (possibly piecewise) time scale: each piece outside a gap gets ticks for its own width (about one
 * per `pxPerTick`), then ticks closer than `minApart` px to the previous one are dropped. With no gap this is the
 * scale's own `ticks` (at least two).
 */
export function warpedTicks(
  scale: TimeScale,
  gaps: readonly IdleGap[],
  zone: TimeZoneMode,
  pxPerTick = 96,
  minApart = 48,
): Date[] {
  const dom = scale.domain().map((d) => d.getTime());
  const rng = scale.range();
  const pieces = dom.length - 1;
  const out: Date[] = [];
  for (let i = 0; i < pieces; i++) {
    const a = dom[i]!;
    const b = dom[i + 1]!;
    if (gaps.some((g) => a >= g.start && b <= g.end)) continue;
    const w = Math.abs(rng[i + 1]! - rng[i]!);
    const count = Math.max(pieces === 1 ? 2 : 1, Math.floor(w / pxPerTick));
    for (const d of calendarTicks(a, b, count, zone)) if (d.getTime() >= a && d.getTime() <= b) out.push(d);
  }
  out.sort((p, q) => p.getTime() - q.getTime());
  const kept: Date[] = [];
  let lastPx = -Infinity;
  for (const d of out) {
    const x = scale(d);
    if (kept.length && (x - lastPx < minApart || d.getTime() === kept[kept.length - 1]!.getTime())) continue;
    kept.push(d);
    lastPx = x;
  }
  return kept;
}

/* ------------------------------------------------------------------------------------------------ */
/* Interruption and restart rules                                                                   */
/* ------------------------------------------------------------------------------------------------ */

/** Kind of vertical rule drawn across all lanes. */
export type RuleKind = "interruption" | "restart" | "resume" | "stop" | "finish";

/** A vertical rule across all lanes at one instant. */
export type TimeRule = { eventId: string; kind: RuleKind; t: number; label: string; attempt: number | null };

/**
 * Rules from time-ordered events: `run.interrupted` → interruption; `sandbox.created` with attempt > 1 →
 * restart; `run.resumed` → resume; `run.stopped` → stop (a visible stop is as important as an interruption),
 * or finish when its `reason` says the work completed.
 */
export function deriveRules(sorted: readonly TimedEvent[]): TimeRule[] {
  const rules: TimeRule[] = [];
  for (const { event, t } of sorted) {
    const attempt = event.attempt;
    const suffix = attempt !== null ? ` · attempt ${attempt}` : "";
    if (event.type === "run.interrupted") {
      rules.push({ eventId: event.id, kind: "interruption", t, label: "interrupted", attempt });
    } else if (event.type === "sandbox.created" && attempt !== null && attempt > 1) {
      rules.push({ eventId: event.id, kind: "restart", t, label: `restart${suffix}`, attempt });
    } else if (event.type === "run.resumed") {
      rules.push({ eventId: event.id, kind: "resume", t, label: `resumed${suffix}`, attempt });
    } else if (event.type === "run.stopped") {
      // A run that stopped because it finished its work is not an error stop.
      const reason = typeof event.attrs.reason === "string" ? event.attrs.reason : "";
      const finished = ["completed", "done", "finished", "success"].includes(reason);
      rules.push({
        eventId: event.id,
        kind: finished ? "finish" : "stop",
        t,
        label: finished ? "finished" : "stopped",
        attempt,
      });
    }
  }
  return rules;
}

/**
 * Rows for labels that must never overlap: labels are placed in order of `priority` (higher first; ties: the later
 * `x` first, since after a crash the newest markers matter most), each in the first of `maxRows` rows where it keeps
 * `gap` px from every label already there. A label that fits nowhere gets `null` (left out: its rule is still drawn,
 * and zooming in brings the label back). Returns one row or null per label, in input order.
 */
export function thinLabels(
  labels: readonly { x: number; width: number; priority?: number }[],
  maxRows: number,
  gap = 6,
): Array<number | null> {
  const rows: Array<Array<[number, number]>> = Array.from({ length: Math.max(1, maxRows) }, () => []);
  const order = labels
    .map((_, i) => i)
    .sort((a, b) => {
      const la = labels[a]!;
      const lb = labels[b]!;
      return (lb.priority ?? 0) - (la.priority ?? 0) || lb.x - la.x;
    });
  const out: Array<number | null> = labels.map(() => null);
  for (const i of order) {
    const { x, width } = labels[i]!;
    const row = rows.findIndex((taken) => taken.every(([a, b]) => x + width + gap <= a || b + gap <= x));
    if (row === -1) continue;
    rows[row]!.push([x, x + width]);
    out[i] = row;
  }
  return out;
}

/* ------------------------------------------------------------------------------------------------ */
/* Binning crowded marks                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/** What the binning needs to know about one mark. */
export type BinnableMark = { id: string; plane: Plane; t: number; outcome: Outcome };

/** Several marks of one lane in one time bucket, drawn as a count badge. */
export type MarkBin = {
  plane: Plane;
  /** Bucket start and end (epoch ms). */
  t0: number;
  t1: number;
  /** Times of the earliest and latest member. */
  first: number;
  last: number;
  count: number;
  ids: string[];
  outcomes: Record<Outcome, number>;
  worst: Outcome;
  /** How many of `count` are events not loaded in the browser (counted on the server); 0 when all are loaded. */
  unloaded: number;
};

/** Events of one lane counted on the server but not loaded in the browser, around one instant. */
export type UnloadedCount = {
  plane: Plane;
  /** Where they are drawn (same clock as the marks' `t`), and the times of the earliest and latest. */
  t: number;
  first: number;
  last: number;
  count: number;
  outcomes: Partial<Record<Outcome, number>>;
};

/** Options of `binMarks`. */
export type BinOptions = {
  /** Bucket width in ms (typically the bin width in px times ms per px at the current zoom). */
  binMs: number;
  /** A bucket holding more than this many marks becomes a bin; otherwise its marks are drawn one by one. */
  maxPerBucket: number;
  /** Marks always drawn individually (the selected one), left out of any bin. */
  keepIds?: ReadonlySet<string>;
  /** Bucket origin (epoch ms); 0 keeps buckets stable while panning. */
  origin?: number;
  /** Events not loaded (counted on the server): a bucket holding any is always a bin, counting them too. */
  unloaded?: readonly UnloadedCount[];
};

/**
 * Splits marks into those drawn one by one and per-lane count bins. Buckets are `binMs` wide in time,
 * per plane. A bucket with more than `maxPerBucket` marks becomes a bin (minus the kept ids, drawn on
 * their own); a bin left with a single member is drawn as that mark. Output order: marks in input
 * order, bins by plane then time.
 */
export function binMarks<T extends BinnableMark>(
  items: readonly T[],
  options: BinOptions,
): { marks: T[]; bins: MarkBin[] } {
  const { binMs, maxPerBucket, keepIds, origin = 0, unloaded = [] } = options;
  if (!(binMs > 0) || !Number.isFinite(binMs)) return { marks: [...items], bins: [] };
  type Bucket = { plane: Plane; k: number; members: T[]; unloaded: UnloadedCount[] };
  const buckets = new Map<string, Bucket>();
  const bucketOf = (plane: Plane, t: number): Bucket => {
    const k = Math.floor((t - origin) / binMs);
    const key = `${plane}|${k}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { plane, k, members: [], unloaded: [] };
      buckets.set(key, bucket);
    }
    return bucket;
  };
  for (const item of items) bucketOf(item.plane, item.t).members.push(item);
  for (const u of unloaded) if (u.count > 0) bucketOf(u.plane, u.t).unloaded.push(u);
  const individual = new Set<T>();
  const bins: MarkBin[] = [];
  for (const { plane, k, members, unloaded: away } of buckets.values()) {
    const awayCount = away.reduce((n, u) => n + u.count, 0);
    if (awayCount === 0 && members.length <= maxPerBucket) {
      for (const m of members) individual.add(m);
      continue;
    }
    const binned: T[] = [];
    for (const m of members) {
      if (keepIds?.has(m.id)) individual.add(m);
      else binned.push(m);
    }
    if (awayCount === 0 && binned.length === 1) {
      individual.add(binned[0] as T);
      continue;
    }
    if (binned.length === 0 && awayCount === 0) continue;
    const outcomes: Record<Outcome, number> = { ok: 0, denied: 0, failed: 0, unknown: 0 };
    let first = Infinity;
    let last = -Infinity;
    for (const m of binned) {
      outcomes[m.outcome] += 1;
      first = Math.min(first, m.t);
      last = Math.max(last, m.t);
    }
    for (const u of away) {
      for (const [o, n] of Object.entries(u.outcomes) as Array<[Outcome, number]>) outcomes[o] += n;
      first = Math.min(first, u.first);
      last = Math.max(last, u.last);
    }
    bins.push({
      plane,
      t0: origin + k * binMs,
      t1: origin + (k + 1) * binMs,
      first,
      last,
      count: binned.length + awayCount,
      ids: binned.map((m) => m.id),
      outcomes,
      worst: OUTCOME_SEVERITY.find((o) => outcomes[o] > 0) ?? "ok",
      unloaded: awayCount,
    });
  }
  bins.sort((a, b) => laneIndex(a.plane) - laneIndex(b.plane) || a.t0 - b.t0);
  return { marks: items.filter((m) => individual.has(m)), bins };
}

/** A lane's bucket as the server counted it (times in epoch ms), see `TimelineBin`. */
export type ServerBin = { plane: Plane; first: number; last: number; count: number; failed: number; denied: number };

/**
 * What the server counted but the browser has not loaded: for each server bin, its count minus the loaded events of
 * that lane between its first and last time (never below 0), drawn at the middle of that span. The outcome counts
 * are the server's `failed` / `denied` minus those loaded (the rest counted `ok`).
 * @param loaded the loaded events' times and outcomes per lane, each sorted by time.
 */
export function unloadedCounts(
  serverBins: readonly ServerBin[],
  loaded: Readonly<Record<Plane, ReadonlyArray<{ t: number; outcome: Outcome }>>>,
): UnloadedCount[] {
  const out: UnloadedCount[] = [];
  for (const b of serverBins) {
    const lane = loaded[b.plane];
    let lo = lowerBound(lane, b.first);
    let have = 0;
    let failed = 0;
    let denied = 0;
    for (; lo < lane.length && lane[lo]!.t <= b.last; lo += 1) {
      have += 1;
      if (lane[lo]!.outcome === "failed") failed += 1;
      if (lane[lo]!.outcome === "denied") denied += 1;
    }
    const count = b.count - have;
    if (count <= 0) continue;
    const f = Math.max(0, Math.min(count, b.failed - failed));
    const d = Math.max(0, Math.min(count - f, b.denied - denied));
    out.push({
      plane: b.plane,
      t: (b.first + b.last) / 2,
      first: b.first,
      last: b.last,
      count,
      outcomes: { failed: f, denied: d, ok: count - f - d },
    });
  }
  return out;
}

function lowerBound(sorted: ReadonlyArray<{ t: number }>, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.t < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ------------------------------------------------------------------------------------------------ */
/* Domain: fit, zoom, pan                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/** A time window [start, end] in epoch ms. */
export type Domain = readonly [number, number];

/**
 * The window that shows all given instants with `padFraction` of the span on each side; a single
 * instant (or none) gets a one-minute window around it (or around `fallback`).
 */
export function fitDomain(times: readonly number[], padFraction = 0.03, fallback = 0): Domain {
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of times) {
    if (!Number.isFinite(t)) continue;
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  if (lo === Infinity) return [fallback - 30_000, fallback + 30_000];
  const span = hi - lo;
  if (span === 0) return [lo - 30_000, hi + 30_000];
  return [lo - span * padFraction, hi + span * padFraction];
}

/**
 * Zooms a window around `anchor` by `factor` (< 1 zooms in, > 1 out), keeping the anchor at the same
 * relative position. The resulting span is clamped to [minSpan, maxSpan].
 */
export function zoomDomain(domain: Domain, factor: number, anchor: number, minSpan = 5, maxSpan = Infinity): Domain {
  const [d0, d1] = domain;
  const span = d1 - d0;
  const next = Math.min(maxSpan, Math.max(minSpan, span * factor));
  const k = span > 0 ? next / span : 1;
  const a = Math.min(d1, Math.max(d0, anchor));
  return [a - (a - d0) * k, a + (d1 - a) * k];
}

/** Shifts a window by `deltaMs` (positive moves later in time). */
export function panDomain(domain: Domain, deltaMs: number): Domain {
  return [domain[0] + deltaMs, domain[1] + deltaMs];
}

/**
 * The same window if `t` lies inside its inner part (excluding `marginFraction` on each side),
 * otherwise the window of the same span shifted so that `t` sits at its centre.
 */
export function ensureVisible(domain: Domain, t: number, marginFraction = 0.02): Domain {
  const [d0, d1] = domain;
  const span = d1 - d0;
  const m = span * marginFraction;
  if (t >= d0 + m && t <= d1 - m) return domain;
  return [t - span / 2, t + span / 2];
}

/**
 * The time frame of a timeline: the warp (idle stretches among `instants` compressed when `compress`, see
 * {@link findIdleGaps}) and the fitted window in virtual time (all instants, 3% padding; a minute around
 * `fallback` when there are none).
 */
export function frameTimeline(
  instants: readonly number[],
  compress: boolean,
  fallback = 0,
): { warp: TimeWarp; fit: Domain } {
  const gaps = compress ? findIdleGaps(instants) : [];
  let warp = NO_WARP;
  if (gaps.length) {
    const finite = instants.filter((t) => Number.isFinite(t));
    warp = makeTimeWarp(gaps, idleGapWidth(gaps, Math.max(...finite) - Math.min(...finite)));
  }
  return {
    warp,
    fit: fitDomain(
      instants.map((t) => warp.toVirtual(t)),
      0.03,
      fallback,
    ),
  };
}

/* ------------------------------------------------------------------------------------------------ */
/* Selection and filtering                                                                          */
/* ------------------------------------------------------------------------------------------------ */

/** Filter shared by the timeline and the event list: enabled planes and a substring of the type. */
export type EventFilter = { planes: readonly Plane[]; typeQuery: string };

/** The filter that lets every event through. */
export const ALL_EVENTS_FILTER: EventFilter = { planes: LANES.map((l) => l.plane), typeQuery: "" };

/**
 * Whether an event passes a filter: its plane is enabled and its type contains every whitespace- or
 * comma-separated term of the query (case-insensitive).
 */
export function matchesFilter(event: Pick<StoredEvent, "plane" | "type">, filter: EventFilter): boolean {
  if (!filter.planes.includes(event.plane)) return false;
  const terms = filter.typeQuery
    .toLowerCase()
    .split(/[\s,]+/)
    .filter((s) => s !== "");
  const type = event.type.toLowerCase();
  return terms.every((term) => type.includes(term));
}

/**
 * The id the selection moves to with Arrow Right (`dir` 1) / Arrow Left (`dir` -1) over time-ordered
 * events, skipping events that fail `accept`. With nothing selected (or a selection not in the list)
 * it is the first (dir 1) or last (dir -1) accepted event. At either end the selection stays.
 * Null when no event is accepted.
 */
export function neighbourId(
  sorted: readonly TimedEvent[],
  selectedId: string | null,
  dir: 1 | -1,
  accept: (event: StoredEvent) => boolean = () => true,
): string | null {
  const index = selectedId === null ? -1 : sorted.findIndex((te) => te.event.id === selectedId);
  if (index === -1) {
    const ordered = dir === 1 ? sorted : [...sorted].reverse();
    return ordered.find((te) => accept(te.event))?.event.id ?? null;
  }
  for (let i = index + dir; i >= 0 && i < sorted.length; i += dir) {
    const te = sorted[i];
    if (te && accept(te.event)) return te.event.id;
  }
  return selectedId;
}

/* ------------------------------------------------------------------------------------------------ */
/* Attribute summary                                                                                */
/* ------------------------------------------------------------------------------------------------ */

/** Attribute keys worth showing first in one-line summaries, most telling first. */
export const SUMMARY_KEYS: readonly string[] = [
  "name",
  "side_effect",
  "tool",
  "host",
  "action",
  "action_class",
  "outcome",
  "status",
  "reason",
  "phase",
  "from",
  "to",
  "credential",
  "credential_ref",
  "scope",
  "policy_version",
  "snapshot",
  "digest",
  "idempotency_key",
];

/**
 * A one-line summary of an event's attributes: up to `max` `key=value` pairs of scalar values,
 * preferred keys first (`SUMMARY_KEYS`), then other scalar keys in their order; long strings are cut
 * to 40 characters with an ellipsis. Empty string when there are none.
 */
export function summarizeAttrs(attrs: Readonly<Record<string, unknown>>, max = 3): string {
  const scalar = (v: unknown): v is string | number | boolean =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  const keys = [
    ...SUMMARY_KEYS.filter((k) => Object.hasOwn(attrs, k)),
    ...Object.keys(attrs).filter((k) => !SUMMARY_KEYS.includes(k)),
  ];
  const out: string[] = [];
  for (const key of keys) {
    if (out.length >= max) break;
    const value = attrs[key];
    if (!scalar(value)) continue;
    const text = String(value);
    out.push(`${key}=${text.length > 40 ? `${text.slice(0, 39)}…` : text}`);
  }
  return out.join(" · ");
}

/* ------------------------------------------------------------------------------------------------ */
/* Redactions                                                                                       */
/* ------------------------------------------------------------------------------------------------ */

/** The marker the server writes in place of a secret before storage. */
export const REDACTED_MARKER = "[REDACTED]";

/** Number of `[REDACTED]` markers inside a JSON value (strings may hold several, e.g. two headers). */
export function countRedactedValues(value: unknown): number {
  if (typeof value === "string") return value.split(REDACTED_MARKER).length - 1;
  if (Array.isArray(value)) return value.reduce<number>((n, v) => n + countRedactedValues(v), 0);
  if (value !== null && typeof value === "object") {
    return Object.values(value).reduce<number>((n, v) => n + countRedactedValues(v), 0);
  }
  return 0;
}

/**
 * Name of the side effect an event is about, if that name is a key of `sideEffects`: side_effect.*
 * events by `attrs.name` / `attrs.side_effect`, approval.* events by `attrs.side_effect`. Else null.
 */
export function relatedSideEffectName(
  event: Pick<StoredEvent, "type" | "attrs">,
  sideEffects: Readonly<Record<string, unknown>> | undefined,
): string | null {
  if (!sideEffects) return null;
  let name = sideEffectNameOf(event);
  if (name === null && event.type.startsWith("approval.") && typeof event.attrs.side_effect === "string") {
    name = event.attrs.side_effect;
  }
  return name !== null && Object.hasOwn(sideEffects, name) ? name : null;
}
