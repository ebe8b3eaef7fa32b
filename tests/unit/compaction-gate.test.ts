/**
 * The compaction rule of the gate (docs/concepts.md#compaction-and-constraints): receive order decides, and only a
 * check after the latest compaction counts.
 */
import { describe, expect, it } from "vitest";
import { uncheckedCompaction } from "@/lib/domain/gate/compaction";
import { evaluateGate, type GateFacts } from "@/lib/domain/gate/evaluate";

const ev = (type: string, seq: number, occurred_at = "2026-01-01T00:00:00.000Z") => ({
  event_id: `e${seq}`,
  type,
  seq,
  occurred_at,
});

describe("unchecked compaction", () => {
  it("finds the latest compaction no check followed, by receive order", () => {
    expect(uncheckedCompaction([])).toBeNull();
    expect(uncheckedCompaction([ev("compaction.performed", 1)])).toEqual({
      event_id: "e1",
      occurred_at: "2026-01-01T00:00:00.000Z",
    });
    expect(uncheckedCompaction([ev("compaction.performed", 1), ev("constraint.checked", 2)])).toBeNull();
    expect(uncheckedCompaction([ev("constraint.checked", 1), ev("compaction.performed", 2)])).toMatchObject({
      event_id: "e2",
    });
    // Order of the array (occurred_at) does not matter; seq does.
    expect(
      uncheckedCompaction([
        ev("constraint.checked", 5, "2020-01-01T00:00:00.000Z"),
        ev("compaction.performed", 3, "2030-01-01T00:00:00.000Z"),
      ]),
    ).toBeNull();
    expect(
      uncheckedCompaction([ev("compaction.performed", 1), ev("constraint.checked", 2), ev("compaction.performed", 3)]),
    ).toMatchObject({ event_id: "e3" });
  });

  it("turns resume into replay with the reason, and never hides a stop", () => {
    const base: GateFacts = {
      now: new Date("2026-01-01T00:00:00Z"),
      task: { task_id: "t", phase: "p", principal: null, current_attempt: 1 },
      checkpoint: {
        version: 1,
        phase: "p",
        signature_valid: true,
        created_at: "2026-01-01T00:00:00Z",
        tool_definitions: null,
      },
      principal_revocation: null,
      side_effects: [],
      snapshots_saved: [],
      snapshots_restored: [],
      credentials: [],
      tool_definitions_now: {},
    };
    expect(evaluateGate(base).verdict).toBe("resume");
    const compacted = evaluateGate({
      ...base,
      compaction_unchecked: { event_id: "e9", occurred_at: "2026-01-01T00:00:00Z" },
    });
    expect(compacted).toMatchObject({
      verdict: "replay",
      reasons: [{ code: "constraints_unchecked", target: "/tasks/t?event=e9" }],
    });
    const stopped = evaluateGate({
      ...base,
      compaction_unchecked: { event_id: "e9", occurred_at: "x" },
      side_effects: [{ name: "w", status: "unknown", status_reason: null, lease_expires_at: null }],
    });
    expect(stopped.verdict).toBe("stop");
  });
});
