import { describe, expect, it } from "vitest";
import { sortEvents } from "../../../components/timeline/model/events";
import { deriveToolCallBars, toolCallLabel } from "../../../components/timeline/model/tool-calls";
import { T0, ev, sideEffect } from "./fixtures";

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
