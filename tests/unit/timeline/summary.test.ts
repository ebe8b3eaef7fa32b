import { describe, expect, it } from "vitest";
import { summarizeAttrs } from "../../../components/timeline/model/summary";

describe("summarizeAttrs", () => {
  it("summarizes preferred scalar attributes first and cuts long values", () => {
    const long = "x".repeat(60);
    expect(summarizeAttrs({ nested: { a: 1 }, zeta: 1, host: "api.example.com", outcome: "denied", note: long })).toBe(
      "host=api.example.com · outcome=denied · zeta=1",
    );
    expect(summarizeAttrs({ note: long }, 1)).toBe(`note=${"x".repeat(39)}…`);
    expect(summarizeAttrs({ list: [1, 2] })).toBe("");
  });
});
