"use client";

/**
 * The timeline's time axis: the clock (UTC or the viewer's zone), ticks in the warped time scale, and the idle
 * stretches drawn narrow, each with its length written where its ticks would be.
 */
import { AXIS_H, type Hover } from "./constants";
import { zoneSuffix, type TimeZoneMode } from "./format";
import type { AxisLabel, IdleGap } from "./model";

/** An idle stretch in view: its px span, its label and where the label is centred (`lx`, kept inside the plot). */
export type GapBand = { gap: IdleGap; gx0: number; gx1: number; text: string; w: number; lx: number };

/**
 * The axis row across the top of the timeline. `tickLabels` are the ticks whose labels fit (model/rows.ts
 * placeAxisLabels: none touches another, an idle stretch's length or the zone name).
 */
export function TimelineAxis({
  width,
  wide,
  zone,
  realStart,
  tickLabels,
  gapBands,
  hatchId,
  onHover,
}: {
  width: number;
  wide: boolean;
  zone: TimeZoneMode;
  realStart: number;
  tickLabels: readonly AxisLabel<{ d: Date; text: string; whole: boolean }>[];
  gapBands: readonly GapBand[];
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
      {tickLabels.map(({ item, x: tx, anchor }) => (
        <g key={item.d.getTime()}>
          <line x1={tx} x2={tx} y1={AXIS_H - 5} y2={AXIS_H} className="stroke-neutral-400 dark:stroke-neutral-600" />
          <text
            x={tx}
            y={AXIS_H - 9}
            textAnchor={anchor}
            className="fill-neutral-600 text-[10px] tabular-nums dark:fill-neutral-400"
          >
            {item.text}
          </text>
        </g>
      ))}
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
            x={b.lx}
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
