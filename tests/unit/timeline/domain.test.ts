import { describe, expect, it } from "vitest";
import { ensureVisible, fitDomain, panDomain, zoomDomain } from "../../../components/timeline/model/domain";

describe("domain helpers", () => {
  it("fits the data with padding, and a minute around a single instant", () => {
    expect(fitDomain([1000, 2000], 0.1)).toEqual([900, 2100]);
    expect(fitDomain([5000])).toEqual([5000 - 30_000, 5000 + 30_000]);
    expect(fitDomain([], 0.03, 1_000_000)).toEqual([970_000, 1_030_000]);
  });

  it("zooms around an anchor and clamps the span", () => {
    expect(zoomDomain([0, 100], 0.5, 50)).toEqual([25, 75]);
    expect(zoomDomain([0, 100], 0.5, 0)).toEqual([0, 50]);
    expect(zoomDomain([0, 100], 2, 100)).toEqual([-100, 100]);
    expect(zoomDomain([0, 100], 0.001, 50, 10)).toEqual([45, 55]);
    expect(zoomDomain([0, 100], 100, 50, 1, 400)).toEqual([-150, 250]);
  });

  it("pans and brings an instant into view without changing the span", () => {
    expect(panDomain([0, 100], 30)).toEqual([30, 130]);
    const d = [0, 100] as const;
    expect(ensureVisible(d, 50)).toBe(d);
    expect(ensureVisible(d, 500)).toEqual([450, 550]);
    expect(ensureVisible(d, -10)).toEqual([-60, 40]);
  });
});
