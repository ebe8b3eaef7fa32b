"use client";

/**
 * The timeline's tooltip: what the hovered mark, bin, sandbox bar, rule, tool call or idle stretch stands for, in
 * words, and where it points (px).
 */
import type { LinearScale } from "./scale";
import type { ReactNode } from "react";
import type { SideEffectView } from "@/lib/contract/api";
import { AXIS_H, BAR_H, RULE_ROW_H, RULE_WORD, type Hover, type MarkItem } from "./constants";
import { formatDuration, formatInstant, type TimeZoneMode } from "./format";
import {
  planeLabel,
  sandboxBarLabel,
  sideEffectNameOf,
  type IdleGap,
  type MarkBin,
  type SandboxBar,
  type TimedEvent,
  type TimeRule,
  type TimeWarp,
  type ToolCallBar,
} from "./model";
import { binKey, CONSTRAINTS_MARK_DY } from "./marks";
import { MarkGlyph, OutcomeLabel, SHAPE_WORD, SideEffectStatusLabel } from "./parts";
import { shownWriteStatus } from "@/lib/domain/approvals/write-state";
import { CALL_BAR_H, toolCallTooltip } from "./ToolCallBars";

/** A tooltip's anchor (px in the plot) and content. */
export type Tooltip = { x: number; y: number; body: ReactNode };

/** What the tooltip reads from the timeline's layout. */
export type TooltipContext = {
  byId: ReadonlyMap<string, TimedEvent>;
  itemById: ReadonlyMap<string, MarkItem>;
  sideEffects?: Record<string, SideEffectView>;
  zone: TimeZoneMode;
  warp: TimeWarp;
  /** Real time → px, virtual time → px. */
  x: (t: number) => number;
  xv: LinearScale;
  x0: number;
  x1: number;
  markY: (plane: MarkItem["plane"]) => number;
  barY: (row: number) => number;
  callY: (row: number) => number;
  bins: readonly MarkBin[];
  bars: readonly SandboxBar[];
  callBars: readonly ToolCallBar[];
  ruleLayout: ReadonlyArray<{ rule: TimeRule; x: number; row: number | null }>;
  gapBands: ReadonlyArray<{ gap: IdleGap; gx0: number; gx1: number }>;
  /** The compaction whose constraints were not re-checked (real time), if any. */
  constraints?: { eventId: string; t: number } | null;
};

/** The tooltip for `hover`, or null when nothing is hovered (or it is gone). */
export function describeHover(hover: Hover | null, ctx: TooltipContext): Tooltip | null {
  const {
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
  } = ctx;
  let tooltip: Tooltip | null = null;
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
                side effect <span className="font-mono">{seName}</span>:{" "}
                <SideEffectStatusLabel status={shownWriteStatus(se.status, se.approval)} />
              </div>
            ) : null}
            {te.event.credential_flagged ? (
              <div className="mt-1 font-medium text-amber-800 dark:text-amber-300">
                Carried a credential value or placeholder: redacted
              </div>
            ) : te.event.redaction_count > 0 ? (
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
  } else if (hover?.kind === "constraints") {
    if (constraints && constraints.eventId === hover.eventId) {
      tooltip = {
        x: x(constraints.t),
        y: markY("session") + CONSTRAINTS_MARK_DY,
        body: (
          <>
            <div className="font-semibold">Constraints not re-checked</div>
            <div className="tabular-nums">compaction at {formatInstant(constraints.t, zone)}</div>
            <div className="mt-1">
              No <span className="font-mono">constraint.checked</span> arrived after this compaction (the server&apos;s
              receive order): a summary may have dropped the task&apos;s constraints. The resume gate holds mutations
              back (<span className="font-mono">replay</span>, <span className="font-mono">constraints_unchecked</span>
              ); reads may go on.
            </div>
            <div className="mt-1 text-neutral-500 dark:text-neutral-400">Enter or click: the gate&apos;s reason.</div>
          </>
        ),
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
            <div className="mt-1 text-neutral-600 dark:text-neutral-300">
              Drawn narrow so the rest of the run stays readable; zoom in to widen it.
            </div>
          </>
        ),
      };
    }
  }
  return tooltip;
}
