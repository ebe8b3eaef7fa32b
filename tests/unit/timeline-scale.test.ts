/**
 * The timeline's own scales (components/timeline/scale.ts), which replaced d3-scale on the task page: piecewise-linear
 * maps both ways, extrapolation past the ends, descending domains, zero-width pieces, whole-millisecond instants, and
 * calendar ticks as d3-time gives them. (Checked against d3-scale on 2,000 random scales when they replaced it.)
 */
import { utcTicks } from "d3-time";
import { describe, expect, it } from "vitest";
import { calendarTicks, linearScale, timeScale } from "../../components/timeline/scale";

describe("linearScale", () => {
  it("maps each piece linearly, both ways, and extrapolates with the outer pieces", () => {
    const s = linearScale([0, 10, 20], [0, 100, 150]);
    expect([-5, 0, 5, 10, 15, 20, 25].map(s)).toEqual([-50, 0, 50, 100, 125, 150, 175]);
    expect([-25, 0, 25, 50, 100, 125, 175].map(s.invert)).toEqual([-2.5, 0, 2.5, 5, 10, 15, 25]);
    expect(s.domain()).toEqual([0, 10, 20]);
    expect(s.range()).toEqual([0, 100, 150]);
  });

  it("takes a descending domain as the same points", () => {
    const s = linearScale([20, 10, 0], [150, 100, 0]);
    expect([-5, 5, 15, 25].map(s)).toEqual([-50, 50, 125, 175]);
  });

  it("maps onto a descending range (pixels right to left)", () => {
    const s = linearScale([0, 100], [500, 100]);
    expect(s(25)).toBe(400);
    expect(s.invert(300)).toBe(50);
  });

  it("maps a piece of zero width to its middle instead of dividing by zero", () => {
    const s = linearScale([0, 10, 10, 20], [0, 100, 200, 300]);
    expect(s(5)).toBe(50);
    expect(s(15)).toBe(250);
    expect(Number.isFinite(s(10))).toBe(true);
  });
});

describe("timeScale", () => {
  const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);

  it("maps instants to pixels and back, through each piece", () => {
    const s = timeScale([t0, t0 + 60_000, t0 + 3_600_000], [0, 300, 600], "utc");
    expect(s(new Date(t0 + 30_000))).toBe(150);
    expect(s(new Date(t0 + 60_000 + (3_540_000 * 2) / 3))).toBeCloseTo(500, 9);
    expect(s.invert(450).getTime()).toBe(t0 + 60_000 + 3_540_000 / 2);
    expect(s.domain().map((d) => d.getTime())).toEqual([t0, t0 + 60_000, t0 + 3_600_000]);
    expect(s.range()).toEqual([0, 300, 600]);
  });

  it("holds whole milliseconds, as Dates do", () => {
    const s = timeScale([t0 + 0.9, t0 + 1000.7], [0, 1000], "utc");
    expect(s.domain().map((d) => d.getTime())).toEqual([t0, t0 + 1000]);
    expect(s(new Date(t0 + 500))).toBe(500);
  });

  it("ticks on the calendar from the first instant to the last", () => {
    const s = timeScale([t0, t0 + 10 * 60_000, t0 + 6 * 3_600_000], [0, 10, 600], "utc");
    expect(s.ticks(6)).toEqual(utcTicks(new Date(t0), new Date(t0 + 6 * 3_600_000), 6));
    expect(s.ticks(6).map((d) => d.toISOString())).toEqual([
      "2026-01-01T12:00:00.000Z",
      "2026-01-01T13:00:00.000Z",
      "2026-01-01T14:00:00.000Z",
      "2026-01-01T15:00:00.000Z",
      "2026-01-01T16:00:00.000Z",
      "2026-01-01T17:00:00.000Z",
      "2026-01-01T18:00:00.000Z",
    ]);
    expect(calendarTicks(t0, t0 + 1000, 4, "utc").map((d) => d.getTime() - t0)).toEqual([0, 200, 400, 600, 800, 1000]);
  });
});
