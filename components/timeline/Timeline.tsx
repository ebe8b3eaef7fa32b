"use client";

/**
 * Four-lane timeline of one task (UX.md "Task page" → "Timeline"): Session, Environment, Tools & egress
 * and Vault on one shared time axis, sandbox instances as bars, interruptions and restarts as rules
 * across all lanes, events as marks shaped by kind and coloured by outcome, crowded marks binned.
 */
import { scaleLinear } from "d3-scale";
import {
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent as ReactKeyboardEvent,
  type PointerEvent as ReactPointerEvent,
  type ReactNode,
} from "react";
import type { Plane, SideEffectView, StoredEvent } from "@/lib/client/types";
import { formatClock, formatDate, formatDuration, formatInstant, formatTick, zoneSuffix, type TimeZoneMode } from "./format";
import { useElementWidth, useHydrated } from "./hooks";
import {
  LANES,
  binMarks,
  classifyOutcome,
  deriveRules,
  deriveSandboxBars,
  deriveToolCallBars,
  ensureVisible,
  findIdleGaps,
  fitSandboxBarLabel,
  frameTimeline,
  labelWidth,
  markShape,
  matchesFilter,
  neighbourId,
  panDomain,
  planeLabel,
  sandboxBarLabel,
  sideEffectNameOf,
  sortEvents,
  thinLabels,
  unloadedCounts,
  warpedTicks,
  warpedTimeScale,
  zoomDomain,
  type BinnableMark,
  type Domain,
  type EventFilter,
  type MarkBin,
  type MarkShape,
  type Outcome,
  type RuleKind,
  type SandboxBar,
  type ServerBin,
  type TimeWarp,
} from "./layout";
import { CALL_BAR_GAP, CALL_BAR_H, ToolCallBars, toolCallTooltip } from "./ToolCallBars";
import { MarkGlyph, OUTCOME_STYLE, OutcomeLabel, SHAPE_WORD, ShapePath, SideEffectStatusLabel } from "./parts";

/** Props of `Timeline`. */
export type TimelineProps = {
  /** The task's events, in any order. */
  events: StoredEvent[];
  /** Id of the selected event, or null. */
  selectedId: string | null;
  /** Called with an event id when a mark is clicked or the arrow keys move, with null on Escape. */
  onSelect: (id: string | null) => void;
  /** The task's side effects by name; a side_effect.intent of an `unknown` effect is drawn amber. */
  sideEffects?: Record<string, SideEffectView>;
  /** Clock for axis labels and times (controlled). Without it the timeline keeps its own, starting at UTC. */
  zone?: TimeZoneMode;
  /** Called when the UTC / Local toggle is used. */
  onZoneChange?: (zone: TimeZoneMode) => void;
  /** Events failing this filter are dimmed and skipped by the arrow keys. */
  filter?: EventFilter;
  /** Epoch ms of "now" for a live run: open sandbox bars and the fitted window extend to it. */
  now?: number;
  /**
   * A long run's events counted on the server per lane and time bucket (the overview). Those not among `events` are
   * drawn as "not loaded" bins; zooming in asks for their detail through `onViewChange`.
   */
  serverBins?: readonly ServerBin[];
  /** The loaded events are complete from this instant (epoch ms) on; before it, tool calls without a loaded outcome get no bar. */
  completeFrom?: number;
  /** All events of the task, when more exist than are loaded (shown in the header and the label). */
  totalEvents?: number;
  /** Events per lane, when more exist than are loaded. */
  laneCounts?: Record<Plane, number>;
  /** Called with the zoomed window in real time (null: fitted), e.g. to fetch the window's detail. */
  onViewChange?: (domain: Domain | null) => void;
};

const AXIS_H = 26;
const RULE_ROW_H = 14;
const MAX_RULE_ROWS = 3;
const LANE_H = 36;
const ENV_MARK_ROW = 26;
const TOOLS_MARK_ROW = 26;
const MAX_CALL_ROWS = 3;
const BAR_H = 14;
const BAR_GAP = 4;
const CAPTION_H = 18;
const WIDE_MIN = 640;
const LABEL_W = 128;
const PAD_R = 14;
const BIN_PX = 24;
const MAX_PER_BUCKET = 3;
const MIN_SPAN_MS = 5;
const FALLBACK_WIDTH = 960;

type MarkItem = BinnableMark & { shape: MarkShape; type: string };

type Hover =
  | { kind: "event"; id: string }
  | { kind: "bin"; key: string }
  | { kind: "bar"; environmentId: string }
  | { kind: "rule"; eventId: string }
  | { kind: "call"; calledEventId: string }
  | { kind: "gap"; start: number };

type Drag = { pointerId: number; startX: number; startDomain: Domain; mode: "pan" | "brush"; moved: boolean };

const RULE_STYLE: Record<RuleKind, { line: string; text: string; dash?: string; width: number; testId: string }> = {
  interruption: {
    line: "stroke-red-500 dark:stroke-red-400",
    text: "fill-red-700 dark:fill-red-300",
    dash: "4 3",
    width: 1.5,
    testId: "interruption-rule",
  },
  stop: { line: "stroke-red-700 dark:stroke-red-400", text: "fill-red-800 dark:fill-red-300", width: 2, testId: "stop-rule" },
  finish: { line: "stroke-neutral-500 dark:stroke-neutral-400", text: "fill-neutral-700 dark:fill-neutral-300", width: 1.5, testId: "finish-rule" },
  restart: {
    line: "stroke-emerald-600 dark:stroke-emerald-400",
    text: "fill-emerald-800 dark:fill-emerald-300",
    dash: "2 2",
    width: 1.5,
    testId: "restart-rule",
  },
  resume: {
    line: "stroke-emerald-600 dark:stroke-emerald-400",
    text: "fill-emerald-800 dark:fill-emerald-300",
    width: 1.5,
    testId: "restart-rule",
  },
};

/** Which rule labels stay when they crowd (higher first). */
const RULE_PRIORITY: Record<RuleKind, number> = { interruption: 3, stop: 3, finish: 2, restart: 1, resume: 1 };

const RULE_WORD: Record<RuleKind, string> = {
  interruption: "Interruption",
  stop: "Run stopped",
  finish: "Run finished",
  restart: "Restart in a new sandbox",
  resume: "Run resumed",
};

const BIN_STYLE: Record<Outcome, { rect: string; text: string }> = {
  ok: { rect: "fill-neutral-700 dark:fill-neutral-300", text: "fill-white dark:fill-neutral-900" },
  unknown: { rect: "fill-amber-400 stroke-amber-800", text: "fill-amber-950" },
  denied: { rect: "fill-red-600", text: "fill-white" },
  failed: { rect: "fill-red-600", text: "fill-white" },
};

/**
 * The four-lane timeline. Props: see `TimelineProps`. Renders a toolbar (zoom, Fit, UTC / Local), the
 * focusable SVG (arrow keys step through events, Escape clears, + / − zoom, 0 fits), a tooltip and a
 * legend. Width follows its container; height follows the content.
 */
export function Timeline({
  events,
  selectedId,
  onSelect,
  sideEffects,
  zone: zoneProp,
  onZoneChange,
  filter,
  now,
  serverBins,
  completeFrom,
  totalEvents,
  laneCounts,
  onViewChange,
}: TimelineProps) {
  const [container, setContainer] = useState<HTMLDivElement | null>(null);
  const width = useElementWidth(container, FALLBACK_WIDTH);
  const svgRef = useRef<SVGSVGElement>(null);
  const dragRef = useRef<Drag | null>(null);
  const suppressClickRef = useRef(false);
  const uid = useId().replace(/[^a-zA-Z0-9_-]/g, "");
  const hydrated = useHydrated();

  const [zoneState, setZoneState] = useState<TimeZoneMode>("utc");
  const requestedZone = zoneProp ?? zoneState;
  // Local times depend on the viewer's zone, unknown to the server: show them once hydrated.
  const zone: TimeZoneMode = hydrated ? requestedZone : "utc";
  const setZone = (z: TimeZoneMode) => {
    setZoneState(z);
    onZoneChange?.(z);
  };

  // The zoomed window in real time (null: fit). Kept in real time so that it means the same when the idle
  // stretches change (new events on a live run) or their compression is switched off.
  const [viewDomain, setViewDomain] = useState<Domain | null>(null);
  const [compressIdle, setCompressIdle] = useState(true);
  const [hover, setHover] = useState<Hover | null>(null);
  const [brush, setBrush] = useState<{ a: number; b: number } | null>(null);
  const [dragging, setDragging] = useState(false);

  /* ---- data ---------------------------------------------------------------------------------- */
  const sorted = useMemo(() => sortEvents(events), [events]);
  const byId = useMemo(() => new Map(sorted.map((te) => [te.event.id, te])), [sorted]);
  const lastT = sorted.at(-1)?.t;
  const endOfData = Math.max(lastT ?? now ?? 0, now ?? -Infinity);
  const callBars = useMemo(() => {
    const all = deriveToolCallBars(sorted, endOfData, MAX_CALL_ROWS, sideEffects);
    if (completeFrom === undefined) return all;
    // Before `completeFrom` only some events are loaded: a call whose outcome is simply not loaded is left out
    // rather than drawn as if it had none.
    return all.filter((b) => b.start >= completeFrom || (b.status !== "pending" && b.status !== "no_result"));
  }, [sorted, endOfData, sideEffects, completeFrom]);
  const items = useMemo<MarkItem[]>(() => {
    // A call whose outcome is unknown marks its tool.called amber too, like the intent of an unknown effect.
    const unknownCalls = new Set(callBars.filter((b) => b.status === "unknown").map((b) => b.calledEventId));
    return sorted.map(({ event, t }) => ({
      id: event.id,
      plane: event.plane,
      t,
      outcome: unknownCalls.has(event.id) ? "unknown" : classifyOutcome(event, sideEffects),
      shape: markShape(event.type),
      type: event.type,
    }));
  }, [sorted, sideEffects, callBars]);
  const itemById = useMemo(() => new Map(items.map((i) => [i.id, i])), [items]);
  const countByPlane = useMemo(() => {
    if (laneCounts) return laneCounts;
    const counts: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
    for (const i of items) counts[i.plane] += 1;
    return counts;
  }, [items, laneCounts]);
  const eventTotal = Math.max(totalEvents ?? 0, sorted.length);
  // Server-counted events that are not loaded, per lane (real time).
  const unloaded = useMemo(() => {
    if (!serverBins?.length) return [];
    const byPlane: Record<Plane, { t: number; outcome: Outcome }[]> = { session: [], environment: [], tools: [], vault: [] };
    for (const i of items) byPlane[i.plane].push({ t: i.t, outcome: i.outcome });
    return unloadedCounts(serverBins, byPlane);
  }, [serverBins, items]);
  const bars = useMemo(() => deriveSandboxBars(sorted, endOfData), [sorted, endOfData]);
  const rules = useMemo(() => deriveRules(sorted), [sorted]);
  const instants = useMemo(
    () => [
      ...sorted.map((s) => s.t),
      ...bars.map((b) => b.end),
      ...(serverBins ?? []).flatMap((b) => [b.first, b.last]),
      ...(now !== undefined ? [now] : []),
    ],
    [sorted, bars, now, serverBins],
  );
  const hasIdle = useMemo(() => findIdleGaps(instants).length > 0, [instants]);
  // Fit and zoom work in "virtual" time, where idle stretches are short (layout.ts explains why); `warp` maps both ways.
  const { warp, fit } = useMemo(() => frameTimeline(instants, compressIdle, now ?? 0), [instants, compressIdle, now]);
  const maxSpan = Math.max((fit[1] - fit[0]) * 20, 3_600_000);
  const domain = viewDomain ? toVirtualDomain(warp, viewDomain) : fit;
  const setVirtualDomain = (d: Domain | null) => setViewDomain(d ? toRealDomain(warp, d) : null);
  const accept = useMemo(
    () => (filter ? (e: Pick<StoredEvent, "plane" | "type">) => matchesFilter(e, filter) : () => true),
    [filter],
  );

  // Follow a selection made elsewhere (the event list): bring it into view, keeping the zoom level.
  const [followed, setFollowed] = useState<string | null>(selectedId);
  if (followed !== selectedId) {
    setFollowed(selectedId);
    const te = selectedId !== null ? byId.get(selectedId) : undefined;
    if (te && viewDomain) {
      const current = toVirtualDomain(warp, viewDomain);
      const next = ensureVisible(current, warp.toVirtual(te.t));
      if (next !== current) setVirtualDomain(next);
    }
  }

  /* ---- geometry ------------------------------------------------------------------------------ */
  const wide = width >= WIDE_MIN;
  const captionH = wide ? 0 : CAPTION_H;
  const x0 = wide ? LABEL_W : 10;
  const x1 = Math.max(x0 + 40, width - PAD_R);
  const plotW = x1 - x0;
  const [d0, d1] = domain;
  const scale = useMemo(() => warpedTimeScale(warp, [d0, d1], [x0, x1], zone), [warp, d0, d1, x0, x1, zone]);
  /** Virtual time → px (linear): bins and the brush, which live in virtual time. */
  const xv = useMemo(() => scaleLinear().domain([d0, d1]).range([x0, x1]), [d0, d1, x0, x1]);
  const realStart = warp.toReal(d0);
  const realSpan = warp.toReal(d1) - realStart;

  // Idle stretches in view: a hatched band each, its length written in the axis row (ticks under the words go).
  const gapBands = useMemo(
    () =>
      warp.gaps
        .map((g) => {
          const gx0 = Math.max(x0, scale(new Date(g.start)));
          const gx1 = Math.min(x1, scale(new Date(g.end)));
          const text = `⋯ ${formatDuration(g.end - g.start)} ⋯`;
          return { gap: g, gx0, gx1, text, w: labelWidth(text) };
        })
        .filter((b) => b.gx1 > b.gx0),
    [warp, scale, x0, x1],
  );
  const ticks = warpedTicks(scale, warp.gaps, zone).filter((d) => {
    const tx = scale(d);
    return !gapBands.some((b) => Math.abs(tx - (b.gx0 + b.gx1) / 2) < b.w / 2 + 20);
  });

  // Labels of rules in view, thinned so that none overlaps: interruptions and stops first, then the newest.
  const ruleLayout = useMemo(() => {
    const placed = rules.map((rule) => {
      const x = scale(new Date(rule.t));
      const w = labelWidth(rule.label);
      const flip = x + 3 + w > x1 + PAD_R;
      return { rule, x, lx: flip ? x - 3 - w : x + 3, w, flip, inView: x >= x0 - 1 && x <= x1 + 1 };
    });
    const inView = placed.filter((p) => p.inView);
    const rows = thinLabels(
      inView.map((p) => ({ x: p.lx, width: p.w, priority: RULE_PRIORITY[p.rule.kind] })),
      MAX_RULE_ROWS,
    );
    const rowOf = new Map(inView.map((p, i) => [p.rule.eventId, rows[i] ?? null]));
    return placed.map((p) => ({ ...p, row: rowOf.get(p.rule.eventId) ?? null }));
  }, [rules, scale, x0, x1]);
  const ruleRows = ruleLayout.reduce((m, r) => (r.row === null ? m : Math.max(m, r.row + 1)), 0);
  const hiddenRuleLabels = ruleLayout.filter((r) => r.inView && r.row === null).length;
  const ruleBandH = ruleRows > 0 ? ruleRows * RULE_ROW_H + 4 : 0;

  const barRows = bars.reduce((m, b) => Math.max(m, b.row + 1), 0);
  const callRows = callBars.reduce((m, b) => Math.max(m, b.row + 1), 0);
  const laneBoxes = useMemo(() => {
    const boxes: { lane: (typeof LANES)[number]; top: number; h: number; markY: number }[] = [];
    for (const lane of LANES) {
      const top = boxes.reduce((sum, b) => sum + b.h, AXIS_H + ruleBandH);
      const env = lane.plane === "environment" && barRows > 0;
      const tools = lane.plane === "tools" && callRows > 0;
      const h = env
        ? captionH + ENV_MARK_ROW + barRows * (BAR_H + BAR_GAP) + 4
        : tools
          ? captionH + TOOLS_MARK_ROW + callRows * (CALL_BAR_H + CALL_BAR_GAP) + 4
          : captionH + LANE_H;
      const markOffset = env ? ENV_MARK_ROW / 2 : tools ? TOOLS_MARK_ROW / 2 : LANE_H / 2;
      boxes.push({ lane, top, h, markY: top + captionH + markOffset });
    }
    return boxes;
  }, [ruleBandH, barRows, callRows, captionH]);
  const lanesTop = AXIS_H + ruleBandH;
  const lanesBottom = laneBoxes.reduce((m, b) => Math.max(m, b.top + b.h), lanesTop);
  const height = lanesBottom + 4;
  const markY = (plane: Plane) => laneBoxes.find((b) => b.lane.plane === plane)?.markY ?? 0;
  const envBox = laneBoxes.find((b) => b.lane.plane === "environment");
  const barY = (row: number) => (envBox ? envBox.top + captionH + ENV_MARK_ROW + row * (BAR_H + BAR_GAP) : 0);
  const toolsBox = laneBoxes.find((b) => b.lane.plane === "tools");
  const callY = (row: number) => (toolsBox ? toolsBox.top + captionH + TOOLS_MARK_ROW + row * (CALL_BAR_H + CALL_BAR_GAP) : 0);

  /* ---- binning ------------------------------------------------------------------------------- */
  // Binned in virtual time (buckets of BIN_PX on screen); bins keep virtual times, marks their real ones.
  const binMs = (BIN_PX * (d1 - d0)) / plotW;
  const { marks, bins } = useMemo(() => {
    const visible = items
      .map((i) => ({ ...i, t: warp.toVirtual(i.t), item: i }))
      .filter((i) => i.t >= d0 - binMs && i.t <= d1 + binMs);
    const away = unloaded
      .map((u) => ({ ...u, t: warp.toVirtual(u.t), first: warp.toVirtual(u.first), last: warp.toVirtual(u.last) }))
      .filter((u) => u.last >= d0 - binMs && u.first <= d1 + binMs)
      .map((u) => ({ ...u, t: Math.min(Math.max(u.t, d0), d1) }));
    const out = binMarks(visible, {
      binMs,
      maxPerBucket: MAX_PER_BUCKET,
      keepIds: selectedId !== null ? new Set([selectedId]) : undefined,
      unloaded: away,
    });
    return { marks: out.marks.map((m) => m.item), bins: out.bins };
  }, [items, warp, d0, d1, binMs, selectedId, unloaded]);

  // Tell the host which window is in view (real time), once the view settles.
  useEffect(() => {
    if (!onViewChange) return;
    const timer = setTimeout(() => onViewChange(viewDomain), 250);
    return () => clearTimeout(timer);
  }, [viewDomain, onViewChange]);
  const binKey = (b: MarkBin) => `${b.plane}|${b.t0}`;
  const accepted = (id: string) => {
    const te = byId.get(id);
    return te ? accept(te.event) : false;
  };

  /* ---- interaction --------------------------------------------------------------------------- */
  useEffect(() => {
    const svg = svgRef.current;
    if (!svg) return;
    const onWheel = (e: WheelEvent) => {
      const rect = svg.getBoundingClientRect();
      const px = e.clientX - rect.left;
      if (px < x0 || px > x1 + PAD_R) return; // over the lane labels: let the page scroll
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? rect.height : 1;
      const dx = e.deltaX * unit;
      const dy = e.deltaY * unit;
      setHover(null);
      setViewDomain((prev) => {
        const d = prev ? toVirtualDomain(warp, prev) : fit;
        const s = scaleLinear().domain(d).range([x0, x1]);
        if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
          const delta = Math.abs(dx) > Math.abs(dy) ? dx : dy;
          return toRealDomain(warp, panDomain(d, s.invert(x0 + delta) - d[0]));
        }
        return toRealDomain(warp, zoomDomain(d, Math.exp(dy * 0.0015), s.invert(px), MIN_SPAN_MS, maxSpan));
      });
    };
    svg.addEventListener("wheel", onWheel, { passive: false });
    return () => svg.removeEventListener("wheel", onWheel);
  }, [x0, x1, fit, maxSpan, warp]);

  const localX = (e: { clientX: number }) => e.clientX - (svgRef.current?.getBoundingClientRect().left ?? 0);
  const clampX = (x: number) => Math.min(x1, Math.max(x0, x));

  const onPointerDown = (e: ReactPointerEvent<SVGSVGElement>) => {
    suppressClickRef.current = false;
    if (e.button !== 0) return;
    const px = localX(e);
    if (px < x0 - 4) return;
    dragRef.current = { pointerId: e.pointerId, startX: px, startDomain: domain, mode: e.shiftKey ? "brush" : "pan", moved: false };
  };
  const onPointerMove = (e: ReactPointerEvent<SVGSVGElement>) => {
    const drag = dragRef.current;
    if (!drag || drag.pointerId !== e.pointerId) return;
    const px = localX(e);
    if (!drag.moved) {
      if (Math.abs(px - drag.startX) < 4) return;
      drag.moved = true;
      e.currentTarget.setPointerCapture(e.pointerId);
      setDragging(true);
      setHover(null);
    }
    if (drag.mode === "brush") {
      setBrush({ a: clampX(drag.startX), b: clampX(px) });
    } else {
      const s = scaleLinear().domain(drag.startDomain).range([x0, x1]);
      setVirtualDomain(panDomain(drag.startDomain, s.invert(drag.startX) - s.invert(px)));
    }
  };
  const endDrag = (e: ReactPointerEvent<SVGSVGElement>, commit: boolean) => {
    const drag = dragRef.current;
    dragRef.current = null;
    if (!drag || drag.pointerId !== e.pointerId) return;
    if (!drag.moved) return;
    suppressClickRef.current = true;
    if (e.currentTarget.hasPointerCapture(e.pointerId)) e.currentTarget.releasePointerCapture(e.pointerId);
    setDragging(false);
    if (drag.mode === "brush") {
      const a = clampX(drag.startX);
      const b = clampX(localX(e));
      if (commit && Math.abs(b - a) >= 4) {
        const t0 = xv.invert(Math.min(a, b));
        const t1 = xv.invert(Math.max(a, b));
        const mid = (t0 + t1) / 2;
        const span = Math.max(t1 - t0, MIN_SPAN_MS);
        setVirtualDomain([mid - span / 2, mid + span / 2]);
      }
      setBrush(null);
    }
  };

  const select = (id: string) => {
    if (suppressClickRef.current) {
      suppressClickRef.current = false;
      return;
    }
    onSelect(id);
  };

  const zoomBy = (factor: number) => {
    const sel = selectedId !== null ? byId.get(selectedId) : undefined;
    const selV = sel ? warp.toVirtual(sel.t) : NaN;
    const anchor = selV >= d0 && selV <= d1 ? selV : (d0 + d1) / 2;
    setVirtualDomain(zoomDomain(domain, factor, anchor, MIN_SPAN_MS, maxSpan));
  };

  const openBin = (bin: MarkBin) => {
    if (suppressClickRef.current) {
      suppressClickRef.current = false;
      return;
    }
    const spread = bin.last - bin.first;
    const span = spread > 0 ? Math.max(spread * 1.6, MIN_SPAN_MS) : Math.max((d1 - d0) / 8, MIN_SPAN_MS);
    const mid = (bin.first + bin.last) / 2;
    setVirtualDomain([mid - span / 2, mid + span / 2]);
    const first = bin.ids[0];
    if (first !== undefined && bin.unloaded === 0) onSelect(first);
  };

  const onKeyDown = (e: ReactKeyboardEvent<SVGSVGElement>) => {
    setHover(null); // the tooltip follows the pointer; keyboard moves would leave it stale
    switch (e.key) {
      case "ArrowRight":
      case "ArrowLeft": {
        e.preventDefault();
        const id = neighbourId(sorted, selectedId, e.key === "ArrowRight" ? 1 : -1, accept);
        if (id !== null && id !== selectedId) onSelect(id);
        break;
      }
      case "Home":
      case "End": {
        e.preventDefault();
        const id = neighbourId(sorted, null, e.key === "Home" ? 1 : -1, accept);
        if (id !== null && id !== selectedId) onSelect(id);
        break;
      }
      case "Escape":
        if (selectedId !== null) {
          e.preventDefault();
          onSelect(null);
        }
        break;
      case "+":
      case "=":
        e.preventDefault();
        zoomBy(0.5);
        break;
      case "-":
      case "_":
        e.preventDefault();
        zoomBy(2);
        break;
      case "0":
        e.preventDefault();
        setViewDomain(null);
        break;
    }
  };

  /* ---- render helpers ------------------------------------------------------------------------ */
  const x = (t: number) => scale(new Date(t));
  const selected = selectedId !== null ? byId.get(selectedId) : undefined;
  const selectedItem = selectedId !== null ? itemById.get(selectedId) : undefined;
  const clipId = `tl-clip-${uid}`;
  const hintId = `tl-hint-${uid}`;
  const hatchId = `tl-hatch-${uid}`;

  const renderMark = (m: MarkItem) => {
    const isSelected = m.id === selectedId;
    const dim = !accepted(m.id);
    const style = OUTCOME_STYLE[m.outcome];
    return (
      <g
        key={m.id}
        data-testid="timeline-mark"
        data-kind="event"
        data-plane={m.plane}
        data-event-id={m.id}
        data-outcome={m.outcome}
        data-selected={isSelected ? "true" : undefined}
        transform={`translate(${x(m.t)},${markY(m.plane)})`}
        className={`cursor-pointer ${dim && !isSelected ? "opacity-25" : ""}`}
        onClick={() => select(m.id)}
        onPointerEnter={() => setHover({ kind: "event", id: m.id })}
        onPointerLeave={() => setHover(null)}
      >
        <circle r={10} fill="transparent" />
        {isSelected ? <circle r={10.5} className="fill-sky-100 stroke-neutral-900 dark:fill-sky-950 dark:stroke-white" strokeWidth={2} /> : null}
        {m.outcome !== "ok" ? (
          <circle
            r={8.5}
            fill="none"
            className={style.ring}
            strokeWidth={1}
            strokeDasharray={m.outcome === "unknown" ? "2 1.5" : undefined}
          />
        ) : null}
        <ShapePath shape={m.shape} className={style.mark} />
      </g>
    );
  };

  const renderBin = (bin: MarkBin) => {
    const key = binKey(bin);
    const label = bin.count < 1000 ? String(bin.count) : `${Math.floor(bin.count / 1000)}k`;
    const small = label.length > 2;
    const w = Math.max(16, label.length * (small ? 5.4 : 6.2) + 6);
    const dim = !bin.ids.some(accepted);
    const style = BIN_STYLE[bin.worst];
    return (
      <g
        key={key}
        data-testid="timeline-mark"
        data-kind="bin"
        data-plane={bin.plane}
        data-event-id={bin.ids[0]}
        data-bin-count={bin.count}
        data-unloaded={bin.unloaded || undefined}
        data-outcome={bin.worst}
        transform={`translate(${xv((bin.t0 + bin.t1) / 2)},${markY(bin.plane)})`}
        className={`cursor-zoom-in ${dim ? "opacity-25" : ""}`}
        onClick={() => openBin(bin)}
        onPointerEnter={() => setHover({ kind: "bin", key })}
        onPointerLeave={() => setHover(null)}
      >
        <rect
          x={-w / 2}
          y={-8}
          width={w}
          height={16}
          rx={8}
          className={style.rect}
          strokeWidth={1}
          strokeDasharray={bin.unloaded ? "3 2" : undefined}
          fillOpacity={bin.unloaded ? 0.7 : undefined}
        />
        <text textAnchor="middle" y={3.5} className={`${small ? "text-[9px]" : "text-[10px]"} font-semibold ${style.text}`}>
          {label}
        </text>
      </g>
    );
  };

  const renderBar = (bar: SandboxBar) => {
    const bx0 = x(bar.start);
    const bx1 = x(bar.end);
    const bw = Math.max(2, bx1 - bx0);
    const by = barY(bar.row);
    const fullLabel = `${sandboxBarLabel(bar)}${bar.open ? " (no end recorded)" : ""}`;
    // Only the part of the bar inside the plot can hold text; a label that does not fit whole is shortened or
    // left out (the tooltip names the attempt), never cut off or drawn over the next bar.
    const visibleX0 = Math.max(bx0, x0);
    const room = Math.min(bx1, x1) - visibleX0 - 8;
    const label = fitSandboxBarLabel(bar, room);
    const labelX = visibleX0 - bx0 + 4;
    return (
      <g
        key={bar.environmentId}
        data-testid="sandbox-bar"
        data-environment-id={bar.environmentId}
        data-attempt={bar.attempt ?? undefined}
        data-open={bar.open ? "true" : "false"}
        data-label={fullLabel}
        className={bar.createdEventId ? "cursor-pointer" : undefined}
        onClick={() => (bar.createdEventId ? select(bar.createdEventId) : undefined)}
        onPointerEnter={() => setHover({ kind: "bar", environmentId: bar.environmentId })}
        onPointerLeave={() => setHover(null)}
      >
        <rect
          x={bx0}
          y={by}
          width={bw}
          height={BAR_H}
          rx={3}
          className={
            bar.open
              ? "fill-emerald-50 stroke-emerald-700 dark:fill-emerald-950 dark:stroke-emerald-400"
              : "fill-neutral-200 stroke-neutral-500 dark:fill-neutral-700 dark:stroke-neutral-400"
          }
          strokeWidth={1}
          strokeDasharray={bar.open ? "4 2" : undefined}
        />
        {label !== null ? (
          <svg x={bx0} y={by} width={bw} height={BAR_H} overflow="hidden">
            <text
              x={labelX}
              y={10.5}
              className="fill-neutral-800 text-[10px] font-medium dark:fill-neutral-100"
              data-testid="sandbox-bar-label"
            >
              {label}
            </text>
          </svg>
        ) : null}
      </g>
    );
  };

  /* ---- tooltip ------------------------------------------------------------------------------- */
  let tooltip: { x: number; y: number; body: ReactNode } | null = null;
  if (hover?.kind === "event") {
    const te = byId.get(hover.id);
    const item = itemById.get(hover.id);
    if (te && item) {
      const seName = sideEffectNameOf(te.event);
      const se = seName !== null && sideEffects && Object.hasOwn(sideEffects, seName) ? sideEffects[seName] : undefined;
      tooltip = {
        x: x(item.t),
        y: markY(item.plane),
        body: (
          <>
            <div className="font-mono font-semibold break-all">{te.event.type}</div>
            <div className="mt-0.5 tabular-nums">{formatInstant(te.t, zone)}</div>
            <div className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-0.5">
              <span>{planeLabel(te.event.plane)}</span>
              <span className="inline-flex items-center gap-1">
                <MarkGlyph shape={item.shape} outcome={item.outcome} />
                {SHAPE_WORD[item.shape]}
              </span>
              <OutcomeLabel outcome={item.outcome} />
            </div>
            {te.event.attempt !== null ? <div>attempt {te.event.attempt}</div> : null}
            {se ? (
              <div className="mt-1">
                side effect <span className="font-mono">{seName}</span>: <SideEffectStatusLabel status={se.status} />
              </div>
            ) : null}
            {te.event.redaction_count > 0 ? (
              <div className="mt-1 text-amber-800 dark:text-amber-300">
                {te.event.redaction_count} {te.event.redaction_count === 1 ? "value" : "values"} redacted
              </div>
            ) : null}
          </>
        ),
      };
    }
  } else if (hover?.kind === "bin") {
    const bin = bins.find((b) => binKey(b) === hover.key);
    if (bin) {
      const problems = (["failed", "denied", "unknown"] as const).filter((o) => bin.outcomes[o] > 0);
      tooltip = {
        x: xv((bin.t0 + bin.t1) / 2),
        y: markY(bin.plane),
        body: (
          <>
            <div className="font-semibold">
              {bin.count} events in {planeLabel(bin.plane)}
            </div>
            <div className="tabular-nums">
              {formatInstant(warp.toReal(bin.first), zone)}
              {bin.last > bin.first ? ` + ${formatDuration(warp.toReal(bin.last) - warp.toReal(bin.first))}` : ""}
            </div>
            <div className="mt-1 flex flex-wrap gap-x-2">
              {problems.length === 0 ? (
                <OutcomeLabel outcome="ok" />
              ) : (
                problems.map((o) => (
                  <span key={o} className="inline-flex items-center gap-1">
                    {bin.outcomes[o]} <OutcomeLabel outcome={o} />
                  </span>
                ))
              )}
            </div>
            {bin.unloaded > 0 ? (
              <div className="mt-1">{bin.unloaded} not loaded yet: zooming in loads them.</div>
            ) : null}
            <div className="mt-1 text-neutral-500 dark:text-neutral-400">Click to zoom in.</div>
          </>
        ),
      };
    }
  } else if (hover?.kind === "bar") {
    const bar = bars.find((b) => b.environmentId === hover.environmentId);
    if (bar) {
      tooltip = {
        x: Math.min(Math.max(x(bar.start), x0), x1),
        y: barY(bar.row) + BAR_H / 2,
        body: (
          <>
            <div className="font-semibold">Sandbox · {sandboxBarLabel(bar)}</div>
            <div className="text-neutral-500 dark:text-neutral-400">sandbox id (pointer, not trusted)</div>
            <div className="font-mono break-all">{bar.environmentId}</div>
            <div className="mt-1 tabular-nums">
              {bar.createdEventId ? "created" : "first seen"} {formatInstant(bar.start, zone)}
            </div>
            <div>
              {bar.open
                ? "no destroy or replace recorded"
                : `${bar.endedBy} after ${formatDuration(bar.end - bar.start)}`}
            </div>
          </>
        ),
      };
    }
  } else if (hover?.kind === "rule") {
    const placed = ruleLayout.find((r) => r.rule.eventId === hover.eventId);
    const te = byId.get(hover.eventId);
    if (placed && te) {
      const reason = te.event.attrs.reason;
      tooltip = {
        x: placed.x,
        y: AXIS_H + (placed.row ?? 0) * RULE_ROW_H + 8,
        body: (
          <>
            <div className="font-semibold">{RULE_WORD[placed.rule.kind]}</div>
            <div className="font-mono">{te.event.type}</div>
            <div className="tabular-nums">{formatInstant(te.t, zone)}</div>
            {placed.rule.attempt !== null ? <div>attempt {placed.rule.attempt}</div> : null}
            {typeof reason === "string" ? <div className="break-words">reason: {reason}</div> : null}
          </>
        ),
      };
    }
  } else if (hover?.kind === "call") {
    const bar = callBars.find((b) => b.calledEventId === hover.calledEventId);
    if (bar) {
      tooltip = {
        x: Math.min(Math.max(x(bar.start), x0), x1),
        y: callY(bar.row) + CALL_BAR_H / 2,
        body: toolCallTooltip(bar, zone),
      };
    }
  } else if (hover?.kind === "gap") {
    const band = gapBands.find((b) => b.gap.start === hover.start);
    if (band) {
      tooltip = {
        x: (band.gx0 + band.gx1) / 2,
        y: AXIS_H - 4,
        body: (
          <>
            <div className="font-semibold">No events for {formatDuration(band.gap.end - band.gap.start)}</div>
            <div className="tabular-nums">from {formatInstant(band.gap.start, zone)}</div>
            <div className="tabular-nums">to {formatInstant(band.gap.end, zone)}</div>
            <div className="mt-1 text-neutral-600 dark:text-neutral-300">Drawn narrow so the rest of the run stays readable; zoom in to widen it.</div>
          </>
        ),
      };
    }
  }

  const tooltipAbove = tooltip !== null && tooltip.y > height - 90;

  /* ---- render -------------------------------------------------------------------------------- */
  return (
    <section className="min-w-0 rounded-lg border border-neutral-200 bg-white dark:border-neutral-800 dark:bg-neutral-950">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2 border-b border-neutral-200 px-3 py-2 text-xs dark:border-neutral-800">
        <span className="text-neutral-600 dark:text-neutral-300">
          <span className="font-medium text-neutral-900 dark:text-neutral-100">{eventTotal}</span>{" "}
          {eventTotal === 1 ? "event" : "events"}
          {eventTotal > sorted.length ? ` (${sorted.length} loaded)` : ""}
        </span>
        <span className="text-neutral-500 tabular-nums dark:text-neutral-400">
          {formatDate(realStart, zone)} {zoneSuffix(realStart, zone)} · window {formatDuration(realSpan)}
          {warp.gaps.length ? ` (idle stretches compressed)` : ""}
          {hiddenRuleLabels > 0 ? ` · ${hiddenRuleLabels} marker ${hiddenRuleLabels === 1 ? "label" : "labels"} hidden (zoom in)` : ""}
        </span>
        <div className="ml-auto flex flex-wrap items-center gap-2">
          <div className="inline-flex overflow-hidden rounded-md border border-neutral-300 dark:border-neutral-700">
            <button
              type="button"
              onClick={() => zoomBy(2)}
              aria-label="Zoom out"
              title="Zoom out (−)"
              className="px-2 py-1 hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:hover:bg-neutral-800"
            >
              −
            </button>
            <button
              type="button"
              onClick={() => zoomBy(0.5)}
              aria-label="Zoom in"
              title="Zoom in (+)"
              className="border-l border-neutral-300 px-2 py-1 hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 dark:hover:bg-neutral-800"
            >
              +
            </button>
            <button
              type="button"
              onClick={() => setViewDomain(null)}
              title="Fit all events (0)"
              className="border-l border-neutral-300 px-2 py-1 font-medium hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 dark:hover:bg-neutral-800"
            >
              Fit
            </button>
          </div>
          {hasIdle ? (
            <button
              type="button"
              aria-pressed={compressIdle}
              onClick={() => setCompressIdle((c) => !c)}
              title="Draw long stretches without events narrow, so the rest of the run stays readable"
              className={`rounded-md border border-neutral-300 px-2 py-1 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 ${
                compressIdle
                  ? "bg-neutral-900 text-white dark:bg-neutral-100 dark:text-neutral-900"
                  : "hover:bg-neutral-100 dark:hover:bg-neutral-800"
              }`}
            >
              Compress idle time
            </button>
          ) : null}
          <div
            role="group"
            aria-label="Time zone"
            className="inline-flex overflow-hidden rounded-md border border-neutral-300 dark:border-neutral-700"
          >
            {(["utc", "local"] as const).map((z, i) => (
              <button
                key={z}
                type="button"
                aria-pressed={requestedZone === z}
                onClick={() => setZone(z)}
                className={`px-2 py-1 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 ${
                  i > 0 ? "border-l border-neutral-300 dark:border-neutral-700" : ""
                } ${
                  requestedZone === z
                    ? "bg-neutral-900 text-white dark:bg-neutral-100 dark:text-neutral-900"
                    : "hover:bg-neutral-100 dark:hover:bg-neutral-800"
                }`}
              >
                {z === "utc" ? "UTC" : "Local"}
              </button>
            ))}
          </div>
        </div>
      </div>

      <div ref={setContainer} className="relative w-full min-w-0 overflow-hidden">
        <svg
          ref={svgRef}
          width={width}
          height={height}
          tabIndex={0}
          role="group"
          aria-roledescription="timeline"
          aria-label={`Timeline of ${eventTotal} events in four lanes: Session, Environment, Tools & egress, Vault`}
          aria-describedby={hintId}
          className={`block touch-pan-y select-none focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 ${
            dragging ? "cursor-grabbing" : "cursor-grab"
          }`}
          onKeyDown={onKeyDown}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={(e) => endDrag(e, true)}
          onPointerCancel={(e) => endDrag(e, false)}
        >
          <defs>
            <clipPath id={clipId}>
              <rect x={x0 - 6} y={0} width={plotW + 6 + PAD_R} height={height} />
            </clipPath>
            <pattern id={hatchId} patternUnits="userSpaceOnUse" width={6} height={6} patternTransform="rotate(45)">
              <line x1={0} y1={0} x2={0} y2={6} className="stroke-neutral-300 dark:stroke-neutral-700" strokeWidth={2} />
            </pattern>
          </defs>

          {laneBoxes.map(({ lane, top, h }, i) => (
            <g key={lane.plane} data-testid="timeline-lane" data-plane={lane.plane}>
              <rect
                x={0}
                y={top}
                width={width}
                height={h}
                className={i % 2 === 0 ? "fill-white dark:fill-neutral-950" : "fill-neutral-50 dark:fill-neutral-900"}
              />
              {ticks.map((d) => (
                <line
                  key={d.getTime()}
                  x1={scale(d)}
                  x2={scale(d)}
                  y1={top}
                  y2={top + h}
                  className="stroke-neutral-200 dark:stroke-neutral-800"
                />
              ))}
              {gapBands.map((b) => (
                <rect
                  key={b.gap.start}
                  x={b.gx0}
                  y={top}
                  width={b.gx1 - b.gx0}
                  height={h}
                  fill={`url(#${hatchId})`}
                  className="opacity-70"
                  pointerEvents="none"
                />
              ))}
              <line x1={0} x2={width} y1={top + h} y2={top + h} className="stroke-neutral-200 dark:stroke-neutral-800" />
              {wide ? (
                <>
                  <text x={12} y={top + h / 2 - 1} className="fill-neutral-800 text-[12px] font-medium dark:fill-neutral-100">
                    {lane.label}
                  </text>
                  <text x={12} y={top + h / 2 + 11} className="fill-neutral-600 text-[10px] dark:fill-neutral-400" data-testid="lane-count">
                    {countByPlane[lane.plane]} {countByPlane[lane.plane] === 1 ? "event" : "events"}
                  </text>
                </>
              ) : null}
              <g clipPath={`url(#${clipId})`}>
                {lane.plane === "environment" ? bars.map(renderBar) : null}
                {lane.plane === "tools" ? (
                  <ToolCallBars
                    bars={callBars}
                    x={x}
                    x0={x0}
                    x1={x1}
                    y={callY}
                    selectedId={selectedId}
                    onSelect={select}
                    onHover={(id) => setHover(id === null ? null : { kind: "call", calledEventId: id })}
                  />
                ) : null}
                {bins.filter((b) => b.plane === lane.plane).map(renderBin)}
                {marks.filter((m) => m.plane === lane.plane && m.id !== selectedId).map(renderMark)}
                {selectedItem && selectedItem.plane === lane.plane && marks.includes(selectedItem) ? renderMark(selectedItem) : null}
                {/* Narrow: the rules cross each lane here, under its name (wide: one line across all lanes, below). */}
                {wide
                  ? null
                  : ruleLayout.map(({ rule, x: rx }) =>
                      rx < x0 - 1 || rx > x1 + 1 ? null : (
                        <line
                          key={rule.eventId}
                          x1={rx}
                          x2={rx}
                          y1={top}
                          y2={top + h}
                          className={RULE_STYLE[rule.kind].line}
                          strokeWidth={RULE_STYLE[rule.kind].width}
                          strokeDasharray={RULE_STYLE[rule.kind].dash}
                          pointerEvents="none"
                        />
                      ),
                    )}
              </g>
              {wide ? null : (
                // Narrow: the lane's name in a caption row above its marks, drawn after them and the rules with a
                // halo in the lane's colour, so no mark, bin count, bar or rule can cover it.
                <text
                  x={x0}
                  y={top + 12}
                  data-testid="timeline-lane-label"
                  paintOrder="stroke"
                  strokeWidth={4}
                  strokeLinejoin="round"
                  pointerEvents="none"
                  className={`fill-neutral-800 text-[11px] font-medium dark:fill-neutral-100 ${
                    i % 2 === 0 ? "stroke-white dark:stroke-neutral-950" : "stroke-neutral-50 dark:stroke-neutral-900"
                  }`}
                >
                  {lane.label}
                </text>
              )}
            </g>
          ))}

          {/* Selected instant, across all lanes */}
          {selected && warp.toVirtual(selected.t) >= d0 && warp.toVirtual(selected.t) <= d1 ? (
            <line
              x1={x(selected.t)}
              x2={x(selected.t)}
              y1={lanesTop}
              y2={lanesBottom}
              className="stroke-neutral-900/40 dark:stroke-white/40"
              strokeWidth={1}
              pointerEvents="none"
            />
          ) : null}

          {/* Interruptions, restarts, resumes and stops, across all lanes */}
          <g clipPath={`url(#${clipId})`}>
            {ruleLayout.map(({ rule, x: rx, lx, row }) => {
              if (rx < x0 - 1 || rx > x1 + 1) return null;
              const style = RULE_STYLE[rule.kind];
              return (
                <g
                  key={rule.eventId}
                  data-testid={style.testId}
                  data-kind={rule.kind}
                  data-event-id={rule.eventId}
                  data-label-shown={row === null ? "false" : "true"}
                >
                  <line
                    x1={rx}
                    x2={rx}
                    y1={AXIS_H + (row ?? 0) * RULE_ROW_H + 2}
                    y2={wide ? lanesBottom : lanesTop}
                    className={style.line}
                    strokeWidth={style.width}
                    strokeDasharray={style.dash}
                    pointerEvents="none"
                  />
                  {row === null ? null : (
                    <text
                      x={lx}
                      y={AXIS_H + row * RULE_ROW_H + 12}
                      className={`cursor-pointer text-[10px] font-semibold ${style.text}`}
                      data-testid="rule-label"
                      onClick={() => select(rule.eventId)}
                      onPointerEnter={() => setHover({ kind: "rule", eventId: rule.eventId })}
                      onPointerLeave={() => setHover(null)}
                    >
                      {rule.label}
                    </text>
                  )}
                </g>
              );
            })}
          </g>

          {/* Axis */}
          <g aria-hidden="true">
            <rect x={0} y={0} width={width} height={AXIS_H} className="fill-white dark:fill-neutral-950" />
            {wide ? (
              <text x={12} y={AXIS_H - 9} className="fill-neutral-500 text-[10px] dark:fill-neutral-400">
                {zoneSuffix(realStart, zone)}
              </text>
            ) : null}
            {ticks.map((d, i) => {
              const tx = scale(d);
              // The first tick after an idle stretch names the whole clock time (":29" alone would hide the jump).
              const prev = i > 0 ? ticks[i - 1]!.getTime() : -Infinity;
              const afterGap = warp.gaps.some((g) => g.end <= d.getTime() && g.end > prev);
              const anchor = tx < x0 + 18 ? "start" : tx > x1 - 18 ? "end" : "middle";
              return (
                <g key={d.getTime()}>
                  <line x1={tx} x2={tx} y1={AXIS_H - 5} y2={AXIS_H} className="stroke-neutral-400 dark:stroke-neutral-600" />
                  <text x={tx} y={AXIS_H - 9} textAnchor={anchor} className="fill-neutral-600 text-[10px] tabular-nums dark:fill-neutral-400">
                    {afterGap ? formatClock(d.getTime(), zone).replace(/\.000$/, "") : formatTick(d, zone)}
                  </text>
                </g>
              );
            })}
            {gapBands.map((b) => (
              <g
                key={b.gap.start}
                data-testid="idle-gap"
                data-duration-ms={b.gap.end - b.gap.start}
                onPointerEnter={() => setHover({ kind: "gap", start: b.gap.start })}
                onPointerLeave={() => setHover(null)}
              >
                <rect x={b.gx0} y={AXIS_H - 5} width={b.gx1 - b.gx0} height={5} fill={`url(#${hatchId})`} />
                <text
                  x={Math.min(Math.max((b.gx0 + b.gx1) / 2, x0 + b.w / 2), x1 + PAD_R - b.w / 2)}
                  y={AXIS_H - 9}
                  textAnchor="middle"
                  className="fill-neutral-700 text-[10px] tabular-nums dark:fill-neutral-300"
                >
                  {b.text}
                </text>
              </g>
            ))}
            <line x1={0} x2={width} y1={AXIS_H} y2={AXIS_H} className="stroke-neutral-300 dark:stroke-neutral-700" />
          </g>

          {brush ? (
            <rect
              x={Math.min(brush.a, brush.b)}
              y={lanesTop}
              width={Math.abs(brush.b - brush.a)}
              height={lanesBottom - lanesTop}
              className="fill-sky-500/15 stroke-sky-600"
              strokeDasharray="3 2"
              pointerEvents="none"
            />
          ) : null}
        </svg>

        {sorted.length === 0 ? (
          <p className="pointer-events-none absolute inset-x-0 top-1/2 -translate-y-1/2 text-center text-sm text-neutral-500 dark:text-neutral-400">
            No events recorded for this task yet.
          </p>
        ) : null}

        {tooltip ? (
          <div
            role="tooltip"
            className={`pointer-events-none absolute z-20 w-64 max-w-[calc(100%-8px)] rounded-md border border-neutral-200 bg-white p-2 text-xs text-neutral-800 shadow-lg dark:border-neutral-700 dark:bg-neutral-900 dark:text-neutral-100 ${
              tooltipAbove ? "-translate-y-full" : ""
            }`}
            style={{
              left: Math.max(4, Math.min(tooltip.x - 24, width - 264)),
              top: tooltipAbove ? tooltip.y - 14 : tooltip.y + 14,
            }}
          >
            {tooltip.body}
          </div>
        ) : null}
      </div>

      <Legend hintId={hintId} />

      <p className="sr-only" aria-live="polite">
        {selected && selectedItem
          ? `Selected ${selected.event.type}, ${planeLabel(selected.event.plane)}, ${formatInstant(selected.t, zone)}, ${selectedItem.outcome}.`
          : ""}
      </p>
    </section>
  );
}

/** Shapes, outcomes and controls, in words (no colour-only meaning). */
function Legend({ hintId }: { hintId: string }) {
  return (
    <div className="flex flex-wrap items-center gap-x-4 gap-y-1 border-t border-neutral-200 px-3 py-2 text-[11px] text-neutral-600 dark:border-neutral-800 dark:text-neutral-400">
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        {(["circle", "diamond", "square", "triangle"] as const).map((shape) => (
          <span key={shape} className="inline-flex items-center gap-1">
            <MarkGlyph shape={shape} outcome="ok" />
            {SHAPE_WORD[shape]}
          </span>
        ))}
      </span>
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        <OutcomeLabel outcome="ok" />
        <OutcomeLabel outcome="denied" />
        <OutcomeLabel outcome="failed" />
        <OutcomeLabel outcome="unknown" />
      </span>
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        <span className="inline-flex items-center gap-1">
          <svg width={22} height={10} aria-hidden="true">
            <rect x={0.5} y={0.5} width={21} height={9} rx={2} className="fill-neutral-200 stroke-neutral-500" />
          </svg>
          tool call, call → outcome
        </span>
        <span className="inline-flex items-center gap-1">
          <svg width={22} height={10} aria-hidden="true">
            <rect x={0.5} y={0.5} width={21} height={9} rx={2} className="fill-amber-100 stroke-amber-800" strokeDasharray="3 2" />
          </svg>
          ? outcome unknown
        </span>
      </span>
      <span id={hintId} className="sm:ml-auto">
        Scroll to zoom · drag to pan · Shift-drag to zoom to a range · ←/→ step through events · Esc clears
      </span>
    </div>
  );
}


/** A real-time window in virtual time. */
function toVirtualDomain(warp: TimeWarp, d: Domain): Domain {
  return [warp.toVirtual(d[0]), warp.toVirtual(d[1])];
}

/** A virtual-time window in real time. */
function toRealDomain(warp: TimeWarp, d: Domain): Domain {
  return [warp.toReal(d[0]), warp.toReal(d[1])];
}
