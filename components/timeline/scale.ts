/**
 * The timeline's scales: piecewise-linear maps between time and pixels, and calendar ticks (d3-time's). The same
 * arithmetic as d3-scale's continuous scales without clamping (bisect for the piece, linear interpolation, a piece of
 * zero width maps to its middle), without d3-scale itself: it brought d3-interpolate, d3-format, d3-time-format and
 * d3-color — ≈ 14 KB gzip — to the task page's first load for the few calls below. Pure functions, no React.
 */
import { timeTicks, utcTicks } from "d3-time";

/** A piecewise-linear map from `domain()` to `range()` (both with at least two values) and back. */
export type LinearScale = ((value: number) => number) & {
  invert: (value: number) => number;
  domain: () => number[];
  range: () => number[];
};

/** A piecewise-linear map from instants to pixels. `ticks(count)` gives about `count` calendar-aligned instants. */
export type TimeScale = ((date: Date) => number) & {
  invert: (px: number) => Date;
  domain: () => Date[];
  range: () => number[];
  ticks: (count: number) => Date[];
};

/** First index whose value is greater than `x` within [lo, hi) (d3-array's `bisectRight`). */
function bisectRight(values: readonly number[], x: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** x → position in [a, b] as a fraction; a piece of zero width maps everything to its middle. */
function normalize(a: number, b: number): (x: number) => number {
  const w = b - a;
  return w ? (x) => (x - a) / w : () => (Number.isNaN(w) ? NaN : 0.5);
}

/** The map from `from` to `to` (piecewise, extrapolating beyond the ends with the outer pieces). */
function polymap(from: readonly number[], to: readonly number[]): (x: number) => number {
  const j = Math.min(from.length, to.length) - 1;
  let d = from;
  let r = to;
  if (d[j]! < d[0]!) {
    d = [...d].reverse();
    r = [...r].reverse();
  }
  const pieces = Array.from({ length: j }, (_, i) => {
    const t = normalize(d[i]!, d[i + 1]!);
    const r0 = r[i]!;
    const r1 = r[i + 1]!;
    return (x: number) => {
      const f = t(x);
      return r0 * (1 - f) + r1 * f;
    };
  });
  return (x) => pieces[bisectRight(d, x, 1, j) - 1]!(x);
}

/** A piecewise-linear scale through the points (`domain[i]`, `range[i]`); both ascending or both descending. */
export function linearScale(domain: readonly number[], range: readonly number[]): LinearScale {
  const dom = [...domain];
  const rng = [...range];
  const forward = polymap(dom, rng);
  const backward = polymap(rng, dom);
  return Object.assign((value: number) => forward(value), {
    invert: (value: number) => backward(value),
    domain: () => [...dom],
    range: () => [...rng],
  });
}

/** Calendar-aligned instants from `a` to `b` (epoch ms), about `count` of them, in UTC or the browser's zone. */
export function calendarTicks(a: number, b: number, count: number, zone: "utc" | "local"): Date[] {
  return (zone === "utc" ? utcTicks : timeTicks)(new Date(a), new Date(b), count);
}

/** A piecewise-linear time scale through (`domain[i]`, `range[i]`), its ticks in UTC or the browser's zone. */
export function timeScale(domain: readonly number[], range: readonly number[], zone: "utc" | "local"): TimeScale {
  // Instants are whole milliseconds, as Dates hold them.
  const lin = linearScale(
    domain.map((t) => new Date(t).getTime()),
    range,
  );
  return Object.assign((date: Date) => lin(date.getTime()), {
    invert: (px: number) => new Date(lin.invert(px)),
    domain: () => lin.domain().map((t) => new Date(t)),
    range: () => lin.range(),
    ticks: (count: number) => {
      const d = lin.domain();
      return calendarTicks(d[0]!, d[d.length - 1]!, count, zone);
    },
  });
}
