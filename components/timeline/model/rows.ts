/**
 * Placing bars and labels in rows so that they do not overlap, and the width estimate of a label.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/rows.test.ts.
 */

/**
 * Greedy interval packing: for intervals sorted by start, the row of each so that intervals sharing a
 * row never overlap (touching is allowed). Returns one row index per interval.
 */
export function packRows(intervals: readonly { start: number; end: number }[]): number[] {
  const rowEnds: number[] = [];
  return intervals.map(({ start, end }) => {
    let row = rowEnds.findIndex((e) => e <= start);
    if (row === -1) {
      row = rowEnds.length;
      rowEnds.push(end);
    } else {
      rowEnds[row] = end;
    }
    return row;
  });
}

/** Approximate width in px of a 10 px timeline label (no DOM measurement needed for layout). */
export function labelWidth(text: string): number {
  return text.length * 5.8 + 4;
}

/**
 * Rows for labels that must never overlap: labels are placed in order of `priority` (higher first; ties: the later
 * `x` first, since after a crash the newest markers matter most), each in the first of `maxRows` rows where it keeps
 * `gap` px from every label already there. A label that fits nowhere gets `null` (left out: its rule is still drawn,
 * and zooming in brings the label back). Returns one row or null per label, in input order.
 */
export function thinLabels(
  labels: readonly { x: number; width: number; priority?: number }[],
  maxRows: number,
  gap = 6,
): Array<number | null> {
  const rows: Array<Array<[number, number]>> = Array.from({ length: Math.max(1, maxRows) }, () => []);
  const order = labels
    .map((_, i) => i)
    .sort((a, b) => {
      const la = labels[a]!;
      const lb = labels[b]!;
      return (lb.priority ?? 0) - (la.priority ?? 0) || lb.x - la.x;
    });
  const out: Array<number | null> = labels.map(() => null);
  for (const i of order) {
    const { x, width } = labels[i]!;
    const row = rows.findIndex((taken) => taken.every(([a, b]) => x + width + gap <= a || b + gap <= x));
    if (row === -1) continue;
    rows[row]!.push([x, x + width]);
    out[i] = row;
  }
  return out;
}

/** A label of the time axis, placed: its anchor point `x`, how its text hangs from it, and its px span. */
export type AxisLabel<T> = { item: T; x: number; anchor: "start" | "middle" | "end"; left: number; right: number };

/**
 * The axis labels that fit without touching: `fixed` spans (idle-stretch lengths, the zone name) are always drawn; each
 * tick's text is anchored at its `x` (from the start near the left edge `x0`, from the end near the right edge `x1`,
 * else centred) and kept only when it stays `gap` px clear of every fixed span and of every tick kept before it
 * (estimated widths, {@link labelWidth}): ticks with a `priority` first (the full clock time after an idle stretch),
 * then left to right. At 420 px such a clock time is wider than the ticks are apart, so spacing ticks by distance
 * alone let labels overlap. Returns the kept ticks left to right.
 */
export function placeAxisLabels<T>(
  ticks: readonly { item: T; x: number; text: string; priority?: number }[],
  fixed: readonly { left: number; right: number }[],
  x0: number,
  x1: number,
  gap = 6,
): AxisLabel<T>[] {
  const taken: Array<{ left: number; right: number }> = [...fixed];
  const out: AxisLabel<T>[] = [];
  for (const t of [...ticks].sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0) || a.x - b.x)) {
    const w = labelWidth(t.text);
    const anchor = t.x < x0 + 18 ? "start" : t.x > x1 - 18 ? "end" : "middle";
    const left = anchor === "start" ? t.x : anchor === "end" ? t.x - w : t.x - w / 2;
    const right = left + w;
    if (taken.some((s) => left < s.right + gap && s.left < right + gap)) continue;
    taken.push({ left, right });
    out.push({ item: t.item, x: t.x, anchor, left, right });
  }
  return out.sort((a, b) => a.x - b.x);
}
