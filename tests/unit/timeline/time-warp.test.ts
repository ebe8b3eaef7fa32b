import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../lib/contract/api";
import { sortEvents } from "../../../components/timeline/model/events";
import { labelWidth } from "../../../components/timeline/model/rows";
import { deriveSandboxBars, fitSandboxBarLabel } from "../../../components/timeline/model/sandbox-bars";
import {
  findIdleGaps,
  frameTimeline,
  makeTimeWarp,
  warpedTicks,
  warpedTimeScale,
} from "../../../components/timeline/model/time-warp";
import { T0, ev } from "./fixtures";

/** The reference scenario once it finished: attempt 1 lost after about a second, attempt 2 waits ~2 min and ends. */
function endedRun(): StoredEvent[] {
  const a1 = { environment_id: "sbx-1", attempt: 1 };
  const a2 = { environment_id: "sbx-2", attempt: 2 };
  return [
    ev({ type: "task.created", plane: "session" }, 0),
    ev({ type: "sandbox.created", plane: "environment", ...a1 }, 0.1),
    ev({ type: "tool.called", plane: "tools", ...a1, attrs: { tool: "read_document", call_id: "c1" } }, 0.3),
    ev({ type: "tool.completed", plane: "tools", ...a1, attrs: { tool: "read_document", call_id: "c1" } }, 0.35),
    ev({ type: "run.interrupted", plane: "session", ...a1, id: "int-1" }, 1.0),
    ev({ type: "sandbox.destroyed", plane: "environment", ...a1 }, 1.05),
    ev({ type: "sandbox.created", plane: "environment", ...a2, id: "restart-2" }, 1.3),
    ev({ type: "run.resumed", plane: "session", ...a2 }, 110),
    ev({ type: "tool.called", plane: "tools", ...a2, attrs: { tool: "write_report", call_id: "c2" } }, 111),
    ev({ type: "tool.completed", plane: "tools", ...a2, attrs: { tool: "write_report", call_id: "c2" } }, 112),
    ev({ type: "sandbox.destroyed", plane: "environment", ...a2 }, 120),
  ];
}

describe("idle stretches and the compressed time scale", () => {
  const PLOT: readonly [number, number] = [128, 1266];

  /** Pixel width of attempt 1's sandbox bar after "Fit", with or without compression. */
  function attemptOneWidth(compress: boolean): { width: number; gapPx: number } {
    const sorted = sortEvents(endedRun());
    const bars = deriveSandboxBars(sorted, sorted.at(-1)!.t);
    const { warp, fit } = frameTimeline([...sorted.map((s) => s.t), ...bars.map((b) => b.end)], compress);
    const scale = warpedTimeScale(warp, fit, PLOT, "utc");
    const first = bars.find((b) => b.attempt === 1)!;
    const gapPx = warp.gaps.reduce((n, g) => n + scale(new Date(g.end)) - scale(new Date(g.start)), 0);
    return { width: scale(new Date(first.end)) - scale(new Date(first.start)), gapPx };
  }

  it("keeps the crash region readable after the run finished: attempt 1's bar is wide enough for its label", () => {
    // A linear scale spends the width on the two-minute wait: attempt 1 is under 10 px (it "disappeared").
    expect(attemptOneWidth(false).width).toBeLessThan(10);
    const compressed = attemptOneWidth(true);
    expect(compressed.width).toBeGreaterThan(labelWidth("attempt 1") + 8);
    expect(fitSandboxBarLabel({ attempt: 1, open: false }, compressed.width - 8)).toBe("attempt 1");
    // The idle stretch stays visible as a band, narrow but not gone.
    expect(compressed.gapPx).toBeGreaterThan(20);
    expect(compressed.gapPx).toBeLessThan(120);
  });

  it("finds only long stretches, and only when they are a large part of the span", () => {
    const s = (x: number) => T0 + x * 1000;
    expect(findIdleGaps([s(0), s(1), s(1.3), s(110), s(120)])).toEqual([{ start: s(1.3), end: s(110) }]);
    // Evenly spread activity: nothing to compress.
    expect(findIdleGaps(Array.from({ length: 20 }, (_, i) => s(i * 30)))).toEqual([]);
    // Short runs (every stretch under ten seconds) are never compressed.
    expect(findIdleGaps([s(0), s(0.1), s(8), s(8.2)])).toEqual([]);
    // Two instants only: nothing is left outside the stretch.
    expect(findIdleGaps([s(0), s(100)])).toEqual([]);
    expect(findIdleGaps([])).toEqual([]);
  });

  it("maps real to virtual time monotonically, shortening only the gaps, and back", () => {
    const warp = makeTimeWarp(
      [
        { start: 1_000, end: 101_000 },
        { start: 101_000, end: 201_000 },
        { start: 300_000, end: 400_000 },
      ],
      500,
    );
    expect(warp.toVirtual(0)).toBe(0);
    expect(warp.toVirtual(1_000)).toBe(1_000);
    expect(warp.toVirtual(101_000)).toBeCloseTo(1_500);
    expect(warp.toVirtual(201_000)).toBeCloseTo(2_000);
    // Outside gaps, durations are unchanged.
    expect(warp.toVirtual(250_000) - warp.toVirtual(201_000)).toBeCloseTo(49_000);
    expect(warp.toVirtual(500_000) - warp.toVirtual(400_000)).toBeCloseTo(100_000);
    for (const t of [-5_000, 0, 999, 1_000, 50_000, 101_000, 150_000, 299_000, 350_000, 420_000]) {
      expect(warp.toReal(warp.toVirtual(t))).toBeCloseTo(t, 3);
    }
    let prev = -Infinity;
    for (let t = -10_000; t < 500_000; t += 3_333) {
      const v = warp.toVirtual(t);
      expect(v).toBeGreaterThan(prev);
      prev = v;
    }
  });

  it("puts axis ticks outside the bands, never crowded, with breaks at the band edges", () => {
    const sorted = sortEvents(endedRun());
    const { warp, fit } = frameTimeline(
      sorted.map((s) => s.t),
      true,
    );
    expect(warp.gaps).toHaveLength(1);
    const scale = warpedTimeScale(warp, fit, PLOT, "utc");
    const gap = warp.gaps[0]!;
    expect(scale.domain().map((d) => d.getTime())).toEqual(expect.arrayContaining([gap.start, gap.end]));
    expect(scale.invert(scale(new Date(gap.end))).getTime()).toBeCloseTo(gap.end, -1);
    const ticks = warpedTicks(scale, warp.gaps, "utc");
    expect(ticks.length).toBeGreaterThanOrEqual(4);
    const xs = ticks.map((d) => scale(d));
    for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThanOrEqual(48);
    for (const d of ticks) expect(d.getTime() > gap.start && d.getTime() < gap.end).toBe(false);
    // Without compression: the scale's own ticks.
    const { fit: linearFit } = frameTimeline(
      sorted.map((s) => s.t),
      false,
    );
    const linear = warpedTimeScale(makeTimeWarp([], 1), linearFit, PLOT, "utc");
    expect(warpedTicks(linear, [], "utc").map((d) => d.getTime())).toEqual(linear.ticks(11).map((d) => d.getTime()));
  });
});
