"use client";

/**
 * Four-lane timeline of one task (UX.md "Task page" → "Timeline"): Session, Environment, Tools & egress
 * and Vault on one shared time axis, sandbox instances as bars, interruptions and restarts as rules
 * across all lanes, events as marks shaped by kind and coloured by outcome, crowded marks binned.
 *
 * This file holds the state and the layout; its parts are drawn by TimelineAxis (time axis), TimelineLane (one
 * lane), marks.tsx (event marks, bins, sandbox bars), ToolCallBars, TimelineRules (interruptions and restarts),
 * TimelineTooltip and TimelineControls (toolbar, legend); pointer and keyboard handling is useTimelineInteraction;
 * the layout maths is model/ (one file per idea). For a long run only part of the events is loaded: `serverBins`
 * count the rest (docs/decisions/0015-timeline-overview-and-arrival-feed.md).
 */
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { Plane, SideEffectView, StoredEvent } from "@/lib/contract/api";
import {
  AXIS_H,
  BAR_GAP,
  BAR_H,
  BIN_PX,
  CAPTION_H,
  ENV_MARK_ROW,
  FALLBACK_WIDTH,
  LABEL_W,
  LANE_H,
  MAX_CALL_ROWS,
  MAX_PER_BUCKET,
  MAX_RULE_ROWS,
  PAD_R,
  RULE_PRIORITY,
  RULE_ROW_H,
  TOOLS_MARK_ROW,
  WIDE_MIN,
  toRealDomain,
  toVirtualDomain,
  type Hover,
  type MarkItem,
} from "./constants";
import {
  formatClock,
  formatDate,
  formatDuration,
  formatInstant,
  formatTick,
  zoneSuffix,
  type TimeZoneMode,
} from "./format";
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
  frameTimeline,
  labelWidth,
  markShape,
  matchesFilter,
  planeLabel,
  sortEvents,
  placeAxisLabels,
  thinLabels,
  unloadedCounts,
  warpedTicks,
  warpedTimeScale,
  type Domain,
  type EventFilter,
  type Outcome,
  type ServerBin,
} from "./model";
import { ConstraintsUncheckedMark, EventMark, LaneBins, SandboxBarMark } from "./marks";
import { CALL_BAR_GAP, CALL_BAR_H, ToolCallBars } from "./ToolCallBars";
import { TimelineAxis } from "./TimelineAxis";
import { Legend, TimelineControls } from "./TimelineControls";
import { TimelineLane } from "./TimelineLane";
import { TimelineRules } from "./TimelineRules";
import { linearScale } from "./scale";
import { describeHover } from "./TimelineTooltip";
import { useTimelineInteraction } from "./useTimelineInteraction";

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
  /**
   * The compaction no `constraint.checked` followed (the gate's rule): marked "constraints not re-checked" in the
   * Session lane at its time, whether or not its event is loaded, linking to `href` (the gate's reason).
   */
  constraintsUnchecked?: { eventId: string; occurredAt: string; href: string } | null;
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
  constraintsUnchecked,
}: TimelineProps) {
  const [container, setContainer] = useState<HTMLDivElement | null>(null);
  const width = useElementWidth(container, FALLBACK_WIDTH);
  const svgRef = useRef<SVGSVGElement>(null);
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
    const byPlane: Record<Plane, { t: number; outcome: Outcome }[]> = {
      session: [],
      environment: [],
      tools: [],
      vault: [],
    };
    for (const i of items) byPlane[i.plane].push({ t: i.t, outcome: i.outcome });
    return unloadedCounts(serverBins, byPlane);
  }, [serverBins, items]);
  const bars = useMemo(() => deriveSandboxBars(sorted, endOfData), [sorted, endOfData]);
  const rules = useMemo(() => deriveRules(sorted), [sorted]);
  const constraintsT = constraintsUnchecked ? Date.parse(constraintsUnchecked.occurredAt) : NaN;
  const constraints =
    constraintsUnchecked && Number.isFinite(constraintsT)
      ? { eventId: constraintsUnchecked.eventId, t: constraintsT, href: constraintsUnchecked.href }
      : null;
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
  // Fit and zoom work in "virtual" time, where idle stretches are short (model/time-warp.ts explains why); `warp` maps both ways.
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
  const xv = useMemo(() => linearScale([d0, d1], [x0, x1]), [d0, d1, x0, x1]);
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
          const w = labelWidth(text);
          // The length is written over its band, kept inside the plot.
          const lx = Math.min(Math.max((gx0 + gx1) / 2, x0 + w / 2), x1 + PAD_R - w / 2);
          return { gap: g, gx0, gx1, text, w, lx };
        })
        .filter((b) => b.gx1 > b.gx0),
    [warp, scale, x0, x1],
  );
  // Tick labels that touch no other axis label (the idle-stretch lengths, the zone name, each other): the grid lines
  // follow the labelled ticks. At 420 px a full clock time after an idle stretch is wider than ticks are apart.
  const candidates = warpedTicks(scale, warp.gaps, zone);
  const axisFixed = [
    ...gapBands.map((b) => ({ left: b.lx - b.w / 2, right: b.lx + b.w / 2 })),
    ...(wide ? [{ left: 12, right: 12 + labelWidth(zoneSuffix(realStart, zone)) }] : []),
  ];
  // The first labelled tick after an idle stretch names the whole clock time (":29" alone would hide the jump). A tick
  // whose label does not fit is left out, so the ticks that name the whole time are found again among those kept.
  const placeTicks = (full: ReadonlySet<number>) =>
    placeAxisLabels(
      candidates.map((d) => {
        const whole = full.has(d.getTime());
        const text = whole ? formatClock(d.getTime(), zone).replace(/\.000$/, "") : formatTick(d, zone);
        return { item: { d, text, whole }, x: scale(d), text, priority: whole ? 1 : 0 };
      }),
      axisFixed,
      x0,
      x1,
    );
  const afterGaps = (kept: readonly Date[]) =>
    new Set(
      kept
        .filter((d, i) => {
          const prev = i > 0 ? kept[i - 1]!.getTime() : -Infinity;
          return warp.gaps.some((g) => g.end <= d.getTime() && g.end > prev);
        })
        .map((d) => d.getTime()),
    );
  let tickLabels = placeTicks(afterGaps(candidates));
  const wholeKept = afterGaps(tickLabels.map((l) => l.item.d));
  if (tickLabels.some((l) => wholeKept.has(l.item.d.getTime()) !== l.item.whole)) tickLabels = placeTicks(wholeKept);
  const ticks = tickLabels.map((l) => l.item.d);

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
  const callY = (row: number) =>
    toolsBox ? toolsBox.top + captionH + TOOLS_MARK_ROW + row * (CALL_BAR_H + CALL_BAR_GAP) : 0;

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

  /* ---- interaction --------------------------------------------------------------------------- */
  const { onPointerDown, onPointerMove, endDrag, onKeyDown, select, zoomBy, openBin, brush, dragging } =
    useTimelineInteraction({
      svgRef,
      x0,
      x1,
      fit,
      domain,
      xv,
      maxSpan,
      warp,
      sorted,
      byId,
      selectedId,
      onSelect,
      accept,
      setViewDomain,
      setVirtualDomain,
      setHover,
    });

  /* ---- render helpers ------------------------------------------------------------------------ */
  const x = (t: number) => scale(new Date(t));
  const selected = selectedId !== null ? byId.get(selectedId) : undefined;
  const selectedItem = selectedId !== null ? itemById.get(selectedId) : undefined;
  const clipId = `tl-clip-${uid}`;
  const hintId = `tl-hint-${uid}`;
  const hatchId = `tl-hatch-${uid}`;
  const accepted = (id: string) => {
    const te = byId.get(id);
    return te ? accept(te.event) : false;
  };
  const renderMark = (m: MarkItem) => (
    <EventMark
      key={m.id}
      mark={m}
      x={x(m.t)}
      y={markY(m.plane)}
      selected={m.id === selectedId}
      dim={!accepted(m.id)}
      onSelect={select}
      onHover={setHover}
    />
  );

  const tooltip = describeHover(hover, {
    byId,
    itemById,
    sideEffects,
    zone,
    warp,
    x,
    xv,
    x0,
    x1,
    markY,
    barY,
    callY,
    bins,
    bars,
    callBars,
    ruleLayout,
    gapBands,
    constraints,
  });
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
          {hiddenRuleLabels > 0
            ? ` · ${hiddenRuleLabels} marker ${hiddenRuleLabels === 1 ? "label" : "labels"} hidden (zoom in)`
            : ""}
        </span>
        <TimelineControls
          zoomBy={zoomBy}
          onFit={() => setViewDomain(null)}
          hasIdle={hasIdle}
          compressIdle={compressIdle}
          onToggleCompress={() => setCompressIdle((c) => !c)}
          zone={requestedZone}
          onZone={setZone}
        />
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
          data-hydrated={hydrated ? "true" : undefined}
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
              <line
                x1={0}
                y1={0}
                x2={0}
                y2={6}
                className="stroke-neutral-300 dark:stroke-neutral-700"
                strokeWidth={2}
              />
            </pattern>
          </defs>

          {laneBoxes.map(({ lane, top, h }, i) => (
            <TimelineLane
              key={lane.plane}
              lane={lane}
              index={i}
              top={top}
              h={h}
              width={width}
              wide={wide}
              x0={x0}
              x1={x1}
              count={countByPlane[lane.plane]}
              ticks={ticks}
              scale={scale}
              gapBands={gapBands}
              ruleLayout={ruleLayout}
              hatchId={hatchId}
              clipId={clipId}
            >
              {lane.plane === "environment"
                ? bars.map((bar) => (
                    <SandboxBarMark
                      key={bar.environmentId}
                      bar={bar}
                      x={x}
                      y={barY(bar.row)}
                      x0={x0}
                      x1={x1}
                      onSelect={select}
                      onHover={setHover}
                    />
                  ))
                : null}
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
              <LaneBins
                plane={lane.plane}
                bins={bins.filter((b) => b.plane === lane.plane)}
                x={(bin) => xv((bin.t0 + bin.t1) / 2)}
                y={markY(lane.plane)}
                dim={(bin) => bin.unloaded === 0 && !bin.ids.some(accepted)}
                svgRef={svgRef}
                hoverKey={hover?.kind === "bin" ? hover.key : null}
                onOpen={openBin}
                onHover={setHover}
              />
              {marks.filter((m) => m.plane === lane.plane && m.id !== selectedId).map(renderMark)}
              {selectedItem && selectedItem.plane === lane.plane && marks.includes(selectedItem)
                ? renderMark(selectedItem)
                : null}
              {lane.plane === "session" && constraints && x(constraints.t) >= x0 - 1 && x(constraints.t) <= x1 + 1 ? (
                <ConstraintsUncheckedMark
                  eventId={constraints.eventId}
                  x={x(constraints.t)}
                  y={markY("session")}
                  href={constraints.href}
                  label={`Constraints not re-checked after the compaction at ${formatInstant(constraints.t, zone)}: the resume gate holds mutations back (replay). Go to the gate's reason.`}
                  onHover={setHover}
                />
              ) : null}
            </TimelineLane>
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
          <TimelineRules
            ruleLayout={ruleLayout}
            x0={x0}
            x1={x1}
            wide={wide}
            lanesTop={lanesTop}
            lanesBottom={lanesBottom}
            clipId={clipId}
            onSelect={select}
            onHover={setHover}
          />

          <TimelineAxis
            width={width}
            wide={wide}
            zone={zone}
            realStart={realStart}
            tickLabels={tickLabels}
            gapBands={gapBands}
            hatchId={hatchId}
            onHover={setHover}
          />

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

      <Legend hintId={hintId} constraints={constraints !== null} />

      <p className="sr-only" aria-live="polite">
        {selected && selectedItem
          ? `Selected ${selected.event.type}, ${planeLabel(selected.event.plane)}, ${formatInstant(selected.t, zone)}, ${selectedItem.outcome}.`
          : ""}
      </p>
    </section>
  );
}
