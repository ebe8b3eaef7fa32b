import { describe, expect, it } from "vitest";
import { assignLabelRows, packRows } from "../../../components/timeline/model/rows";

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

describe("assignLabelRows", () => {
  it("stacks colliding labels on new rows, up to a maximum", () => {
    const labels = [
      { x: 0, width: 50 },
      { x: 20, width: 50 },
      { x: 30, width: 50 },
      { x: 200, width: 50 },
    ];
    expect(assignLabelRows(labels, 3)).toEqual([0, 1, 2, 0]);
    // With two rows only, the third label reuses the row that frees up first.
    expect(assignLabelRows(labels, 2)).toEqual([0, 1, 0, 0]);
  });
});
