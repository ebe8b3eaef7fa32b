"use client";

/**
 * What the timeline draws inside a lane: one event's mark, a bin of crowded (or not yet loaded) events, and a
 * sandbox bar. Each is positioned by its host (px) and reports clicks and hovers to it.
 */
import { type MouseEvent as ReactMouseEvent, type PointerEvent as ReactPointerEvent, type RefObject } from "react";
import { BAR_H, BIN_STYLE, type Hover, type MarkItem } from "./constants";
import { fitSandboxBarLabel, sandboxBarLabel, type MarkBin, type Outcome, type SandboxBar } from "./model";
import { OUTCOME_STYLE, ShapePath } from "./parts";

/** The key a bin is hovered by. */
export const binKey = (b: Pick<MarkBin, "plane" | "t0">) => `${b.plane}|${b.t0}`;

/** One event: its shape, an outcome ring when not ok, a halo when selected; dimmed when the filter hides it. */
export function EventMark({
  mark,
  x,
  y,
  selected,
  dim,
  onSelect,
  onHover,
}: {
  mark: MarkItem;
  x: number;
  y: number;
  selected: boolean;
  dim: boolean;
  onSelect: (id: string) => void;
  onHover: (hover: Hover | null) => void;
}) {
  const style = OUTCOME_STYLE[mark.outcome];
  return (
    <g
      data-testid="timeline-mark"
      data-kind="event"
      data-plane={mark.plane}
      data-event-id={mark.id}
      data-outcome={mark.outcome}
      data-selected={selected ? "true" : undefined}
      transform={`translate(${x},${y})`}
      className={`cursor-pointer ${dim && !selected ? "opacity-25" : ""}`}
      onClick={() => onSelect(mark.id)}
      onPointerEnter={() => onHover({ kind: "event", id: mark.id })}
      onPointerLeave={() => onHover(null)}
    >
      <circle r={10} fill="transparent" />
      {selected ? (
        <circle
          r={10.5}
          className="fill-sky-100 stroke-neutral-900 dark:fill-sky-950 dark:stroke-white"
          strokeWidth={2}
        />
      ) : null}
      {mark.outcome !== "ok" ? (
        <circle
          r={8.5}
          fill="none"
          className={style.ring}
          strokeWidth={1}
          strokeDasharray={mark.outcome === "unknown" ? "2 1.5" : undefined}
        />
      ) : null}
      <ShapePath shape={mark.shape} className={style.mark} />
    </g>
  );
}

/** A bin's count as drawn: "7", "123", "4k". */
export function binLabel(count: number): string {
  return count < 1000 ? String(count) : `${Math.floor(count / 1000)}k`;
}

/** Width in px of a bin's badge (a pill 16 px high, at least round). */
export function binWidth(label: string): number {
  return Math.max(16, label.length * (label.length > 2 ? 5.4 : 6.2) + 6);
}

/** A bin placed on screen: centre x (px) and badge width. */
type PlacedBin = { bin: MarkBin; cx: number; w: number; label: string };

/**
 * Every bin of one lane — count badges for the events of one bucket, coloured by the worst outcome; translucent and
 * dashed when some of them are not loaded yet (counted on the server) — drawn as a few elements however many there
 * are: per style one `<path>` of pills and one `<text>` whose characters are placed one by one (SVG's per-character
 * `x` list). The paths are the lane's one interactive layer for bins: the pointer's x finds the bin under it for the
 * tooltip, and a click on a bin zooms in (`onOpen`). Keyboard users step through events with the arrow keys, and
 * zoom with + / −, as before.
 */
export function LaneBins({
  plane,
  bins,
  x,
  y,
  dim,
  svgRef,
  hoverKey,
  onOpen,
  onHover,
}: {
  plane: MarkBin["plane"];
  /** This lane's bins. */
  bins: readonly MarkBin[];
  /** A bin's centre (px). */
  x: (bin: MarkBin) => number;
  /** The lane's mark row (px). */
  y: number;
  /** Whether a bin is dimmed by the filter. */
  dim: (bin: MarkBin) => boolean;
  /** The timeline's SVG: pointer positions are read against it. */
  svgRef: RefObject<SVGSVGElement | null>;
  /** The key of the bin the tooltip shows now, if any (moving within it changes nothing). */
  hoverKey: string | null;
  onOpen: (bin: MarkBin) => void;
  onHover: (hover: Hover | null) => void;
}) {
  const placed: PlacedBin[] = bins.map((bin) => {
    const label = binLabel(bin.count);
    return { bin, cx: x(bin), w: binWidth(label), label };
  });
  type Group = {
    worst: Outcome;
    unloaded: boolean;
    dim: boolean;
    small: boolean;
    d: string[];
    xs: number[];
    text: string[];
    count: number;
    away: number;
  };
  const groups = new Map<string, Group>();
  for (const p of placed) {
    const small = p.label.length > 2;
    const gd = dim(p.bin);
    const key = `${p.bin.worst}|${p.bin.unloaded > 0}|${gd}|${small}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        worst: p.bin.worst,
        unloaded: p.bin.unloaded > 0,
        dim: gd,
        small,
        d: [],
        xs: [],
        text: [],
        count: 0,
        away: 0,
      };
      groups.set(key, g);
    }
    const l = p.cx - p.w / 2;
    g.d.push(`M${r2(l + 8)} ${r2(y - 8)}h${r2(p.w - 16)}a8 8 0 0 1 0 16h${r2(16 - p.w)}a8 8 0 0 1 0-16z`);
    const cw = small ? 5.4 : 6.2;
    for (let i = 0; i < p.label.length; i += 1) g.xs.push(r2(p.cx + (i - (p.label.length - 1) / 2) * cw));
    g.text.push(p.label);
    g.count += p.bin.count;
    g.away += p.bin.unloaded;
  }
  const at = (e: ReactPointerEvent<SVGPathElement> | ReactMouseEvent<SVGPathElement>): MarkBin | null => {
    const px = e.clientX - (svgRef.current?.getBoundingClientRect().left ?? 0);
    let best: PlacedBin | null = null;
    for (const p of placed) {
      const dx = Math.abs(px - p.cx);
      if (dx <= p.w / 2 + 1 && (!best || dx < Math.abs(px - best.cx))) best = p;
    }
    return best?.bin ?? null;
  };
  const hover = (bin: MarkBin | null) => {
    const key = bin ? binKey(bin) : null;
    if (key !== hoverKey) onHover(key === null ? null : { kind: "bin", key });
  };
  return (
    <>
      {[...groups.values()].map((g) => {
        const style = BIN_STYLE[g.worst];
        return (
          <g key={`${g.worst}|${g.unloaded}|${g.dim}|${g.small}`} className={g.dim ? "opacity-25" : undefined}>
            <path
              data-testid="timeline-mark"
              data-kind="bin"
              data-plane={plane}
              data-bins={g.text.length}
              data-bin-count={g.count}
              data-unloaded={g.away || undefined}
              data-outcome={g.worst}
              d={g.d.join("")}
              className={`cursor-zoom-in ${style.rect}`}
              strokeWidth={1}
              strokeDasharray={g.unloaded ? "3 2" : undefined}
              fillOpacity={g.unloaded ? 0.7 : undefined}
              onPointerMove={(e) => hover(at(e))}
              onPointerLeave={() => hover(null)}
              onClick={(e) => {
                const bin = at(e);
                if (bin) onOpen(bin);
              }}
            />
            <text
              x={g.xs.join(" ")}
              y={r2(y + 3.5)}
              textAnchor="middle"
              pointerEvents="none"
              aria-hidden="true"
              className={`${g.small ? "text-[9px]" : "text-[10px]"} font-semibold ${style.text}`}
            >
              {g.text.join("")}
            </text>
          </g>
        );
      })}
    </>
  );
}

/** Rounded to 0.01 px (shorter paths, same picture). */
function r2(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * One sandbox instance as a bar from `x(start)` to `x(end)` at height `y`; open (no end recorded) bars are dashed.
 * The label is shortened or left out when it does not fit the visible part (`x0`..`x1`), never cut off.
 */
export function SandboxBarMark({
  bar,
  x,
  y,
  x0,
  x1,
  onSelect,
  onHover,
}: {
  bar: SandboxBar;
  x: (t: number) => number;
  y: number;
  x0: number;
  x1: number;
  onSelect: (id: string) => void;
  onHover: (hover: Hover | null) => void;
}) {
  const bx0 = x(bar.start);
  const bx1 = x(bar.end);
  const bw = Math.max(2, bx1 - bx0);
  const fullLabel = `${sandboxBarLabel(bar)}${bar.open ? " (no end recorded)" : ""}`;
  // Only the part of the bar inside the plot can hold text; a label that does not fit whole is shortened or
  // left out (the tooltip names the attempt), never cut off or drawn over the next bar.
  const visibleX0 = Math.max(bx0, x0);
  const room = Math.min(bx1, x1) - visibleX0 - 8;
  const label = fitSandboxBarLabel(bar, room);
  const labelX = visibleX0 - bx0 + 4;
  return (
    <g
      data-testid="sandbox-bar"
      data-environment-id={bar.environmentId}
      data-attempt={bar.attempt ?? undefined}
      data-open={bar.open ? "true" : "false"}
      data-label={fullLabel}
      className={bar.createdEventId ? "cursor-pointer" : undefined}
      onClick={() => (bar.createdEventId ? onSelect(bar.createdEventId) : undefined)}
      onPointerEnter={() => onHover({ kind: "bar", environmentId: bar.environmentId })}
      onPointerLeave={() => onHover(null)}
    >
      <rect
        x={bx0}
        y={y}
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
        <svg x={bx0} y={y} width={bw} height={BAR_H} overflow="hidden">
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
}

/** Offset (px) of the "constraints not re-checked" marker above its compaction's mark. */
export const CONSTRAINTS_MARK_DY = -11;

/**
 * "Constraints not re-checked" (docs/concepts.md#compaction-and-constraints): a warning triangle over the compaction
 * that no `constraint.checked` followed, in the Session lane. A link (keyboard-focusable, with a tooltip on hover and
 * on focus) to the gate's reason; the gate answers `replay` (`constraints_unchecked`) for the same compaction.
 */
export function ConstraintsUncheckedMark({
  eventId,
  x,
  y,
  href,
  label,
  onHover,
}: {
  eventId: string;
  x: number;
  /** The compaction mark's centre; the marker sits just above it. */
  y: number;
  href: string;
  label: string;
  onHover: (hover: Hover | null) => void;
}) {
  const hover = () => onHover({ kind: "constraints", eventId });
  return (
    <a
      href={href}
      aria-label={label}
      data-testid="constraints-unchecked-marker"
      data-event-id={eventId}
      className="group cursor-pointer outline-none"
      onPointerEnter={hover}
      onPointerLeave={() => onHover(null)}
      onFocus={hover}
      onBlur={() => onHover(null)}
    >
      <g transform={`translate(${x},${y + CONSTRAINTS_MARK_DY})`}>
        <circle r={9} fill="transparent" />
        <circle r={9} fill="none" strokeWidth={2} className="hidden stroke-sky-600 group-focus-visible:block" />
        <path
          d="M0,-6.5 L6.5,5 L-6.5,5 Z"
          strokeWidth={1}
          strokeLinejoin="round"
          className="fill-amber-300 stroke-amber-900 dark:fill-amber-400 dark:stroke-amber-200"
        />
        <text y={3.8} textAnchor="middle" className="fill-amber-950 text-[8px] font-bold" aria-hidden="true">
          !
        </text>
      </g>
    </a>
  );
}
