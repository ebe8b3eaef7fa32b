import { describe, expect, it } from "vitest";
import { PLANES } from "../../db/schema/enums";
import type { SideEffectView, StoredEvent } from "../../lib/contract/api";
import { formatClock, formatDuration, formatInstant, formatTick } from "../../components/timeline/format";
import {
  ALL_EVENTS_FILTER,
  LANES,
  binMarks,
  classifyOutcome,
  countRedactedValues,
  deriveRules,
  deriveSandboxBars,
  deriveToolCallBars,
  findIdleGaps,
  frameTimeline,
  makeTimeWarp,
  toolCallLabel,
  warpedTicks,
  warpedTimeScale,
  ensureVisible,
  fitDomain,
  fitSandboxBarLabel,
  labelWidth,
  laneIndex,
  markShape,
  matchesFilter,
  neighbourId,
  packRows,
  panDomain,
  planeLabel,
  relatedSideEffectName,
  sandboxBarLabel,
  sortEvents,
  summarizeAttrs,
  zoomDomain,
  type BinnableMark,
} from "../../components/timeline/layout";

const T0 = Date.UTC(2025, 2, 4, 12, 0, 0);
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let seq = 0;
function ev(partial: Partial<StoredEvent> & Pick<StoredEvent, "type" | "plane">, seconds: number): StoredEvent {
  seq += 1;
  return {
    id: partial.id ?? `evt-${seq}`,
    task_id: "task-1",
    occurred_at: at(seconds),
    received_at: at(seconds + 1),
    environment_id: null,
    attempt: null,
    actor: null,
    attrs: {},
    redaction_count: 0,
    ...partial,
  };
}

function sideEffect(status: SideEffectView["status"]): SideEffectView {
  return {
    idempotency_key: "k-1",
    status,
    tool: "records",
    action: "update",
    mutation: true,
    payload_digest: null,
    status_reason: null,
    intent_at: null,
    lease_expires_at: null,
    last_reconcile: null,
    origin: "intent",
    call_id: null,
    intent_attempt: null,
    unapplied_receipts: [],
    updated_at: at(0),
  };
}

describe("lanes", () => {
  it("has the four planes in PLANES order with their visible labels", () => {
    expect(LANES.map((l) => l.plane)).toEqual([...PLANES]);
    expect(LANES.map((l) => l.label)).toEqual(["Session", "Environment", "Tools & egress", "Vault"]);
    expect(laneIndex("tools")).toBe(2);
    expect(planeLabel("tools")).toBe("Tools & egress");
  });
});

describe("sortEvents", () => {
  it("orders by occurred_at, keeps input order for ties and drops unparseable times", () => {
    const a = ev({ id: "a", type: "task.created", plane: "session" }, 5);
    const b = ev({ id: "b", type: "tool.called", plane: "tools" }, 1);
    const c = ev({ id: "c", type: "tool.completed", plane: "tools" }, 5);
    const bad = { ...ev({ id: "bad", type: "x.noise", plane: "tools" }, 0), occurred_at: "not a time" };
    const sorted = sortEvents([a, bad, b, c]);
    expect(sorted.map((s) => s.event.id)).toEqual(["b", "a", "c"]);
    expect(sorted[0]?.t).toBe(T0 + 1000);
  });
});

describe("markShape and classifyOutcome", () => {
  it("shapes marks by kind", () => {
    expect(markShape("side_effect.intent")).toBe("diamond");
    expect(markShape("credential.used")).toBe("square");
    expect(markShape("egress.denied")).toBe("triangle");
    expect(markShape("checkpoint.saved")).toBe("circle");
  });

  it("classifies denied, failed, unknown and ok", () => {
    const effects = { update_record: sideEffect("unknown"), publish_report: sideEffect("completed") };
    expect(classifyOutcome({ type: "egress.denied", attrs: {} })).toBe("denied");
    expect(classifyOutcome({ type: "credential.denied", attrs: {} })).toBe("denied");
    expect(classifyOutcome({ type: "tool.failed", attrs: {} })).toBe("failed");
    expect(classifyOutcome({ type: "egress.allowed", attrs: {} })).toBe("ok");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "update_record" } }, effects)).toBe("unknown");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { side_effect: "update_record" } }, effects)).toBe(
      "unknown",
    );
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "publish_report" } }, effects)).toBe("ok");
    // A receipt is not an intent; an intent without side-effect data is not guessed to be unknown.
    expect(classifyOutcome({ type: "side_effect.receipt", attrs: { name: "update_record" } }, effects)).toBe("ok");
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "update_record" } })).toBe("ok");
    // Inherited object keys are not side effects.
    expect(classifyOutcome({ type: "side_effect.intent", attrs: { name: "toString" } }, effects)).toBe("ok");
  });

  it("finds the side effect an event is about, only when known", () => {
    const effects = { publish_report: sideEffect("awaiting_approval") };
    expect(relatedSideEffectName({ type: "side_effect.receipt", attrs: { name: "publish_report" } }, effects)).toBe(
      "publish_report",
    );
    expect(
      relatedSideEffectName({ type: "approval.invalidated", attrs: { side_effect: "publish_report" } }, effects),
    ).toBe("publish_report");
    expect(relatedSideEffectName({ type: "side_effect.intent", attrs: { name: "other" } }, effects)).toBeNull();
    expect(relatedSideEffectName({ type: "tool.called", attrs: { name: "publish_report" } }, effects)).toBeNull();
  });
});

describe("deriveSandboxBars", () => {
  it("draws one bar per environment id from created to destroyed/replaced, open bars to the end of data", () => {
    const events = [
      ev({ type: "sandbox.created", plane: "environment", environment_id: "sbx-1", attempt: 1, id: "c1" }, 0),
      ev({ type: "tool.called", plane: "tools", environment_id: "sbx-1", attempt: 1 }, 10),
      ev({ type: "sandbox.replaced", plane: "environment", environment_id: "sbx-1", attempt: 1 }, 60),
      ev({ type: "sandbox.created", plane: "environment", environment_id: "sbx-2", attempt: 2, id: "c2" }, 70),
      ev({ type: "tool.called", plane: "tools", environment_id: "sbx-2", attempt: 2 }, 90),
    ];
    const bars = deriveSandboxBars(sortEvents(events), T0 + 120_000);
    expect(bars).toHaveLength(2);
    const [first, second] = bars;
    expect(first).toMatchObject({
      environmentId: "sbx-1",
      attempt: 1,
      start: T0,
      end: T0 + 60_000,
      open: false,
      endedBy: "replaced",
      createdEventId: "c1",
      row: 0,
    });
    expect(second).toMatchObject({
      environmentId: "sbx-2",
      attempt: 2,
      start: T0 + 70_000,
      end: T0 + 120_000,
      open: true,
      endedBy: null,
      createdEventId: "c2",
      row: 0,
    });
    expect(sandboxBarLabel(second ?? { attempt: null })).toBe("attempt 2");
  });

  it("puts overlapping sandboxes on separate rows and infers a start without a creation event", () => {
    const events = [
      ev({ type: "snapshot.saved", plane: "environment", environment_id: "old", attempt: 3 }, 5),
      ev({ type: "sandbox.created", plane: "environment", environment_id: "new", attempt: 4 }, 20),
      ev({ type: "sandbox.destroyed", plane: "environment", environment_id: "old" }, 30),
      ev({ type: "sandbox.destroyed", plane: "environment", environment_id: "new" }, 50),
    ];
    const bars = deriveSandboxBars(sortEvents(events), T0 + 50_000);
    expect(bars.map((b) => [b.environmentId, b.row, b.createdEventId === null, b.attempt, b.endedBy])).toEqual([
      ["old", 0, true, 3, "destroyed"],
      ["new", 1, false, 4, "destroyed"],
    ]);
    expect(bars[0]?.start).toBe(T0 + 5_000);
    expect(sandboxBarLabel({ attempt: null })).toBe("sandbox");
  });

  it("fits a sandbox bar's label whole into the bar, shortened, or not at all", () => {
    const closed = { attempt: 1, open: false };
    const open = { attempt: 2, open: true };
    expect(fitSandboxBarLabel(closed, 500)).toBe("attempt 1");
    expect(fitSandboxBarLabel(open, 500)).toBe("attempt 2 (no end recorded)");
    expect(fitSandboxBarLabel(open, labelWidth("attempt 2"))).toBe("attempt 2");
    expect(fitSandboxBarLabel(closed, labelWidth("attempt 1") - 1)).toBe("#1");
    // A bar a few pixels wide (attempt 1 after "fit" on a long run) shows no text rather than "at".
    expect(fitSandboxBarLabel(closed, 4)).toBeNull();
    expect(fitSandboxBarLabel(closed, -20)).toBeNull();
    expect(fitSandboxBarLabel({ attempt: null, open: false }, labelWidth("sandbox"))).toBe("sandbox");
    expect(fitSandboxBarLabel({ attempt: null, open: false }, labelWidth("sandbox") - 1)).toBeNull();
    // Whatever is chosen fits the room it was given.
    for (let room = -10; room < 200; room += 3) {
      const label = fitSandboxBarLabel(open, room);
      if (label !== null) expect(labelWidth(label)).toBeLessThanOrEqual(room);
    }
  });

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

describe("deriveRules", () => {
  it("marks interruptions, restarts (attempt > 1), resumes and stops", () => {
    const events = [
      ev({ type: "sandbox.created", plane: "environment", attempt: 1, id: "s1" }, 0),
      ev({ type: "run.interrupted", plane: "session", attempt: 1, id: "i1" }, 30),
      ev({ type: "sandbox.created", plane: "environment", attempt: 2, id: "s2" }, 60),
      ev({ type: "run.resumed", plane: "session", attempt: 2, id: "r2" }, 61),
      ev({ type: "run.stopped", plane: "session", id: "x" }, 90),
    ];
    const rules = deriveRules(sortEvents(events));
    expect(rules.map((r) => [r.eventId, r.kind, r.label])).toEqual([
      ["i1", "interruption", "interrupted"],
      ["s2", "restart", "restart · attempt 2"],
      ["r2", "resume", "resumed · attempt 2"],
      ["x", "stop", "stopped"],
    ]);
    expect(rules[0]?.t).toBe(T0 + 30_000);
  });
});

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

describe("selection", () => {
  const sorted = sortEvents([
    ev({ id: "e1", type: "task.created", plane: "session" }, 1),
    ev({ id: "e2", type: "egress.denied", plane: "tools" }, 2),
    ev({ id: "e3", type: "credential.used", plane: "vault" }, 3),
    ev({ id: "e4", type: "egress.allowed", plane: "tools" }, 4),
  ]);

  it("moves to the next and previous event in time, staying at the ends", () => {
    expect(neighbourId(sorted, "e2", 1)).toBe("e3");
    expect(neighbourId(sorted, "e2", -1)).toBe("e1");
    expect(neighbourId(sorted, "e4", 1)).toBe("e4");
    expect(neighbourId(sorted, "e1", -1)).toBe("e1");
  });

  it("starts at the first or last event with no selection", () => {
    expect(neighbourId(sorted, null, 1)).toBe("e1");
    expect(neighbourId(sorted, null, -1)).toBe("e4");
    expect(neighbourId(sorted, "missing", 1)).toBe("e1");
    expect(neighbourId([], null, 1)).toBeNull();
  });

  it("skips events the filter hides", () => {
    const toolsOnly = (e: StoredEvent) => matchesFilter(e, { planes: ["tools"], typeQuery: "" });
    expect(neighbourId(sorted, "e2", 1, toolsOnly)).toBe("e4");
    expect(neighbourId(sorted, "e3", -1, toolsOnly)).toBe("e2");
    expect(neighbourId(sorted, null, 1, toolsOnly)).toBe("e2");
  });

  it("filters by plane and by every term of the type query", () => {
    const e = { plane: "tools" as const, type: "egress.denied" };
    expect(matchesFilter(e, ALL_EVENTS_FILTER)).toBe(true);
    expect(matchesFilter(e, { planes: ["session"], typeQuery: "" })).toBe(false);
    expect(matchesFilter(e, { planes: ["tools"], typeQuery: "EGRESS" })).toBe(true);
    expect(matchesFilter(e, { planes: ["tools"], typeQuery: "egress denied" })).toBe(true);
    expect(matchesFilter(e, { planes: ["tools"], typeQuery: "egress allowed" })).toBe(false);
  });
});

describe("summaries and redactions", () => {
  it("summarizes preferred scalar attributes first and cuts long values", () => {
    const long = "x".repeat(60);
    expect(summarizeAttrs({ nested: { a: 1 }, zeta: 1, host: "api.example.com", outcome: "denied", note: long })).toBe(
      "host=api.example.com · outcome=denied · zeta=1",
    );
    expect(summarizeAttrs({ note: long }, 1)).toBe(`note=${"x".repeat(39)}…`);
    expect(summarizeAttrs({ list: [1, 2] })).toBe("");
  });

  it("counts redaction markers anywhere in a JSON value", () => {
    expect(
      countRedactedValues({
        headers: { authorization: "[REDACTED]", cookie: "a=[REDACTED]; b=[REDACTED]" },
        list: ["ok", "[REDACTED]"],
        n: 3,
      }),
    ).toBe(4);
    expect(countRedactedValues({ clean: "value" })).toBe(0);
  });
});

describe("time formatting", () => {
  it("formats instants, clocks and durations in UTC", () => {
    const ms = Date.UTC(2025, 2, 4, 9, 5, 7, 42);
    expect(formatInstant(ms, "utc")).toBe("2025-03-04 09:05:07.042 UTC");
    expect(formatClock(ms, "utc")).toBe("09:05:07.042");
    expect(formatInstant(Number.NaN, "utc")).toBe("invalid time");
    expect(formatInstant(ms, "local")).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.042 UTC[+-]\d{2}:\d{2}$/);
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_400)).toBe("12.4 s");
    expect(formatDuration(252_000)).toBe("4 min 12 s");
    expect(formatDuration(3 * 3_600_000 + 5 * 60_000)).toBe("3 h 05 min");
  });

  it("labels axis ticks at the coarsest unit that is not a boundary", () => {
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 9, 5, 7, 250)), "utc")).toBe(".250");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 9, 5, 30)), "utc")).toBe(":30");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 14, 5)), "utc")).toBe("14:05");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4, 18)), "utc")).toBe("18:00");
    expect(formatTick(new Date(Date.UTC(2025, 2, 4)), "utc")).toBe("Mar 4");
    expect(formatTick(new Date(Date.UTC(2025, 2, 1)), "utc")).toBe("Mar");
    expect(formatTick(new Date(Date.UTC(2025, 0, 1)), "utc")).toBe("2025");
  });
});

describe("deriveSandboxBars: a later attempt ends an open sandbox", () => {
  it("ends attempt 1 where attempt 2 is created when attempt 1 has no end event", () => {
    const mk = (id: string, type: string, t: number, env: string, attempt: number) => ({
      t,
      event: {
        id,
        task_id: "t",
        plane: "environment" as const,
        type,
        occurred_at: new Date(t).toISOString(),
        received_at: new Date(t).toISOString(),
        environment_id: env,
        attempt,
        actor: null,
        attrs: {},
        redaction_count: 0,
      },
    });
    const bars = deriveSandboxBars(
      [mk("a", "sandbox.created", 1000, "sbx-1", 1), mk("b", "sandbox.created", 5000, "sbx-2", 2)],
      9000,
    );
    const first = bars.find((b) => b.environmentId === "sbx-1")!;
    const second = bars.find((b) => b.environmentId === "sbx-2")!;
    expect(first).toMatchObject({ start: 1000, end: 5000, open: false, endedBy: "replaced" });
    expect(second).toMatchObject({ start: 5000, end: 9000, open: true });
  });
});

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

describe("deriveToolCallBars", () => {
  it("pairs calls with outcomes by call id, never by order", () => {
    const a = { environment_id: "sbx-1", attempt: 1 };
    const sorted = sortEvents([
      ev({ type: "tool.called", plane: "tools", ...a, id: "call-a", attrs: { tool: "fetch_a", call_id: "A" } }, 1),
      ev({ type: "tool.called", plane: "tools", ...a, id: "call-b", attrs: { tool: "fetch_b", call_id: "B" } }, 2),
      // B finishes first, then A fails: pairing by order would give A's bar B's outcome.
      ev({ type: "tool.completed", plane: "tools", ...a, id: "done-b", attrs: { tool: "fetch_b", call_id: "B" } }, 3),
      ev({ type: "tool.failed", plane: "tools", ...a, id: "fail-a", attrs: { tool: "fetch_a", call_id: "A" } }, 9),
    ]);
    const bars = deriveToolCallBars(sorted, T0 + 10_000);
    expect(bars.map((b) => [b.callId, b.status, b.outcomeEventId, (b.end - b.start) / 1000])).toEqual([
      ["A", "failed", "fail-a", 8],
      ["B", "completed", "done-b", 1],
    ]);
    expect(bars.map((b) => b.row)).toEqual([0, 1]);
    expect(toolCallLabel(bars[0]!)).toBe("fetch_a · failed");
    expect(toolCallLabel(bars[1]!)).toBe("fetch_b");
  });

  it("leaves a mutating call without outcome unknown once its attempt ends, a read one without result, a live one pending", () => {
    const a1 = { environment_id: "sbx-1", attempt: 1 };
    const a2 = { environment_id: "sbx-2", attempt: 2 };
    const sorted = sortEvents([
      ev(
        {
          type: "tool.called",
          plane: "tools",
          ...a1,
          id: "w1",
          attrs: { tool: "update_record", call_id: "c1", mutation: true },
        },
        1,
      ),
      ev({ type: "tool.called", plane: "tools", ...a1, id: "r1", attrs: { tool: "read_document", call_id: "c2" } }, 2),
      ev({ type: "run.interrupted", plane: "session", ...a1, id: "int" }, 5),
      ev({ type: "sandbox.created", plane: "environment", ...a2 }, 8),
      // Attempt 2 reuses call id c1 (its counter restarted): it is a different call, and its outcome is not c1's of attempt 1.
      ev(
        {
          type: "tool.called",
          plane: "tools",
          ...a2,
          id: "w2",
          attrs: { tool: "update_record", call_id: "c1", mutation: true },
        },
        9,
      ),
      ev({ type: "tool.completed", plane: "tools", ...a2, id: "w2-done", attrs: { call_id: "c1" } }, 10),
      ev({ type: "tool.called", plane: "tools", ...a2, id: "r2", attrs: { tool: "search", call_id: "c3" } }, 11),
      ev({ type: "tool.called", plane: "tools", ...a2, id: "x", attrs: { tool: "no_id" } }, 12),
    ]);
    const bars = deriveToolCallBars(sorted, T0 + 20_000);
    const byCall = Object.fromEntries(bars.map((b) => [b.calledEventId, b]));
    expect(byCall.w1).toMatchObject({
      status: "unknown",
      mutation: true,
      end: T0 + 5_000,
      endedByEventId: "int",
      outcomeEventId: null,
    });
    expect(byCall.r1).toMatchObject({ status: "no_result", mutation: false, end: T0 + 5_000 });
    expect(byCall.w2).toMatchObject({ status: "completed", outcomeEventId: "w2-done" });
    expect(byCall.r2).toMatchObject({ status: "pending", end: T0 + 20_000, endedByEventId: null });
    expect(byCall.x).toBeUndefined();
    expect(toolCallLabel(byCall.w1!)).toBe("update_record · outcome unknown");
    expect(toolCallLabel(byCall.r1!)).toBe("read_document · no result recorded");
  });

  it("treats the call of a declared effect as mutating: its intent names the call id, or (naming none) the tool", () => {
    const a1 = { environment_id: "sbx-1", attempt: 1 };
    const sorted = sortEvents([
      ev(
        { type: "tool.called", plane: "tools", ...a1, id: "by-tool", attrs: { tool: "update_record", call_id: "c1" } },
        1,
      ),
      ev(
        { type: "side_effect.intent", plane: "tools", ...a1, attrs: { name: "update_record", tool: "update_record" } },
        2,
      ),
      ev({ type: "tool.called", plane: "tools", ...a1, id: "by-id", attrs: { tool: "http", call_id: "c2" } }, 3),
      ev(
        { type: "side_effect.intent", plane: "tools", ...a1, attrs: { name: "notify", tool: "other", call_id: "c2" } },
        4,
      ),
      ev({ type: "tool.called", plane: "tools", ...a1, id: "read", attrs: { tool: "lookup", call_id: "c3" } }, 5),
      ev(
        { type: "side_effect.intent", plane: "tools", ...a1, attrs: { name: "peek", tool: "lookup", mutation: false } },
        6,
      ),
      ev({ type: "run.interrupted", plane: "session", ...a1 }, 9),
    ]);
    const byCall = Object.fromEntries(deriveToolCallBars(sorted, T0 + 10_000).map((b) => [b.calledEventId, b]));
    expect(byCall["by-tool"]).toMatchObject({ mutation: true, status: "unknown" });
    expect(byCall["by-id"]).toMatchObject({ mutation: true, status: "unknown" });
    expect(byCall.read).toMatchObject({ mutation: false, status: "no_result" });
    expect(byCall["by-tool"]?.effect).toBe("update_record");
    // Once a person has reconciled the effect, its call is no longer unknown.
    const settled = deriveToolCallBars(sorted, T0 + 10_000, 3, {
      update_record: sideEffect("completed"),
      notify: sideEffect("unknown"),
    });
    expect(settled.map((b) => [b.calledEventId, b.status])).toEqual([
      ["by-tool", "reconciled"],
      ["by-id", "unknown"],
      ["read", "no_result"],
    ]);
  });

  it("ends an attempt's open calls at a later attempt's sandbox or at its own sandbox's end", () => {
    const sorted = sortEvents([
      ev(
        {
          type: "tool.called",
          plane: "tools",
          environment_id: "s1",
          attempt: 1,
          attrs: { call_id: "k", mutation: true },
        },
        1,
      ),
      ev({ type: "sandbox.created", plane: "environment", environment_id: "s2", attempt: 2, id: "s2-created" }, 4),
      ev({ type: "tool.called", plane: "tools", environment_id: "s3", attrs: { call_id: "m" } }, 5),
      ev({ type: "sandbox.destroyed", plane: "environment", environment_id: "s3", id: "s3-gone" }, 6),
    ]);
    const bars = deriveToolCallBars(sorted, T0 + 9_000);
    expect(bars.map((b) => [b.callId, b.status, b.endedByEventId])).toEqual([
      ["k", "unknown", "s2-created"],
      ["m", "no_result", "s3-gone"],
    ]);
  });

  it("caps the rows: many overlapping calls share the last one", () => {
    const sorted = sortEvents(
      Array.from({ length: 6 }, (_, i) => ev({ type: "tool.called", plane: "tools", attrs: { call_id: `p${i}` } }, i)),
    );
    expect(deriveToolCallBars(sorted, T0 + 60_000, 3).map((b) => b.row)).toEqual([0, 1, 2, 2, 2, 2]);
  });
});
