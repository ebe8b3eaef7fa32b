import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../lib/contract/api";
import { sortEvents } from "../../../components/timeline/model/events";
import { ALL_EVENTS_FILTER, matchesFilter, neighbourId } from "../../../components/timeline/model/selection";
import { ev } from "./fixtures";

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
