/**
 * The task page ships the timeline overview with its bins packed as numbers (lib/contract/overview-pack.ts): the
 * browser must get back exactly the bins the server counted, in epoch milliseconds, lane by lane.
 */
import { describe, expect, it } from "vitest";
import { packOverview, unpackBins } from "../../lib/contract/overview-pack";
import type { TimelineOverview } from "../../lib/contract/api";

const overview = (bins: TimelineOverview["bins"]): TimelineOverview => ({
  total: bins.reduce((n, b) => n + b.count, 0),
  counts: { session: 0, environment: 0, tools: 0, vault: 0 },
  range: { first: "2026-01-01T00:00:00.000000Z", last: "2026-01-02T00:00:00.000000Z" },
  complete: false,
  events: [],
  newest_from: null,
  bins,
  since: "WyIxIiwwXQ",
});

describe("packOverview / unpackBins", () => {
  it("round-trips every lane's bins, with the server's microsecond times as epoch ms", () => {
    const bins: TimelineOverview["bins"] = [
      {
        plane: "session",
        first: "2026-01-01T00:00:00.000000Z",
        last: "2026-01-01T00:05:59.123456Z",
        count: 360,
        failed: 0,
        denied: 0,
      },
      {
        plane: "environment",
        first: "2026-01-01T00:00:01.000000Z",
        last: "2026-01-01T00:00:01.000000Z",
        count: 1,
        failed: 0,
        denied: 0,
      },
      {
        plane: "tools",
        first: "2026-01-01T01:00:00.500000Z",
        last: "2026-01-01T01:06:00.000000Z",
        count: 12_345,
        failed: 7,
        denied: 3,
      },
      {
        plane: "vault",
        first: "2026-01-01T23:59:59.999000Z",
        last: "2026-01-02T00:00:00.000000Z",
        count: 2,
        failed: 0,
        denied: 2,
      },
    ];
    const packed = packOverview(overview(bins));
    expect(packed.bins).toHaveLength(bins.length * 6);
    expect(packed.bins.every((n) => typeof n === "number" && Number.isFinite(n))).toBe(true);
    expect(unpackBins(packed.bins)).toEqual(
      bins.map((b) => ({
        plane: b.plane,
        first: Date.parse(b.first),
        last: Date.parse(b.last),
        count: b.count,
        failed: b.failed,
        denied: b.denied,
      })),
    );
    // Everything else is the API's overview as it was.
    const { bins: _b, ...rest } = packed;
    const { bins: _o, ...original } = overview(bins);
    expect(rest).toEqual(original);
  });

  it("packs an overview without bins (a short run, sent whole) to an empty list", () => {
    expect(packOverview(overview([])).bins).toEqual([]);
    expect(unpackBins([])).toEqual([]);
  });

  it("is smaller than the objects it replaces", () => {
    const bins = Array.from({ length: 960 }, (_, i) => ({
      plane: (["session", "environment", "tools", "vault"] as const)[i % 4]!,
      first: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString().replace("Z", "000Z"),
      last: new Date(Date.UTC(2026, 0, 1) + i * 60_000 + 59_000).toISOString().replace("Z", "000Z"),
      count: 100 + i,
      failed: i % 3,
      denied: 0,
    }));
    const before = JSON.stringify(bins).length;
    const after = JSON.stringify(packOverview(overview(bins)).bins).length;
    expect(after).toBeLessThan(before / 2);
  });
});
