import { describe, expect, it } from "vitest";
import { labelWidth, packRows, placeAxisLabels } from "../../../components/timeline/model/rows";

describe("packRows", () => {
  it("packs touching intervals on one row and overlapping ones on new rows", () => {
    expect(
      packRows([
        { start: 0, end: 10 },
        { start: 10, end: 20 },
        { start: 5, end: 30 },
        { start: 21, end: 40 },
      ]),
    ).toEqual([0, 0, 1, 0]);
  });
});

describe("placeAxisLabels", () => {
  const overlapping = (spans: Array<{ left: number; right: number }>) =>
    spans.some((a, i) => spans.some((b, j) => i < j && a.left < b.right && b.left < a.right));

  it("keeps tick labels apart at 420 px, even a full clock time wider than the ticks are apart", () => {
    // Ticks 48 px apart (warpedTicks' minimum) on a 400 px plot; the one after an idle stretch names the whole time.
    const ticks = [10, 58, 106, 154, 202, 250, 298, 346, 394].map((x, i) => ({
      item: i,
      x,
      text: i === 3 ? "16:32:54.250" : `:${String(i * 5).padStart(2, "0")}`,
      priority: i === 3 ? 1 : 0,
    }));
    expect(labelWidth("16:32:54.250")).toBeGreaterThan(48);
    const placed = placeAxisLabels(ticks, [], 10, 410);
    expect(overlapping(placed)).toBe(false);
    expect(placed.map((p) => p.item)).toContain(3);
    expect(placed.length).toBeGreaterThan(4);
  });

  it("leaves out ticks under an idle stretch's length, wherever that is clamped, and anchors at the edges", () => {
    // The length of a stretch at the left edge is clamped inside the plot, away from its band's centre.
    const gap = { left: 10, right: 10 + labelWidth("⋯ 22.0 s ⋯") };
    const ticks = [12, 60, 70, 140, 405].map((x) => ({ item: x, x, text: "16:33:00" }));
    const placed = placeAxisLabels(ticks, [gap], 10, 410);
    expect(overlapping([gap, ...placed])).toBe(false);
    expect(placed.map((p) => p.item)).toEqual([140, 405]);
    expect(placed.at(-1)!.anchor).toBe("end");
    expect(placed.at(-1)!.right).toBeLessThanOrEqual(405);
  });

  it("never lets two labels touch over a sweep of positions", () => {
    for (let shift = 0; shift < 60; shift += 3) {
      const ticks = Array.from({ length: 9 }, (_, i) => ({
        item: i,
        x: 10 + shift + i * 48,
        text: i % 3 === 0 ? "16:33:04.5" : `:${i}0`,
      }));
      const gapLabel = { left: 150 + shift, right: 150 + shift + labelWidth("⋯ 3 min 12 s ⋯") };
      expect(overlapping([gapLabel, ...placeAxisLabels(ticks, [gapLabel], 10, 410)]), `shift ${shift}`).toBe(false);
    }
  });
});
