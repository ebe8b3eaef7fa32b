/**
 * Binning crowded marks into per-lane count badges, including events counted on the server but not loaded.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/bins.test.ts.
 */
import type { Plane } from "@/lib/contract/api";
import { laneIndex } from "./lanes";
import { OUTCOME_SEVERITY, type Outcome } from "./outcome";

/** What the binning needs to know about one mark. */
export type BinnableMark = { id: string; plane: Plane; t: number; outcome: Outcome };

/** Several marks of one lane in one time bucket, drawn as a count badge. */
export type MarkBin = {
  plane: Plane;
  /** Bucket start and end (epoch ms). */
  t0: number;
  t1: number;
  /** Times of the earliest and latest member. */
  first: number;
  last: number;
  count: number;
  ids: string[];
  outcomes: Record<Outcome, number>;
  worst: Outcome;
  /** How many of `count` are events not loaded in the browser (counted on the server); 0 when all are loaded. */
  unloaded: number;
};

/** Events of one lane counted on the server but not loaded in the browser, around one instant. */
export type UnloadedCount = {
  plane: Plane;
  /** Where they are drawn (same clock as the marks' `t`), and the times of the earliest and latest. */
  t: number;
  first: number;
  last: number;
  count: number;
  outcomes: Partial<Record<Outcome, number>>;
};

/** Options of `binMarks`. */
export type BinOptions = {
  /** Bucket width in ms (typically the bin width in px times ms per px at the current zoom). */
  binMs: number;
  /** A bucket holding more than this many marks becomes a bin; otherwise its marks are drawn one by one. */
  maxPerBucket: number;
  /** Marks always drawn individually (the selected one), left out of any bin. */
  keepIds?: ReadonlySet<string>;
  /** Bucket origin (epoch ms); 0 keeps buckets stable while panning. */
  origin?: number;
  /** Events not loaded (counted on the server): a bucket holding any is always a bin, counting them too. */
  unloaded?: readonly UnloadedCount[];
};

/**
 * Splits marks into those drawn one by one and per-lane count bins. Buckets are `binMs` wide in time,
 * per plane. A bucket with more than `maxPerBucket` marks becomes a bin (minus the kept ids, drawn on
 * their own); a bin left with a single member is drawn as that mark. Output order: marks in input
 * order, bins by plane then time.
 */
export function binMarks<T extends BinnableMark>(
  items: readonly T[],
  options: BinOptions,
): { marks: T[]; bins: MarkBin[] } {
  const { binMs, maxPerBucket, keepIds, origin = 0, unloaded = [] } = options;
  if (!(binMs > 0) || !Number.isFinite(binMs)) return { marks: [...items], bins: [] };
  type Bucket = { plane: Plane; k: number; members: T[]; unloaded: UnloadedCount[] };
  const buckets = new Map<string, Bucket>();
  const bucketOf = (plane: Plane, t: number): Bucket => {
    const k = Math.floor((t - origin) / binMs);
    const key = `${plane}|${k}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { plane, k, members: [], unloaded: [] };
      buckets.set(key, bucket);
    }
    return bucket;
  };
  for (const item of items) bucketOf(item.plane, item.t).members.push(item);
  for (const u of unloaded) if (u.count > 0) bucketOf(u.plane, u.t).unloaded.push(u);
  const individual = new Set<T>();
  const bins: MarkBin[] = [];
  for (const { plane, k, members, unloaded: away } of buckets.values()) {
    const awayCount = away.reduce((n, u) => n + u.count, 0);
    if (awayCount === 0 && members.length <= maxPerBucket) {
      for (const m of members) individual.add(m);
      continue;
    }
    const binned: T[] = [];
    for (const m of members) {
      if (keepIds?.has(m.id)) individual.add(m);
      else binned.push(m);
    }
    if (awayCount === 0 && binned.length === 1) {
      individual.add(binned[0] as T);
      continue;
    }
    if (binned.length === 0 && awayCount === 0) continue;
    const outcomes: Record<Outcome, number> = { ok: 0, denied: 0, failed: 0, unknown: 0 };
    let first = Infinity;
    let last = -Infinity;
    for (const m of binned) {
      outcomes[m.outcome] += 1;
      first = Math.min(first, m.t);
      last = Math.max(last, m.t);
    }
    for (const u of away) {
      for (const [o, n] of Object.entries(u.outcomes) as Array<[Outcome, number]>) outcomes[o] += n;
      first = Math.min(first, u.first);
      last = Math.max(last, u.last);
    }
    bins.push({
      plane,
      t0: origin + k * binMs,
      t1: origin + (k + 1) * binMs,
      first,
      last,
      count: binned.length + awayCount,
      ids: binned.map((m) => m.id),
      outcomes,
      worst: OUTCOME_SEVERITY.find((o) => outcomes[o] > 0) ?? "ok",
      unloaded: awayCount,
    });
  }
  bins.sort((a, b) => laneIndex(a.plane) - laneIndex(b.plane) || a.t0 - b.t0);
  return { marks: items.filter((m) => individual.has(m)), bins };
}

/** A lane's bucket as the server counted it (times in epoch ms), see `TimelineBin`. */
export type ServerBin = { plane: Plane; first: number; last: number; count: number; failed: number; denied: number };

/**
 * What the server counted but the browser has not loaded: for each server bin, its count minus the loaded events of
 * that lane between its first and last time (never below 0), drawn at the middle of that span. The outcome counts
 * are the server's `failed` / `denied` minus those loaded (the rest counted `ok`).
 * @param loaded the loaded events' times and outcomes per lane, each sorted by time.
 */
export function unloadedCounts(
  serverBins: readonly ServerBin[],
  loaded: Readonly<Record<Plane, ReadonlyArray<{ t: number; outcome: Outcome }>>>,
): UnloadedCount[] {
  const out: UnloadedCount[] = [];
  for (const b of serverBins) {
    const lane = loaded[b.plane];
    let lo = lowerBound(lane, b.first);
    let have = 0;
    let failed = 0;
    let denied = 0;
    for (; lo < lane.length && lane[lo]!.t <= b.last; lo += 1) {
      have += 1;
      if (lane[lo]!.outcome === "failed") failed += 1;
      if (lane[lo]!.outcome === "denied") denied += 1;
    }
    const count = b.count - have;
    if (count <= 0) continue;
    const f = Math.max(0, Math.min(count, b.failed - failed));
    const d = Math.max(0, Math.min(count - f, b.denied - denied));
    out.push({
      plane: b.plane,
      t: (b.first + b.last) / 2,
      first: b.first,
      last: b.last,
      count,
      outcomes: { failed: f, denied: d, ok: count - f - d },
    });
  }
  return out;
}

function lowerBound(sorted: ReadonlyArray<{ t: number }>, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.t < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
