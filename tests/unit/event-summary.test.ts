/**
 * Event bodies as pages carry them (lib/domain/events/summary.ts, decision 0034): small attrs whole, large ones as a
 * bounded summary or a capped detail, marked `attrs_truncated`.
 */
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "@/lib/contract/api";
import {
  DETAIL_ATTRS_CHARS,
  DETAIL_STRING_CHARS,
  SUMMARY_ATTRS_CHARS,
  SUMMARY_STRING_CHARS,
  capAttrs,
  eventDetail,
  eventSummary,
} from "@/lib/domain/events/summary";

const event = (attrs: Record<string, unknown>): StoredEvent => ({
  id: "e1",
  task_id: "t1",
  plane: "tools",
  type: "tool.completed",
  occurred_at: "2026-12-01T00:00:00.000000Z",
  received_at: "2026-12-01T00:00:00.000000Z",
  environment_id: null,
  attempt: 1,
  actor: null,
  attrs,
  redaction_count: 0,
});

describe("event summaries and details", () => {
  it("small attrs travel whole, unmarked", () => {
    const e = event({ call_id: "c1", tool: "x", nested: { a: [1, 2] } });
    expect(eventSummary(e)).toBe(e);
    expect(eventDetail(e)).toBe(e);
  });

  it("a 63 KB body becomes a summary of top-level scalars within the budget", () => {
    const e = event({ call_id: "c1", tool: "fetch", ok: true, n: 3, body: "x".repeat(63_000), rows: [{ a: 1 }] });
    const s = eventSummary(e);
    expect(s.attrs_truncated).toBe(true);
    expect(s.attrs).toEqual({
      call_id: "c1",
      tool: "fetch",
      ok: true,
      n: 3,
      body: `${"x".repeat(SUMMARY_STRING_CHARS)}…`,
    });
    expect(JSON.stringify(s.attrs).length).toBeLessThanOrEqual(SUMMARY_ATTRS_CHARS);
  });

  it("many keys stop at the budget", () => {
    const attrs = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, "v".repeat(50)]));
    expect(JSON.stringify(eventSummary(event(attrs)).attrs).length).toBeLessThanOrEqual(SUMMARY_ATTRS_CHARS);
    expect(JSON.stringify(eventDetail(event(attrs)).attrs).length).toBeLessThanOrEqual(DETAIL_ATTRS_CHARS);
  });

  it("a detail keeps the structure, cuts long strings and stops at its budget", () => {
    const e = event({ tool: "fetch", nested: { rows: ["r".repeat(10_000), 2] }, body: "y".repeat(63_000) });
    const d = eventDetail(e);
    expect(d.attrs_truncated).toBe(true);
    expect((d.attrs.nested as { rows: unknown[] }).rows[0]).toBe(`${"r".repeat(DETAIL_STRING_CHARS)}…`);
    expect(JSON.stringify(d.attrs).length).toBeLessThanOrEqual(DETAIL_ATTRS_CHARS);
  });

  it("never splits a surrogate pair", () => {
    const { attrs } = capAttrs({ s: "😀".repeat(100) }, { budget: 50, maxString: 11, depth: 1 });
    const s = attrs.s as string;
    expect(s.endsWith("…")).toBe(true);
    expect(s.isWellFormed()).toBe(true);
  });
});
