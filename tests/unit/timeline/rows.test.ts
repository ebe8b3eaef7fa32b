import { describe, expect, it } from "vitest";
import { packRows } from "../../../components/timeline/model/rows";

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
