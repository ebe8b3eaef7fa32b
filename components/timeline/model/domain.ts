/**
 * The time window a timeline shows (its domain): fit, zoom, pan, keep an instant in view.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/domain.test.ts.
 */

/** A time window [start, end] in epoch ms. */
export type Domain = readonly [number, number];

/**
 * The window that shows all given instants with `padFraction` of the span on each side; a single
 * instant (or none) gets a one-minute window around it (or around `fallback`).
 */
export function fitDomain(times: readonly number[], padFraction = 0.03, fallback = 0): Domain {
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of times) {
    if (!Number.isFinite(t)) continue;
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  if (lo === Infinity) return [fallback - 30_000, fallback + 30_000];
  const span = hi - lo;
  if (span === 0) return [lo - 30_000, hi + 30_000];
  return [lo - span * padFraction, hi + span * padFraction];
}

/**
 * Zooms a window around `anchor` by `factor` (< 1 zooms in, > 1 out), keeping the anchor at the same
 * relative position. The resulting span is clamped to [minSpan, maxSpan].
 */
export function zoomDomain(domain: Domain, factor: number, anchor: number, minSpan = 5, maxSpan = Infinity): Domain {
  const [d0, d1] = domain;
  const span = d1 - d0;
  const next = Math.min(maxSpan, Math.max(minSpan, span * factor));
  const k = span > 0 ? next / span : 1;
  const a = Math.min(d1, Math.max(d0, anchor));
  return [a - (a - d0) * k, a + (d1 - a) * k];
}

/** Shifts a window by `deltaMs` (positive moves later in time). */
export function panDomain(domain: Domain, deltaMs: number): Domain {
  return [domain[0] + deltaMs, domain[1] + deltaMs];
}

/**
 * The same window if `t` lies inside its inner part (excluding `marginFraction` on each side),
 * otherwise the window of the same span shifted so that `t` sits at its centre.
 */
export function ensureVisible(domain: Domain, t: number, marginFraction = 0.02): Domain {
  const [d0, d1] = domain;
  const span = d1 - d0;
  const m = span * marginFraction;
  if (t >= d0 + m && t <= d1 - m) return domain;
  return [t - span / 2, t + span / 2];
}
