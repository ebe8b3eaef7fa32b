import { describe, expect, it } from "vitest";
import { sortEvents } from "../../../components/timeline/model/events";
import { deriveRules } from "../../../components/timeline/model/rules";
import { T0, ev } from "./fixtures";

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
