"use client";

/**
 * One lane of the timeline (Session, Environment, Tools & egress or Vault): its band with grid lines and hatched
 * idle stretches, its name and event count (wide) or caption (narrow), and its content (marks, bins, bars) clipped
 * to the plot. On narrow screens the rules cross each lane here; on wide ones they cross all lanes at once.
 */
import type { ReactNode } from "react";
import { RULE_STYLE } from "./constants";
import type { Lane } from "./model";
import type { GapBand } from "./TimelineAxis";
import type { PlacedRule } from "./TimelineRules";

/** Where a lane sits (px) and what is drawn in it. */
export function TimelineLane({
  lane,
  index,
  top,
  h,
  width,
  wide,
  x0,
  x1,
  count,
  ticks,
  scale,
  gapBands,
  ruleLayout,
  hatchId,
  clipId,
  children,
}: {
  lane: Lane;
  /** Position among the lanes (alternating backgrounds). */
  index: number;
  top: number;
  h: number;
  width: number;
  wide: boolean;
  x0: number;
  x1: number;
  /** Events in this lane (all of the task's, loaded or not). */
  count: number;
  ticks: readonly Date[];
  scale: (d: Date) => number;
  gapBands: readonly GapBand[];
  ruleLayout: readonly PlacedRule[];
  hatchId: string;
  clipId: string;
  /** Marks, bins and bars, drawn clipped to the plot. */
  children: ReactNode;
}) {
  const even = index % 2 === 0;
  return (
    <g data-testid="timeline-lane" data-plane={lane.plane}>
      <rect
        x={0}
        y={top}
        width={width}
        height={h}
        className={even ? "fill-white dark:fill-neutral-950" : "fill-neutral-50 dark:fill-neutral-900"}
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
          <text
            x={12}
            y={top + h / 2 + 11}
            className="fill-neutral-600 text-[10px] dark:fill-neutral-400"
            data-testid="lane-count"
          >
            {count} {count === 1 ? "event" : "events"}
          </text>
        </>
      ) : null}
      <g clipPath={`url(#${clipId})`}>
        {children}
        {/* Narrow: the rules cross each lane here, under its name (wide: one line across all lanes, drawn by the host). */}
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
            even ? "stroke-white dark:stroke-neutral-950" : "stroke-neutral-50 dark:stroke-neutral-900"
          }`}
        >
          {lane.label}
        </text>
      )}
    </g>
  );
}
