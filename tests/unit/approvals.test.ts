/**
 * Approval rules (docs/concepts.md#approvals, #freshness): freshness and each stale reason, separation of duties, the
 * gate's approval reasons, and the standing the intent route answers (single use, rejected, pending).
 */
import { describe, expect, it } from "vitest";
import { separationOfDuties } from "@/lib/domain/approvals/decide";
import {
  approvalChanges,
  approvalStatus,
  inputDigestOf,
  staleReasons,
  STALE_REASONS,
  type BoundApproval,
  type CurrentApprovalFacts,
} from "@/lib/domain/approvals/freshness";
import { approvalGateReasons, approvalStanding } from "@/lib/domain/approvals/gate";
import type { ApprovalRow } from "@/lib/domain/approvals/read";
import { decisionSeal } from "@/lib/domain/approvals/seal";
import { generateSigningKey } from "@/lib/domain/crypto/signing";
import { reasonFix } from "@/lib/domain/gate/fixers";
import { GATE_REASONS } from "@/lib/domain/gate/reasons";
import { shownWriteStatus, writeApprovalOf } from "@/lib/domain/approvals/write-state";
import { evaluateGate, writePermission, type GateFacts } from "@/lib/domain/gate/evaluate";

const NOW = new Date("2026-11-30T12:00:00.000Z");
const INPUTS = inputDigestOf([{ ref: "s3://in/a.csv", sha256: "a".repeat(64) }]);

const bound = (over: Partial<BoundApproval> = {}): BoundApproval => ({
  principal: "alice@example.com",
  action: "publish_report",
  payload_digest: "d".repeat(64),
  input_digest: INPUTS,
  policy_version: "1",
  agent: "reporter",
  agent_version: "1.0.0",
  decision: "approve",
  expires_at: "2026-12-01T12:00:00.000Z",
  ...over,
});

const facts = (over: Partial<CurrentApprovalFacts> = {}): CurrentApprovalFacts => ({
  now: NOW,
  policy_version: "1",
  input_digest: INPUTS,
  principal: "alice@example.com",
  principal_revoked: false,
  approver_holds_role: true,
  ...over,
});

describe("freshness", () => {
  it("is fresh while nothing bound changed", () => {
    expect(staleReasons(bound(), facts())).toEqual([]);
    expect(approvalStatus(bound(), facts())).toEqual({ status: "approved", stale_reasons: [] });
    expect(approvalStatus(bound({ decision: null, expires_at: null }), facts()).status).toBe("pending");
  });

  it.each([
    ["expired", bound({ expires_at: "2026-11-30T11:59:59.000Z" }), facts()],
    ["policy_changed", bound(), facts({ policy_version: "2" })],
    ["payload_changed", bound(), facts({ offered: { payload_digest: "e".repeat(64) } })],
    ["payload_changed", bound({ offered_payload_digest: "e".repeat(64) }), facts()],
    ["payload_changed", bound(), facts({ offered: { action: "delete_report" } })],
    [
      "inputs_changed",
      bound(),
      facts({ input_digest: inputDigestOf([{ ref: "s3://in/b.csv", sha256: "b".repeat(64) }]) }),
    ],
    ["agent_changed", bound(), facts({ offered: { agent_version: "2.0.0" } })],
    ["agent_changed", bound({ offered_agent: "other-agent" }), facts()],
    ["approver_revoked", bound(), facts({ approver_holds_role: false })],
    ["principal_revoked", bound(), facts({ principal_revoked: true })],
    ["principal_revoked", bound(), facts({ principal: "bob@example.com" })],
  ] as const)("goes stale with %s", (reason, b, f) => {
    expect(staleReasons(b, f)).toEqual([reason]);
    expect(approvalStatus(b, f).status).toBe("stale");
  });

  it("records every reason at once, in a fixed order", () => {
    const all = staleReasons(
      bound({
        expires_at: "2026-11-01T00:00:00.000Z",
        tool_definition_digest: "1".repeat(64),
        destination_hosts: ["a.example.com"],
        input_classification: "internal",
        amount: 50,
        currency: "EUR",
      }),
      facts({
        input_classification: "restricted",
        policy_version: "9",
        input_digest: "x",
        tool_definition_digest: "2".repeat(64),
        approver_holds_role: false,
        principal_revoked: true,
        offered: {
          payload_digest: "f".repeat(64),
          agent_version: "3",
          destination_hosts: ["b.example.com"],
          amount: 80,
          currency: "EUR",
        },
      }),
    );
    expect(all).toEqual([...STALE_REASONS]);
  });

  it("a policy invalidation stands even when the version is set back", () => {
    expect(staleReasons(bound({ invalidated_reasons: ["policy_changed"] }), facts())).toEqual(["policy_changed"]);
  });

  it("a pending request neither expires nor loses its approver, but goes stale on bound fields", () => {
    const pending = bound({ decision: null, expires_at: null });
    expect(staleReasons(pending, facts({ approver_holds_role: false }))).toEqual([]);
    expect(staleReasons(pending, facts({ policy_version: "2" }))).toEqual(["policy_changed"]);
  });

  it("a rejection never goes stale", () => {
    expect(approvalStatus(bound({ decision: "reject" }), facts({ policy_version: "2" }))).toEqual({
      status: "rejected",
      stale_reasons: [],
    });
  });

  it("same digest and same agent offered again is still fresh", () => {
    expect(
      staleReasons(
        bound(),
        facts({
          offered: {
            payload_digest: "d".repeat(64),
            action: "publish_report",
            agent: "reporter",
            agent_version: "1.0.0",
          },
        }),
      ),
    ).toEqual([]);
  });

  it("changes list the approved and current values side by side", () => {
    const changes = approvalChanges(bound(), facts({ policy_version: "2", offered: { agent_version: "2.0.0" } }));
    expect(changes).toEqual([
      { field: "policy_version", approved: "1", current: "2" },
      { field: "agent_version", approved: "1.0.0", current: "2.0.0" },
    ]);
  });

  it("the input digest is of a set: order does not matter", () => {
    const a = { ref: "a", sha256: "1".repeat(64) };
    const b = { ref: "b", sha256: "2".repeat(64) };
    expect(inputDigestOf([a, b])).toBe(inputDigestOf([b, a]));
    expect(inputDigestOf([a])).not.toBe(inputDigestOf([b]));
  });
});

describe("separation of duties", () => {
  const byUser = { requested_by_kind: "user", requested_by_id: "u1" };
  it("refuses the requester deciding their own request", () => {
    expect(separationOfDuties(byUser, { userId: "u1" }, false)).toEqual({ allowed: false, self: true });
  });
  it("lets another person decide", () => {
    expect(separationOfDuties(byUser, { userId: "u2" }, false)).toEqual({ allowed: true, self: false });
  });
  it("a tenant may relax it (recorded as self-approved)", () => {
    expect(separationOfDuties(byUser, { userId: "u1" }, true)).toEqual({ allowed: true, self: true });
  });
  it("a runtime key's request may be decided by anyone with the role", () => {
    expect(
      separationOfDuties({ requested_by_kind: "api_key", requested_by_id: "u1" }, { userId: "u1" }, false).allowed,
    ).toBe(true);
  });
});

const row = (over: Partial<ApprovalRow> = {}): ApprovalRow =>
  ({
    id: "00000000-0000-4000-8000-000000000001",
    task_id: "task-1",
    side_effect: "publish",
    idempotency_key: "key-1",
    principal: "alice@example.com",
    action: "publish_report",
    tool: "publish",
    payload_digest: "d".repeat(64),
    payload: null,
    input_digest: INPUTS,
    policy_version: "1",
    agent: "reporter",
    agent_version: "1.0.0",
    requested_by_kind: "api_key",
    requested_by_id: "k1",
    requested_by: "key:runtime",
    requested_at: "2026-11-30T10:00:00.000000Z",
    origin: "intent",
    provider_request_id: null,
    call_id: null,
    decision: "approve",
    reason: null,
    decided_by_id: "u2",
    decided_by: "approver@example.com",
    decided_at: "2026-11-30T11:00:00.000000Z",
    expires_at: "2026-12-01T11:00:00.000000Z",
    self_approved: false,
    consumed_at: null,
    consumed_attempt: null,
    offered_payload_digest: null,
    offered_payload: null,
    offered_agent: null,
    offered_agent_version: null,
    offered_at: null,
    invalidated_reasons: [],
    invalidated_at: null,
    superseded_by: null,
    supersedes: null,
    decision_seal: "legacy",
    ...over,
  }) as ApprovalRow;

const SEAL = { key: generateSigningKey().key, tenantId: "00000000-0000-4000-8000-000000000001" };

describe("standing (the one function the gate and the intent route answer from)", () => {
  it("a decision whose seal does not hold is forged: nothing goes under it (decision 0036)", () => {
    const sealed = (r: ApprovalRow) => ({ ...r, decision_seal: decisionSeal(SEAL.key, SEAL.tenantId, r) });
    const good = sealed(row());
    expect(approvalStanding(good, facts(), SEAL).kind).toBe("go");
    for (const change of [
      { decision_seal: null },
      { payload_digest: "f".repeat(64) },
      { decided_by: "someone@example.com" },
      { expires_at: "2027-12-01T11:00:00.000000Z" },
      { decision: "approve" as const, reason: "changed" },
    ])
      expect(approvalStanding({ ...good, ...change }, facts(), SEAL).kind).toBe("forged");
    // Another tenant's key material or tenant id does not make it hold.
    expect(approvalStanding(good, facts(), { ...SEAL, tenantId: "00000000-0000-4000-8000-000000000002" }).kind).toBe(
      "forged",
    );
    // A pending request carries no seal and needs none.
    expect(approvalStanding(row({ decision: null, decision_seal: null }), facts(), SEAL).kind).toBe("missing");
  });

  it("a fresh approval lets one write go", () => {
    expect(approvalStanding(row(), facts(), SEAL)).toEqual({ kind: "go", approval_id: row().id });
  });
  it("single use: once used, it no longer authorizes a go", () => {
    expect(approvalStanding(row({ consumed_at: "2026-11-30T11:30:00.000000Z" }), facts(), SEAL).kind).toBe("used");
  });
  it("one state per write: the status a write shows is its live request's standing, siblings included", () => {
    const shown = (r: ApprovalRow, f = facts(), status: "approved" | "awaiting_approval" = "approved") => {
      const a = writeApprovalOf(approvalStanding(r, f, SEAL), r);
      return [shownWriteStatus(status, a), a.state, a.stale_reasons];
    };
    // Stale (the tried case: an approved write read "✓ approved" while the gate said stale).
    expect(shown(row(), facts({ policy_version: "2" }))).toEqual(["approval_stale", "stale", ["policy_changed"]]);
    // Rejected (the tried case: it read "awaiting approval").
    expect(shown(row({ decision: "reject", reason: "no" }), facts(), "awaiting_approval")).toEqual([
      "approval_rejected",
      "rejected",
      [],
    ]);
    // Expired, and a tool whose definition changed since.
    expect(shown(row(), facts({ now: new Date("2026-12-02T00:00:00Z") }))).toEqual([
      "approval_stale",
      "stale",
      ["expired"],
    ]);
    expect(
      shown(row({ tool_definition_digest: "a".repeat(64) }), facts({ tool_definition_digest: "b".repeat(64) })),
    ).toEqual(["approval_stale", "stale", ["tool_definition_changed"]]);
    // Used by an intent: approved (the effect's own status answers once its write starts); pending; fresh.
    expect(shown(row({ consumed_at: "2026-11-30T11:30:00.000000Z" }))).toEqual(["approved", "used", []]);
    expect(shown(row({ decision: null, expires_at: null, decided_by_id: null }), facts(), "awaiting_approval")).toEqual(
      ["awaiting_approval", "pending", []],
    );
    expect(shown(row())).toEqual(["approved", "approved", []]);
    // A decision the server did not seal, and a write already under way (its own status).
    expect(shown(row({ decision_seal: null }))).toEqual(["approval_unsealed", "unsealed", []]);
    expect(
      shownWriteStatus(
        "completed",
        writeApprovalOf({ kind: "stale", approval_id: "x", stale_reasons: ["expired"] }, row()),
      ),
    ).toBe("completed");
  });

  it("pending → missing; rejected → rejected; stale → stale with reasons", () => {
    expect(approvalStanding(row({ decision: null, expires_at: null, decided_by_id: null }), facts(), SEAL).kind).toBe(
      "missing",
    );
    expect(approvalStanding(row({ decision: "reject", reason: "no" }), facts(), SEAL).kind).toBe("rejected");
    expect(approvalStanding(row(), facts({ policy_version: "2" }), SEAL)).toEqual({
      kind: "stale",
      approval_id: row().id,
      stale_reasons: ["policy_changed"],
    });
  });

  it("gate reasons: approval_missing, approval_stale and policy_changed; a rejection is a notice, a fresh approval says nothing", () => {
    const pending = row({ id: "p", side_effect: "a", decision: null, expires_at: null, decided_by_id: null });
    const stale = row({ id: "s", side_effect: "b" });
    const fresh = row({ id: "f", side_effect: "c" });
    const rejected = row({ id: "r", side_effect: "d", decision: "reject" });
    const f2 = facts({ policy_version: "2" });
    const reasons = approvalGateReasons(
      "task-1",
      [
        { row: pending, standing: approvalStanding(pending, facts(), SEAL) },
        { row: stale, standing: approvalStanding(stale, f2, SEAL) },
        { row: fresh, standing: approvalStanding(fresh, facts(), SEAL) },
        { row: rejected, standing: approvalStanding(rejected, f2, SEAL) },
      ],
      ["e"],
      "2",
    );
    expect(reasons.approvals.map((r) => [r.code, r.target])).toEqual([
      ["approval_missing", "/approvals/p"],
      ["approval_stale", "/approvals/s"],
      ["approval_rejected", "/approvals/r"],
      ["approval_missing", "/tasks/task-1?tab=side-effects&effect=e"],
    ]);
    expect(GATE_REASONS.approval_rejected.kind).toBe("notice");
    expect(reasons.policy.map((r) => r.code)).toEqual(["policy_changed"]);
  });

  it("the gate stops on them and the intent route (writePermission) refuses a mutation for the same facts", () => {
    const gateFacts: GateFacts = {
      now: NOW,
      task: { task_id: "task-1", phase: "publish", principal: "alice@example.com", current_attempt: 1 },
      checkpoint: {
        version: 1,
        phase: "publish",
        signature_valid: true,
        created_at: NOW.toISOString(),
        tool_definitions: null,
      },
      principal_revocation: null,
      side_effects: [],
      snapshots_saved: [],
      snapshots_restored: [],
      credentials: [],
      tool_definitions_now: {},
      approvals: [{ code: "approval_stale", message: "stale", target: "/approvals/s" }],
      policy: [{ code: "policy_changed", message: "changed", target: "/approvals/s" }],
    };
    const verdict = evaluateGate(gateFacts);
    expect(verdict.verdict).toBe("stop");
    expect(verdict.reasons.map((r) => r.code)).toEqual(["policy_changed", "approval_stale"]);
    expect(writePermission(verdict, true)).toMatchObject({ allowed: false, code: "gate_stop" });
    expect(evaluateGate({ ...gateFacts, approvals: [], policy: [] }).verdict).toBe("resume");
  });

  it("approval reasons are fixed by people who decide approvals", () => {
    expect(GATE_REASONS.approval_stale.fix).toBe("approvals.decide");
    expect(reasonFix("approval_stale", "approver")).toEqual({ kind: "can_fix" });
    expect(reasonFix("policy_changed", "viewer").kind).toBe("other_roles");
  });
});

import { jsonDiff } from "@/lib/domain/json/diff";

describe("payload JSON diff", () => {
  it("lists added, removed and changed paths in order", () => {
    expect(jsonDiff({ title: "Q3", to: ["a"], n: 1 }, { title: "Q4", to: ["a", "b"], extra: true })).toEqual([
      { path: "$.extra", kind: "added", after: true },
      { path: "$.n", kind: "removed", before: 1 },
      { path: "$.title", kind: "changed", before: "Q3", after: "Q4" },
      { path: "$.to[1]", kind: "added", after: "b" },
    ]);
  });
  it("is empty for equal values, and names odd keys safely", () => {
    expect(jsonDiff({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual([]);
    expect(jsonDiff({ "a b": 1 }, { "a b": 2 })[0]!.path).toBe('$["a b"]');
  });
});
