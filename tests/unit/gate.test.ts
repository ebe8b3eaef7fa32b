/**
 * The resume gate as a pure function: every blocking code alone, every combination of them (all 2^12 subsets of the
 * codes it derives from its own facts), the fixed order of reasons, approval and policy reasons passed in, and the
 * replay conditions.
 */
import { describe, expect, it } from "vitest";
import type { GateReasonCode } from "@/lib/contract/api";
import { evaluateGate, writePermission, type GateFacts } from "@/lib/domain/gate/evaluate";
import { BLOCKING_CODES, GATE_REASONS, NOTICE_CODES, REPLAY_CODES } from "@/lib/domain/gate/reasons";

/** The reporting order, written out: a verdict lists its reasons in this order (then by target). */
const BLOCKING_ORDER: readonly GateReasonCode[] = [
  "task_terminated",
  "record_signature_invalid",
  "checkpoint_misplaced",
  "evidence_mismatch",
  "principal_revoked",
  "policy_changed",
  "approval_missing",
  "approval_stale",
  "side_effect_unknown",
  "sandbox_not_fresh",
  "snapshot_unverified",
  "snapshot_stale",
  "credential_revoked",
  "credential_expired",
  "egress_policy_inconsistent",
  "tool_definition_changed",
];
const REPLAY_ORDER: readonly GateReasonCode[] = ["no_checkpoint", "side_effect_in_flight", "constraints_unchecked"];

const NOW = new Date("2026-11-29T12:00:00Z");
const SHA_A = "a".repeat(64);
const SHA_B = "b".repeat(64);
const SHA_C = "c".repeat(64);

/** A task that may resume: verified checkpoint, effects settled, credentials fresh, tools unchanged. */
function cleanFacts(): GateFacts {
  return {
    now: NOW,
    task: { task_id: "case-918", phase: "writing_report", principal: "tenant/demo:user/olive", current_attempt: 2 },
    checkpoint: {
      version: 3,
      phase: "writing_report",
      signature_valid: true,
      created_at: "2026-11-29T11:00:00.000000Z",
      tool_definitions: { update_record: SHA_A },
      snapshot: { digest: SHA_A, snapshot_id: "snap-1" },
    },
    principal_revocation: null,
    side_effects: [
      { name: "update_record", status: "completed", status_reason: null, lease_expires_at: null },
      { name: "publish_report", status: "not_started", status_reason: null, lease_expires_at: null },
    ],
    snapshots_saved: [SHA_A],
    snapshots_restored: [{ event_id: "e9", digest: SHA_A, snapshot_id: "snap-1" }],
    credentials: [
      {
        credential_ref: "records-api",
        credential_id: "c2",
        revoked_at: null,
        expired_at: null,
        expires_at: "2026-11-29T13:00:00Z",
      },
    ],
    tool_definitions_now: { update_record: SHA_A },
  };
}

/** One way to make each of today's blocking conditions true. */
const BREAKERS: Partial<Record<GateReasonCode, (f: GateFacts) => void>> = {
  record_signature_invalid: (f) => {
    // The latest record was altered; an earlier one still verifies (the gate resumes from that one).
    f.verified_checkpoint = { ...f.checkpoint!, version: f.checkpoint!.version - 1 };
    f.checkpoint = { ...f.checkpoint!, signature_valid: false, phase: "done" };
  },
  evidence_mismatch: (f) => {
    // The completed effect's row was changed outside the server.
    f.unsealed_effects = ["update_record"];
  },
  task_terminated: (f) => {
    f.task = { ...f.task, terminated: { at: "2026-11-29T11:00:00.000Z", by: "olive@example.com", reason: "runaway" } };
  },
  principal_revoked: (f) => {
    f.principal_revocation = {
      principal: f.task.principal!,
      reason: "left the company",
      revoked_at: "2026-11-29T11:30:00Z",
    };
  },
  approval_missing: (f) => {
    f.side_effects.push({
      name: "publish_report_final",
      status: "awaiting_approval",
      status_reason: null,
      lease_expires_at: null,
    });
  },
  side_effect_unknown: (f) => {
    f.side_effects[0] = {
      name: "update_record",
      status: "unknown",
      status_reason: "The run was interrupted.",
      lease_expires_at: null,
    };
  },
  sandbox_not_fresh: (f) => {
    f.sandboxes_reused = [{ event_id: "e11", sandbox_id: "sbx-1", attempt: 2, earlier_attempt: 1 }];
  },
  snapshot_unverified: (f) => {
    f.snapshots_restored = [{ event_id: "e10", digest: SHA_B, snapshot_id: "snap-x" }];
  },
  snapshot_stale: (f) => {
    // A snapshot the task saved, but not the one the checkpoint to resume from names.
    f.snapshots_saved.push(SHA_C);
    f.snapshots_restored.push({ event_id: "e12", digest: SHA_C, snapshot_id: "snap-0" });
  },
  credential_revoked: (f) => {
    f.credentials[0]!.revoked_at = "2026-11-29T11:45:00Z";
  },
  credential_expired: (f) => {
    f.credentials.push({
      credential_ref: "storage",
      credential_id: "s1",
      revoked_at: null,
      expired_at: null,
      expires_at: "2026-11-29T11:59:59Z",
    });
  },
  tool_definition_changed: (f) => {
    f.tool_definitions_now = { update_record: SHA_B };
  },
};
/** The blocking codes evaluateGate derives from its own facts (the others arrive as approval and policy reasons). */
const FACT_CODES = Object.keys(BREAKERS) as GateReasonCode[];

describe("evaluateGate", () => {
  it("resumes a clean task and permits only effects that may start", () => {
    const v = evaluateGate(cleanFacts());
    expect(v).toEqual({
      verdict: "resume",
      reasons: [],
      next_phase: "writing_report",
      permitted_side_effects: ["publish_report"],
    });
  });

  it.each(FACT_CODES)("stops for %s alone, with exactly that reason", (code) => {
    const f = cleanFacts();
    BREAKERS[code]!(f);
    const v = evaluateGate(f);
    expect(v.verdict).toBe("stop");
    expect(v.reasons.map((r) => r.code)).toEqual([code]);
    expect(v.permitted_side_effects).toEqual([]);
    expect(v.reasons[0]!.message.length).toBeGreaterThan(20);
    expect(v.reasons[0]!.target).toMatch(/^\//);
  });

  it("stops with checkpoint_misplaced, not record_signature_invalid, for a signed record out of its place", () => {
    const f = cleanFacts();
    BREAKERS.record_signature_invalid!(f);
    f.checkpoint = { ...f.checkpoint!, misplaced: true };
    const v = evaluateGate(f);
    expect(v.verdict).toBe("stop");
    expect(v.reasons.map((r) => r.code)).toEqual(["checkpoint_misplaced"]);
    expect(v.reasons[0]!.message).toContain("the latest checkpoint that verifies in its place is v2");
    expect(v.next_phase).toBe("writing_report");
  });

  it("reports the catalogue's codes in the documented order, blocking codes before replay codes, notices last", () => {
    expect(BLOCKING_CODES).toEqual(BLOCKING_ORDER);
    expect(REPLAY_CODES).toEqual(REPLAY_ORDER);
    expect(NOTICE_CODES).toEqual(["approval_rejected"]);
    expect(Object.keys(GATE_REASONS)).toEqual([...BLOCKING_ORDER, ...REPLAY_ORDER, "approval_rejected"]);
  });

  it("a notice (a rejected approval) is said with the verdict and changes none", () => {
    const notice = { code: "approval_rejected" as const, message: "rejected", target: "/approvals/x" };
    const clean = evaluateGate({ ...cleanFacts(), approvals: [notice] });
    expect(clean.verdict).toBe("resume");
    expect(clean.reasons).toEqual([notice]);
    const f = cleanFacts();
    BREAKERS.record_signature_invalid!(f);
    const stopped = evaluateGate({ ...f, approvals: [notice] });
    expect(stopped.verdict).toBe("stop");
    expect(stopped.reasons.map((r) => r.code)).toEqual(["record_signature_invalid", "approval_rejected"]);
  });

  it("lists every reason of every combination, in the documented order", () => {
    let combos = 0;
    for (let mask = 0; mask < 1 << FACT_CODES.length; mask++) {
      const chosen = FACT_CODES.filter((_, i) => mask & (1 << i));
      const f = cleanFacts();
      for (const c of chosen) BREAKERS[c]!(f);
      const v = evaluateGate(f);
      const expected = BLOCKING_ORDER.filter((c) => chosen.includes(c));
      expect(v.reasons.map((r) => r.code)).toEqual(expected);
      expect(v.verdict).toBe(chosen.length ? "stop" : "resume");
      combos++;
    }
    expect(combos).toBe(4096);
  });

  it("reports several reasons of one code, ordered by target", () => {
    const f = cleanFacts();
    f.side_effects = [
      { name: "zeta", status: "unknown", status_reason: null, lease_expires_at: null },
      { name: "alpha", status: "unknown", status_reason: null, lease_expires_at: null },
    ];
    const v = evaluateGate(f);
    expect(v.reasons.map((r) => r.target)).toEqual([
      "/tasks/case-918?tab=side-effects&effect=alpha",
      "/tasks/case-918?tab=side-effects&effect=zeta",
    ]);
  });

  it("treats an in-flight effect whose lease expired as unknown", () => {
    const f = cleanFacts();
    f.side_effects[0] = {
      name: "update_record",
      status: "in_flight",
      status_reason: null,
      lease_expires_at: "2026-11-29T11:59:00Z",
    };
    expect(evaluateGate(f).reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
  });

  it("answers replay while an older attempt's lease is live, and lets no mutation start", () => {
    const f = cleanFacts();
    f.side_effects[0] = {
      name: "update_record",
      status: "in_flight",
      status_reason: null,
      lease_expires_at: "2026-11-29T12:05:00Z",
      intent_attempt: 1,
    };
    const v = evaluateGate(f);
    expect(v.verdict).toBe("replay");
    expect(v.reasons.map((r) => r.code)).toEqual(["side_effect_in_flight"]);
    expect(v.reasons[0]!.message).toContain("attempt 1");
    expect(v.permitted_side_effects).toEqual([]);
  });

  it("lets writes of the asking attempt run side by side; an asking newer attempt is held back by them", () => {
    const f = cleanFacts();
    f.side_effects[0] = {
      name: "update_record",
      status: "in_flight",
      status_reason: null,
      lease_expires_at: "2026-11-29T12:05:00Z",
      intent_attempt: 2,
    };
    expect(evaluateGate(f).verdict).toBe("resume");
    f.asking_attempt = 2;
    expect(evaluateGate(f).verdict).toBe("resume");
    f.asking_attempt = 3;
    expect(evaluateGate(f)).toMatchObject({
      verdict: "replay",
      reasons: [expect.objectContaining({ code: "side_effect_in_flight" })],
    });
  });

  it("never takes next_phase or tool definitions from a checkpoint that does not verify", () => {
    const f = cleanFacts();
    f.checkpoint = {
      ...f.checkpoint!,
      version: 4,
      phase: "done",
      signature_valid: false,
      tool_definitions: { update_record: SHA_B },
    };
    f.verified_checkpoint = {
      ...f.checkpoint,
      version: 3,
      phase: "writing_report",
      signature_valid: true,
      tool_definitions: { update_record: SHA_A },
    };
    f.tool_definitions_now = { update_record: SHA_B };
    const v = evaluateGate(f);
    expect(v.verdict).toBe("stop");
    expect(v.next_phase).toBe("writing_report");
    expect(v.reasons.map((r) => r.code)).toEqual(["record_signature_invalid", "tool_definition_changed"]);
    expect(v.reasons[0]!.message).toContain("v3");
    f.verified_checkpoint = null;
    expect(evaluateGate(f).next_phase).toBe("start");
  });

  it("words a stored reason inside the sentence without nesting brackets", () => {
    const f = cleanFacts();
    f.side_effects[0] = {
      name: "update_record",
      status: "unknown",
      status_reason: "The run was interrupted (event e-7) before a receipt was recorded.",
      lease_expires_at: null,
    };
    const message = evaluateGate(f).reasons[0]!.message;
    expect(message).toContain("(event e-7)");
    expect(message).not.toMatch(/\([^)]*\(/);
  });

  it("answers replay without any checkpoint, and stop wins over replay", () => {
    const f = cleanFacts();
    f.checkpoint = null;
    const v = evaluateGate(f);
    expect(v.verdict).toBe("replay");
    expect(v.next_phase).toBe("start");
    expect(v.reasons.map((r) => r.code)).toEqual(["no_checkpoint"]);
    BREAKERS.side_effect_unknown!(f);
    const w = evaluateGate(f);
    expect(w.verdict).toBe("stop");
    expect(w.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
  });

  it("lists every replay reason at once in the documented order", () => {
    const f = cleanFacts();
    f.checkpoint = null;
    f.side_effects[0] = {
      name: "update_record",
      status: "in_flight",
      status_reason: null,
      lease_expires_at: "2026-11-29T12:05:00Z",
      intent_attempt: 1,
    };
    f.compaction_unchecked = { event_id: "e11", occurred_at: "2026-11-29T11:50:00Z" };
    const v = evaluateGate(f);
    expect(v.verdict).toBe("replay");
    expect(v.reasons.map((r) => r.code)).toEqual(REPLAY_ORDER);
  });

  it("takes approval and policy reasons from their seams and places them in order", () => {
    const f = cleanFacts();
    BREAKERS.tool_definition_changed!(f);
    BREAKERS.record_signature_invalid!(f);
    f.approvals = [{ code: "approval_stale", message: "policy changed since approval", target: "/approvals/1" }];
    f.policy = [{ code: "policy_changed", message: "policy v2 replaced v1", target: "/policies" }];
    expect(evaluateGate(f).reasons.map((r) => r.code)).toEqual([
      "record_signature_invalid",
      "policy_changed",
      "approval_stale",
      "tool_definition_changed",
    ]);
  });

  it("derives approval_missing from an effect awaiting approval only until the approvals seam answers", () => {
    const f = cleanFacts();
    BREAKERS.approval_missing!(f);
    const v = evaluateGate(f);
    expect(v.verdict).toBe("stop");
    expect(v.reasons).toEqual([
      expect.objectContaining({
        code: "approval_missing",
        target: "/tasks/case-918?tab=side-effects&effect=publish_report_final",
      }),
    ]);
    f.approvals = [];
    expect(evaluateGate(f).verdict).toBe("resume");
  });

  it("does not flag a tool the checkpoint did not know, nor an unchanged one", () => {
    const f = cleanFacts();
    f.tool_definitions_now = { update_record: SHA_A, brand_new_tool: SHA_B };
    expect(evaluateGate(f).verdict).toBe("resume");
  });

  it("counts a credential as expired exactly at its expiry instant", () => {
    const f = cleanFacts();
    f.credentials[0]!.expires_at = NOW.toISOString();
    expect(evaluateGate(f).reasons.map((r) => r.code)).toEqual(["credential_expired"]);
    f.credentials[0]!.expires_at = new Date(NOW.getTime() + 1).toISOString();
    expect(evaluateGate(f).verdict).toBe("resume");
  });

  it("prefers revoked over expired for one credential, and reports a restored snapshot without a digest", () => {
    const f = cleanFacts();
    f.credentials[0] = {
      credential_ref: "records-api",
      credential_id: "c2",
      revoked_at: "2026-11-29T11:00:00Z",
      expired_at: "2026-11-29T11:10:00Z",
      expires_at: null,
    };
    f.snapshots_restored = [{ event_id: "e11", digest: null, snapshot_id: null }];
    expect(evaluateGate(f).reasons.map((r) => r.code)).toEqual(["snapshot_unverified", "credential_revoked"]);
  });

  describe("writePermission: the intent route's answer from the same verdict", () => {
    it("lets a write go only on resume, and a read go unless the principal is revoked", () => {
      const clean = evaluateGate(cleanFacts());
      expect(writePermission(clean, true)).toEqual({ allowed: true });
      const replay = cleanFacts();
      replay.checkpoint = null;
      expect(writePermission(evaluateGate(replay), true)).toMatchObject({
        allowed: false,
        code: "gate_replay",
        reasons: [expect.objectContaining({ code: "no_checkpoint" })],
      });
      expect(writePermission(evaluateGate(replay), false)).toEqual({ allowed: true });
      for (const code of FACT_CODES) {
        const f = cleanFacts();
        BREAKERS[code]!(f);
        const verdict = evaluateGate(f);
        const write = writePermission(verdict, true);
        const read = writePermission(verdict, false);
        expect(write.allowed, code).toBe(false);
        if (!write.allowed)
          expect(write.code, code).toBe(code === "principal_revoked" ? "principal_revoked" : "gate_stop");
        expect(read.allowed, code).toBe(code !== "principal_revoked");
      }
    });

    it("never allows a write the gate would not permit, over every combination", () => {
      for (let mask = 0; mask < 1 << FACT_CODES.length; mask++) {
        const f = cleanFacts();
        FACT_CODES.filter((_, i) => mask & (1 << i)).forEach((c) => BREAKERS[c]!(f));
        const verdict = evaluateGate(f);
        expect(writePermission(verdict, true).allowed).toBe(verdict.verdict === "resume");
      }
    });
  });

  it("is pure: the same facts give the same verdict", () => {
    const f = cleanFacts();
    BREAKERS.principal_revoked!(f);
    expect(evaluateGate(f)).toEqual(evaluateGate(structuredClone(f)));
  });
});

describe("restores and sandboxes (decision 0032)", () => {
  it("holds only restores received after the checkpoint to the snapshot it names", () => {
    const f = cleanFacts();
    f.snapshots_saved.push(SHA_C);
    f.snapshots_restored = [{ event_id: "e12", digest: SHA_C, snapshot_id: "snap-0", after_checkpoint: false }];
    expect(evaluateGate(f).verdict).toBe("resume");
    f.snapshots_restored[0]!.after_checkpoint = true;
    const v = evaluateGate(f);
    expect(v.reasons.map((r) => r.code)).toEqual(["snapshot_stale"]);
    expect(v.reasons[0]!.message).toContain("phase writing_report");
  });

  it("names no stale snapshot when the checkpoint names none", () => {
    const f = cleanFacts();
    f.checkpoint!.snapshot = null;
    f.snapshots_saved.push(SHA_C);
    f.snapshots_restored.push({ event_id: "e12", digest: SHA_C, snapshot_id: "snap-0" });
    expect(evaluateGate(f).verdict).toBe("resume");
  });

  it("names the sandbox an earlier attempt used", () => {
    const f = cleanFacts();
    f.sandboxes_reused = [{ event_id: "e11", sandbox_id: "sbx-1", attempt: 2, earlier_attempt: 1 }];
    const v = evaluateGate(f);
    expect(v.reasons[0]).toMatchObject({ code: "sandbox_not_fresh", target: "/tasks/case-918?event=e11" });
    expect(v.reasons[0]!.message).toContain("sandbox.verified");
  });
});

describe("tool definitions: only a person's acceptance ends a change; a request only adds (decision 0033)", () => {
  const D1 = "1".repeat(64);
  const D2 = "2".repeat(64);
  const accepted = [{ tool: "publish", digest: D1, since: "2026-01-01T00:00:00.000000Z" }];
  const withTools = (over: Partial<GateFacts>): GateFacts => ({
    ...cleanFacts(),
    tool_definitions_accepted: accepted,
    ...over,
  });
  const event = (digest: string, at = "2026-01-01T00:00:01.000000Z") => ({
    tool: "publish",
    digest,
    source: "event" as const,
    received_at: at,
  });

  it("a reported change stops, naming both digests; a request naming the accepted digest does not remove it", () => {
    const v = evaluateGate(withTools({ tool_definition_reports: [event(D2)], tool_definitions_now: { publish: D1 } }));
    expect(v.reasons.map((r) => r.code)).toEqual(["tool_definition_changed"]);
    expect(v.reasons[0]!.message).toContain(D1);
    expect(v.reasons[0]!.message).toContain(D2);
  });

  it("a later checkpoint carrying the new digest does not end it; a report before the acceptance does not count", () => {
    const checkpointD2 = {
      tool: "publish",
      digest: D2,
      source: "checkpoint" as const,
      received_at: "2026-01-01T00:00:02.000000Z",
    };
    expect(evaluateGate(withTools({ tool_definition_reports: [event(D2), checkpointD2] })).verdict).toBe("stop");
    expect(
      evaluateGate(withTools({ tool_definition_reports: [event(D2, "2025-12-31T23:59:59.000000Z")] })).verdict,
    ).toBe("resume");
  });

  it("a request can add a change of its own; a tool the server holds no definition of is no change", () => {
    expect(evaluateGate(withTools({ tool_definitions_now: { publish: D2 } })).verdict).toBe("stop");
    expect(evaluateGate(withTools({ tool_definitions_now: { other: D2 } })).verdict).toBe("resume");
  });
});
