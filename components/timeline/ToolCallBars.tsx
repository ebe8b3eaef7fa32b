"use client";

/**
 * Tool calls as bars in the Tools lane (docs/concepts.md#tool-calls, docs/screens.md#timeline): one bar per
 * `tool.called` from the call to its outcome, paired by call id (model/tool-calls.ts `deriveToolCallBars`). A mutating
 * call left without an outcome when its attempt ended is an open amber bar, "outcome unknown"; a read call without one
 * is a neutral dashed bar, "no result recorded"; a call still running is an open neutral bar. Drawn inside the
 * timeline's SVG.
 */
import type { ReactNode } from "react";
import { formatDuration, formatInstant, type TimeZoneMode } from "./format";
import { TOOL_CALL_WORD, labelWidth, toolCallLabel, type ToolCallBar, type ToolCallStatus } from "./model";

/** Height of one tool-call bar, and the gap between rows. */
export const CALL_BAR_H = 10;
export const CALL_BAR_GAP = 3;

/** Above this many bars in view, completed and running calls are drawn as one shape per row (not each hoverable). */
export const MAX_INDIVIDUAL_CALL_BARS = 300;

const STYLE: Record<ToolCallStatus, { rect: string; text: string; dash?: string }> = {
  completed: {
    rect: "fill-neutral-200 stroke-neutral-500 dark:fill-neutral-700 dark:stroke-neutral-400",
    text: "fill-neutral-800 dark:fill-neutral-100",
  },
  failed: {
    rect: "fill-red-100 stroke-red-700 dark:fill-red-950 dark:stroke-red-400",
    text: "fill-red-900 dark:fill-red-200",
  },
  pending: {
    rect: "fill-white stroke-neutral-500 dark:fill-neutral-900 dark:stroke-neutral-400",
    text: "fill-neutral-800 dark:fill-neutral-100",
    dash: "4 2",
  },
  unknown: {
    rect: "fill-amber-100 stroke-amber-800 dark:fill-amber-950 dark:stroke-amber-300",
    text: "fill-amber-950 dark:fill-amber-100",
    dash: "3 2",
  },
  reconciled: {
    rect: "fill-neutral-100 stroke-neutral-500 dark:fill-neutral-800 dark:stroke-neutral-400",
    text: "fill-neutral-800 dark:fill-neutral-100",
    dash: "3 2",
  },
  no_result: {
    rect: "fill-neutral-50 stroke-neutral-400 dark:fill-neutral-900 dark:stroke-neutral-500",
    text: "fill-neutral-700 dark:fill-neutral-300",
    dash: "2 2",
  },
};

/** Statuses always drawn bar by bar (they need a person's eye), however many bars there are. */
const NOTABLE: ReadonlySet<ToolCallStatus> = new Set(["unknown", "failed"]);

/** The text drawn inside a bar with `room` px: the full label, the tool name, or nothing. */
function fitCallLabel(bar: ToolCallBar, room: number): string | null {
  const full = `${bar.status === "unknown" ? "? " : ""}${toolCallLabel(bar)}`;
  if (labelWidth(full) <= room) return full;
  const short = bar.tool ?? bar.callId;
  const shortText = bar.status === "unknown" ? `? ${short}` : short;
  if (labelWidth(shortText) <= room) return shortText;
  return bar.status === "unknown" && labelWidth("?") <= room ? "?" : null;
}

/**
 * The bars of the calls that intersect the plot. Props: `bars`; `x` (epoch ms → px); plot bounds `x0`, `x1`; `y`
 * (row → top px); `onSelect(eventId)` selects the call's `tool.called` event; `onHover(callId | null)`; `selectedId`.
 */
export function ToolCallBars({
  bars,
  x,
  x0,
  x1,
  y,
  onSelect,
  onHover,
  selectedId,
}: {
  bars: readonly ToolCallBar[];
  x: (t: number) => number;
  x0: number;
  x1: number;
  y: (row: number) => number;
  onSelect: (eventId: string) => void;
  onHover: (calledEventId: string | null) => void;
  selectedId: string | null;
}) {
  const placed = bars
    .map((bar) => {
      const bx0 = x(bar.start);
      const bx1 = x(bar.end);
      return { bar, bx0, bx1 };
    })
    .filter(({ bx0, bx1 }) => bx1 >= x0 - 2 && bx0 <= x1 + 2);
  const crowded = placed.length > MAX_INDIVIDUAL_CALL_BARS;
  const merged = new Map<number, string[]>();
  const single: typeof placed = [];
  for (const p of placed) {
    if (crowded && !NOTABLE.has(p.bar.status) && p.bar.calledEventId !== selectedId) {
      const w = Math.max(2, p.bx1 - p.bx0);
      const d = `M${p.bx0},${y(p.bar.row)}h${w}v${CALL_BAR_H}h${-w}Z`;
      const list = merged.get(p.bar.row);
      if (list) list.push(d);
      else merged.set(p.bar.row, [d]);
    } else {
      single.push(p);
    }
  }
  return (
    <g data-testid="tool-call-bars">
      {[...merged.entries()].map(([row, ds]) => (
        <path
          key={`merged-${row}`}
          d={ds.join("")}
          className={STYLE.completed.rect}
          strokeWidth={0.5}
          pointerEvents="none"
        />
      ))}
      {single.map(({ bar, bx0, bx1 }) => {
        const w = Math.max(2, bx1 - bx0);
        const by = y(bar.row);
        const style = STYLE[bar.status];
        const visibleX0 = Math.max(bx0, x0);
        const label = fitCallLabel(bar, Math.min(bx1, x1) - visibleX0 - 6);
        const selected = bar.calledEventId === selectedId;
        return (
          <g
            key={bar.calledEventId}
            data-testid="tool-call-bar"
            data-call-id={bar.callId}
            data-status={bar.status}
            data-attempt={bar.attempt ?? undefined}
            data-label={toolCallLabel(bar)}
            className="cursor-pointer"
            onClick={() => onSelect(bar.calledEventId)}
            onPointerEnter={() => onHover(bar.calledEventId)}
            onPointerLeave={() => onHover(null)}
          >
            <rect
              x={bx0}
              y={by}
              width={w}
              height={CALL_BAR_H}
              rx={2}
              className={`${style.rect} ${selected ? "stroke-neutral-900 dark:stroke-white" : ""}`}
              strokeWidth={selected ? 1.5 : 1}
              strokeDasharray={style.dash}
            />
            {label !== null ? (
              <svg x={bx0} y={by} width={w} height={CALL_BAR_H} overflow="hidden">
                <text x={visibleX0 - bx0 + 3} y={8} className={`text-[8.5px] font-medium ${style.text}`}>
                  {label}
                </text>
              </svg>
            ) : null}
          </g>
        );
      })}
    </g>
  );
}

/** Tooltip body of one tool call. */
export function toolCallTooltip(bar: ToolCallBar, zone: TimeZoneMode): ReactNode {
  const duration = formatDuration(bar.end - bar.start);
  return (
    <>
      <div className="font-semibold">
        Tool call · <span className="font-mono">{bar.tool ?? "(tool not named)"}</span>
      </div>
      <div className="font-mono break-all text-neutral-600 dark:text-neutral-300">call {bar.callId}</div>
      <div className="mt-0.5 tabular-nums">called {formatInstant(bar.start, zone)}</div>
      {bar.attempt !== null ? <div>attempt {bar.attempt}</div> : null}
      <div className="mt-1">
        {bar.status === "completed" || bar.status === "failed"
          ? `${TOOL_CALL_WORD[bar.status]} after ${duration}`
          : bar.status === "pending"
            ? `no outcome yet (running for ${duration})`
            : bar.status === "unknown"
              ? `a mutating call whose attempt ended ${duration} later without tool.completed or tool.failed: outcome unknown; the write may or may not have happened`
              : bar.status === "reconciled"
                ? `its attempt ended without an outcome; a person has since reconciled ${bar.effect ?? "the write"}`
                : `a read call whose attempt ended without a result: no result recorded (it blocks nothing)`}
      </div>
      {bar.effect ? (
        <div>
          side effect <span className="font-mono">{bar.effect}</span>
        </div>
      ) : null}
    </>
  );
}
