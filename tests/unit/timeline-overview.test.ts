/**
 * The overview of long runs in the browser: rule labels thinned so none overlaps, server-counted events that are not
 * loaded, and bins that count them (docs/decisions/0015-timeline-overview-and-arrival-feed.md).
 */
import { describe, expect, it } from "vitest";
import { binMarks, labelWidth, thinLabels, unloadedCounts, type Outcome } from "../../components/timeline/model";

describe("thinLabels", () => {
  const overlaps = (a: { x: number; width: number }, b: { x: number; width: number }) =>
    a.x < b.x + b.width && b.x < a.x + a.width;

  it("never lets two shown labels of one row overlap, however many crowd", () => {
    // 60 restarts 13 px apart, as a 60-attempt run fits into 800 px.
    const labels = Array.from({ length: 60 }, (_, i) => ({
      x: 128 + i * 13,
      width: labelWidth(`restart · attempt ${i + 2}`),
      priority: 1,
    }));
    const rows = thinLabels(labels, 3);
    const shown = labels.map((l, i) => ({ ...l, row: rows[i] })).filter((l) => l.row !== null);
    expect(shown.length).toBeGreaterThan(3);
    expect(shown.length).toBeLessThan(60);
    for (const a of shown) for (const b of shown) if (a !== b && a.row === b.row) expect(overlaps(a, b)).toBe(false);
    expect(rows.every((r) => r === null || (r >= 0 && r < 3))).toBe(true);
  });

  it("keeps higher priorities first, then the newest", () => {
    const labels = [
      { x: 0, width: 100, priority: 1 },
      { x: 10, width: 100, priority: 3 },
      { x: 20, width: 100, priority: 1 },
    ];
    expect(thinLabels(labels, 1)).toEqual([null, 0, null]);
    expect(thinLabels(labels, 2)).toEqual([null, 0, 1]);
    expect(thinLabels(labels, 3)).toEqual([2, 0, 1]);
  });

  it("places labels that fit side by side in one row", () => {
    expect(
      thinLabels(
        [
          { x: 0, width: 40 },
          { x: 50, width: 40 },
          { x: 100, width: 40 },
        ],
        3,
      ),
    ).toEqual([0, 0, 0]);
  });
});

describe("unloadedCounts", () => {
  const none: Record<"session" | "environment" | "tools" | "vault", { t: number; outcome: Outcome }[]> = {
    session: [],
    environment: [],
    tools: [],
    vault: [],
  };

  it("subtracts the loaded events of the lane inside each bin's span", () => {
    const loaded = {
      ...none,
      tools: [
        { t: 5, outcome: "ok" as const },
        { t: 12, outcome: "failed" as const },
        { t: 30, outcome: "ok" as const },
      ],
    };
    const out = unloadedCounts(
      [
        { plane: "tools", first: 0, last: 20, count: 10, failed: 2, denied: 1 },
        { plane: "tools", first: 25, last: 30, count: 1, failed: 0, denied: 0 },
        { plane: "vault", first: 0, last: 20, count: 4, failed: 0, denied: 0 },
      ],
      loaded,
    );
    expect(out).toEqual([
      { plane: "tools", t: 10, first: 0, last: 20, count: 8, outcomes: { failed: 1, denied: 1, ok: 6 } },
      { plane: "vault", t: 10, first: 0, last: 20, count: 4, outcomes: { failed: 0, denied: 0, ok: 4 } },
    ]);
  });
});

describe("binMarks with unloaded events", () => {
  it("always bins a bucket holding unloaded events, counting them, and bins buckets holding only them", () => {
    const marks = [{ id: "a", plane: "tools" as const, t: 1, outcome: "ok" as const }];
    const { marks: single, bins } = binMarks(marks, {
      binMs: 10,
      maxPerBucket: 3,
      unloaded: [
        { plane: "tools", t: 5, first: 0, last: 9, count: 4, outcomes: { ok: 3, failed: 1 } },
        { plane: "session", t: 25, first: 20, last: 29, count: 2, outcomes: { ok: 2 } },
      ],
    });
    expect(single).toEqual([]);
    expect(bins).toHaveLength(2);
    expect(bins[0]).toMatchObject({ plane: "session", count: 2, unloaded: 2, ids: [], worst: "ok" });
    expect(bins[1]).toMatchObject({
      plane: "tools",
      count: 5,
      unloaded: 4,
      ids: ["a"],
      worst: "failed",
      first: 0,
      last: 9,
    });
  });
});
