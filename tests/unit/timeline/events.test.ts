import { describe, expect, it } from "vitest";
import { sortEvents } from "../../../components/timeline/model/events";
import { T0, ev } from "./fixtures";

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
