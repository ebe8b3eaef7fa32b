/**
 * The timeline's markers: the types the event catalogue marks `timelineMarker` (the overview of a long run carries
 * every event of them) are exactly the types that shape the drawing — a rule across the lanes, the start or end of a
 * sandbox bar, the end of a tool call's attempt. A type the timeline draws but the catalogue does not mark would
 * vanish from long runs; a marker that draws nothing would cost the overview for nothing.
 */
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "@/lib/contract/api";
import { EVENT_CATALOGUE, TIMELINE_MARKER_TYPES, type EventType } from "@/lib/domain/events/catalogue";
import { deriveRules, deriveSandboxBars, deriveToolCallBars, sortEvents } from "@/components/timeline/model";

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, seconds)).toISOString();

function stored(over: Partial<StoredEvent> & Pick<StoredEvent, "id" | "type" | "plane">, seconds: number): StoredEvent {
  return {
    task_id: "case-918",
    occurred_at: at(seconds),
    received_at: at(seconds),
    environment_id: "sbx-1",
    attempt: 1,
    actor: null,
    attrs: {},
    redaction_count: 0,
    ...over,
  };
}

/** Whether one event of `type` (attempt 2, in the sandbox of attempt 1) changes anything the timeline draws. */
function shapesTimeline(type: EventType): boolean {
  const before = [
    stored({ id: "boot", plane: "environment", type: "x.sandbox.boot" }, 0),
    stored({ id: "call", plane: "tools", type: "tool.called", attrs: { call_id: "c1", tool: "fetch" } }, 1),
  ];
  const probe = stored({ id: "probe", plane: EVENT_CATALOGUE[type].plane, type, attempt: 2, attrs: {} }, 5);
  const draw = (events: StoredEvent[]) => {
    const sorted = sortEvents(events);
    const end = Date.parse(at(10));
    return {
      rules: deriveRules(sorted),
      sandboxes: deriveSandboxBars(sorted, end),
      calls: deriveToolCallBars(sorted, end).map((b) => ({ status: b.status, end: b.end })),
    };
  };
  const without = draw(before);
  const withProbe = draw([...before, probe]);
  return (
    withProbe.rules.length > without.rules.length ||
    withProbe.sandboxes.some((b) => b.createdEventId === "probe") ||
    JSON.stringify(withProbe.sandboxes.map((b) => [b.end, b.endedBy])) !==
      JSON.stringify(without.sandboxes.map((b) => [b.end, b.endedBy])) ||
    JSON.stringify(withProbe.calls) !== JSON.stringify(without.calls)
  );
}

describe("timeline markers", () => {
  it("are exactly the catalogue's types that shape the timeline", () => {
    const drawn = (Object.keys(EVENT_CATALOGUE) as EventType[]).filter(shapesTimeline);
    expect([...drawn].sort()).toEqual([...TIMELINE_MARKER_TYPES].sort());
  });
});
