import { describe, expect, it } from "vitest";
import { binMarks, type BinnableMark } from "../../../components/timeline/model/bins";

describe("binMarks", () => {
  const mk = (id: string, plane: BinnableMark["plane"], t: number, outcome: BinnableMark["outcome"] = "ok") => ({
    id,
    plane,
    t,
    outcome,
  });

  it("keeps sparse marks and bins crowded buckets per lane with counts and the worst outcome", () => {
    const crowded = Array.from({ length: 1000 }, (_, i) =>
      mk(`c${i}`, "tools", 1000 + (i % 10), i === 7 ? "denied" : "ok"),
    );
    const items = [mk("s1", "session", 1005), mk("v1", "vault", 5000), ...crowded, mk("t-late", "tools", 9000)];
    const { marks, bins } = binMarks(items, { binMs: 100, maxPerBucket: 2 });
    expect(marks.map((m) => m.id)).toEqual(["s1", "v1", "t-late"]);
    expect(bins).toHaveLength(1);
    expect(bins[0]).toMatchObject({
      plane: "tools",
      count: 1000,
      worst: "denied",
      first: 1000,
      last: 1009,
      t0: 1000,
      t1: 1100,
    });
    expect(bins[0]?.outcomes).toEqual({ ok: 999, denied: 1, failed: 0, unknown: 0 });
  });

  it("does not bin across lanes and draws buckets at or under the limit mark by mark", () => {
    const items = [mk("a", "session", 10), mk("b", "session", 20), mk("c", "tools", 15), mk("d", "vault", 12)];
    const { marks, bins } = binMarks(items, { binMs: 100, maxPerBucket: 2 });
    expect(bins).toEqual([]);
    expect(marks).toHaveLength(4);
  });

  it("leaves kept ids out of bins and unbins a bucket left with one member", () => {
    const items = [mk("a", "tools", 1), mk("b", "tools", 2), mk("c", "tools", 3), mk("d", "tools", 4)];
    const kept = binMarks(items, { binMs: 10, maxPerBucket: 2, keepIds: new Set(["b"]) });
    expect(kept.marks.map((m) => m.id)).toEqual(["b"]);
    expect(kept.bins[0]?.ids).toEqual(["a", "c", "d"]);

    const three = binMarks(items.slice(0, 3), { binMs: 10, maxPerBucket: 2, keepIds: new Set(["a", "b"]) });
    expect(three.bins).toEqual([]);
    expect(three.marks.map((m) => m.id)).toEqual(["a", "b", "c"]);
  });

  it("anchors buckets in time so panning does not regroup marks", () => {
    const items = [mk("a", "tools", 95), mk("b", "tools", 99), mk("c", "tools", 101), mk("d", "tools", 105)];
    const { bins } = binMarks(items, { binMs: 10, maxPerBucket: 1 });
    expect(bins.map((b) => b.ids)).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
  });

  it("returns everything unbinned for a non-positive bucket width", () => {
    const items = [mk("a", "tools", 1), mk("b", "tools", 1), mk("c", "tools", 1)];
    expect(binMarks(items, { binMs: 0, maxPerBucket: 1 }).marks).toHaveLength(3);
  });
});
