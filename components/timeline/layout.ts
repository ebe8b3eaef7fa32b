/**
 * Pure layout rules of the four-plane timeline (DESIGN.md "The four planes", UX.md "Timeline").
 * No React, no DOM: everything here is a function of events and numbers, unit-tested in
 * tests/unit/timeline-layout.test.ts.
 */
import type { Plane, SideEffectView, StoredEvent } from "@/lib/client/types";

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

/** The most alarming of several outcomes (`ok` for none). */
export function worstOutcome(outcomes: Iterable<Outcome>): Outcome {
  let best = OUTCOME_SEVERITY.length - 1;
  for (const o of outcomes) best = Math.min(best, OUTCOME_SEVERITY.indexOf(o));
  return OUTCOME_SEVERITY[best] ?? "ok";
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
    const end = open
      ? Math.max(endOfData, start)
      : Math.max(acc.ended?.t ?? successor?.t ?? start, start);
    bars.push({
      environmentId: acc.environmentId,
      attempt,
      start,
      end,
      open,
      endedBy: acc.ended ? (acc.ended.event.type === "sandbox.destroyed" ? "destroyed" : "replaced") : successor ? "replaced" : null,
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
      rules.push({ eventId: event.id, kind: finished ? "finish" : "stop", t, label: finished ? "finished" : "stopped", attempt });
    }
  }
  return rules;
}

/**
 * Rows for labels placed left to right (sorted by `x`), so that a label never overlaps the previous one
 * in its row: the first row whose last label ends `gap` px before this one starts. With all `maxRows`
 * taken, the row that frees up first is reused (overlap accepted rather than growing without bound).
 */
export function assignLabelRows(labels: readonly { x: number; width: number }[], maxRows: number, gap = 6): number[] {
  const rowEnds: number[] = [];
  return labels.map(({ x, width }) => {
    let row = rowEnds.findIndex((e) => e + gap <= x);
    if (row === -1) {
      if (rowEnds.length < Math.max(1, maxRows)) {
        row = rowEnds.length;
        rowEnds.push(x + width);
        return row;
      }
      row = rowEnds.reduce((best, e, i) => (e < (rowEnds[best] ?? Infinity) ? i : best), 0);
    }
    rowEnds[row] = x + width;
    return row;
  });
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
  const { binMs, maxPerBucket, keepIds, origin = 0 } = options;
  if (!(binMs > 0) || !Number.isFinite(binMs)) return { marks: [...items], bins: [] };
  const buckets = new Map<string, { plane: Plane; k: number; members: T[] }>();
  for (const item of items) {
    const k = Math.floor((item.t - origin) / binMs);
    const key = `${item.plane}|${k}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { plane: item.plane, k, members: [] };
      buckets.set(key, bucket);
    }
    bucket.members.push(item);
  }
  const individual = new Set<T>();
  const bins: MarkBin[] = [];
  for (const { plane, k, members } of buckets.values()) {
    if (members.length <= maxPerBucket) {
      for (const m of members) individual.add(m);
      continue;
    }
    const binned: T[] = [];
    for (const m of members) {
      if (keepIds?.has(m.id)) individual.add(m);
      else binned.push(m);
    }
    if (binned.length === 1) {
      individual.add(binned[0] as T);
      continue;
    }
    if (binned.length === 0) continue;
    const outcomes: Record<Outcome, number> = { ok: 0, denied: 0, failed: 0, unknown: 0 };
    let first = Infinity;
    let last = -Infinity;
    for (const m of binned) {
      outcomes[m.outcome] += 1;
      first = Math.min(first, m.t);
      last = Math.max(last, m.t);
    }
    bins.push({
      plane,
      t0: origin + k * binMs,
      t1: origin + (k + 1) * binMs,
      first,
      last,
      count: binned.length,
      ids: binned.map((m) => m.id),
      outcomes,
      worst: worstOutcome(binned.map((m) => m.outcome)),
    });
  }
  bins.sort((a, b) => laneIndex(a.plane) - laneIndex(b.plane) || a.t0 - b.t0);
  return { marks: items.filter((m) => individual.has(m)), bins };
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
