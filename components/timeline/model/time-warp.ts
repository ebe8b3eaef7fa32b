/**
 * Idle stretches and the time scale that compresses them, and the time frame of a timeline.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/time-warp.test.ts.
 */
import { calendarTicks, linearScale, timeScale, type TimeScale } from "../scale";
import type { TimeZoneMode } from "../format";
import { fitDomain, type Domain } from "./domain";

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
