"use client";

/**
 * The timeline's time axis: the clock (UTC or the viewer's zone), ticks in the warped time scale, and the idle
 * stretches drawn narrow, each with its length written where its ticks would be.
 */
import { AXIS_H, PAD_R, type Hover } from "./constants";
import { formatClock, formatTick, zoneSuffix, type TimeZoneMode } from "./format";
import type { IdleGap, TimeWarp } from "./model";

/** An idle stretch in view: its px span and its label. */
export type GapBand = { gap: IdleGap; gx0: number; gx1: number; text: string; w: number };

/** The axis row across the top of the timeline. */
export function TimelineAxis({
  width,
  wide,
  zone,
  realStart,
  ticks,
  scale,
  warp,
  gapBands,
  x0,
  x1,
  hatchId,
  onHover,
}: {
  width: number;
  wide: boolean;
  zone: TimeZoneMode;
  realStart: number;
  ticks: readonly Date[];
  scale: (d: Date) => number;
  warp: TimeWarp;
  gapBands: readonly GapBand[];
  x0: number;
  x1: number;
  hatchId: string;
  onHover: (hover: Hover | null) => void;
}) {
  return (
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
            <text
              x={tx}
              y={AXIS_H - 9}
              textAnchor={anchor}
              className="fill-neutral-600 text-[10px] tabular-nums dark:fill-neutral-400"
            >
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
          onPointerEnter={() => onHover({ kind: "gap", start: b.gap.start })}
          onPointerLeave={() => onHover(null)}
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
  );
}
