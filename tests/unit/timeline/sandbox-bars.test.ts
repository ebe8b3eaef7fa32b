import { describe, expect, it } from "vitest";
import { sortEvents } from "../../../components/timeline/model/events";
import { labelWidth } from "../../../components/timeline/model/rows";
import {
  deriveSandboxBars,
  fitSandboxBarLabel,
  sandboxBarLabel,
} from "../../../components/timeline/model/sandbox-bars";
import { T0, ev } from "./fixtures";

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
