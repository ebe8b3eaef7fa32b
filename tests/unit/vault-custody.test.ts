/**
 * Vault custody (decision 0019): the gate judges credentials against the current policy (a ttl counted on the server's
 * clock, a credential the current version no longer declares), vault-lane events lose credential values and
 * placeholders and are flagged, and the compaction rule carries forward over the arrival feed.
 */
import { describe, expect, it } from "vitest";
import { evaluateGate, type GateFacts } from "@/lib/domain/gate/evaluate";
import { followUncheckedCompaction } from "@/lib/domain/gate/compaction";
import { durationSeconds } from "@/lib/domain/policies/document";
import { findVaultPlaceholders, mayHoldVaultValue, redactVaultAttrs } from "@/lib/domain/secrets/vault";
import { fastPrepare, prepareFully, type PreparedEvent } from "@/lib/domain/events/ingest";

const NOW = new Date("2026-11-29T12:00:00Z");

function facts(
  credential: Partial<GateFacts["credentials"][number]> = {},
  policy?: GateFacts["credential_policy"],
): GateFacts {
  return {
    now: NOW,
    task: { task_id: "case-918", phase: "writing_report", principal: null, current_attempt: 1 },
    checkpoint: {
      version: 1,
      phase: "writing_report",
      signature_valid: true,
      created_at: "2026-11-29T11:00:00Z",
      tool_definitions: null,
    },
    principal_revocation: null,
    side_effects: [],
    snapshots_saved: [],
    snapshots_restored: [],
    credentials: [
      {
        credential_ref: "records-api",
        credential_id: "c1",
        revoked_at: null,
        expired_at: null,
        expires_at: null,
        held_since: "2026-11-29T11:50:00.000Z",
        ...credential,
      },
    ],
    tool_definitions_now: {},
    credential_policy: policy,
  };
}

const policy = (ttl: number | null, names = ["records-api"], version = 4): GateFacts["credential_policy"] => ({
  version,
  credentials: names.map((name) => ({ name, ttl_seconds: ttl, ttl: ttl === null ? null : `${ttl / 60}m` })),
});

describe("the gate judges credentials against the current policy", () => {
  it("says nothing without a policy, and nothing while the policy declares the credential within its ttl", () => {
    expect(evaluateGate(facts()).verdict).toBe("resume");
    expect(evaluateGate(facts({}, null)).verdict).toBe("resume");
    expect(evaluateGate(facts({}, policy(null))).verdict).toBe("resume");
    // Held 10 minutes under a 15-minute ttl.
    expect(evaluateGate(facts({}, policy(900))).verdict).toBe("resume");
  });

  it("expires a credential held longer than its policy ttl, counted from the server's receive time", () => {
    const v = evaluateGate(facts({}, policy(300)));
    expect(v.verdict).toBe("stop");
    expect(v.reasons).toHaveLength(1);
    expect(v.reasons[0]).toMatchObject({ code: "credential_expired", target: "/tasks/case-918?plane=vault" });
    expect(v.reasons[0]!.message).toContain("ttl of 5m in policy v4");
    expect(v.reasons[0]!.message).toContain("expired at 2026-11-29T11:55:00.000Z");
    // Exactly at the end of the ttl it has expired; a second before, it has not.
    expect(evaluateGate(facts({ held_since: "2026-11-29T11:55:00.000Z" }, policy(300))).verdict).toBe("stop");
    expect(evaluateGate(facts({ held_since: "2026-11-29T11:55:01.000Z" }, policy(300))).verdict).toBe("resume");
    // Without a known issue time the ttl cannot be judged (the vault lane's own expiry still counts).
    expect(evaluateGate(facts({ held_since: null }, policy(300))).verdict).toBe("resume");
  });

  it("revokes a credential the current policy no longer declares, naming the version", () => {
    const v = evaluateGate(facts({}, policy(900, ["storage"], 7)));
    expect(v.verdict).toBe("stop");
    expect(v.reasons).toEqual([
      expect.objectContaining({
        code: "credential_revoked",
        target: "/policies?v=7",
        message: expect.stringContaining("removed from policy v7"),
      }),
    ]);
    // A policy without credentials withdraws every credential the run holds.
    expect(evaluateGate(facts({}, policy(null, [], 8))).reasons.map((r) => r.code)).toEqual(["credential_revoked"]);
  });

  it("gives one reason per credential: the vault lane's own revocation or expiry comes first", () => {
    const revoked = evaluateGate(facts({ revoked_at: "2026-11-29T11:58:00Z" }, policy(60, ["storage"])));
    expect(revoked.reasons).toHaveLength(1);
    expect(revoked.reasons[0]!.message).toContain("was revoked at 2026-11-29T11:58:00Z");
    const expired = evaluateGate(facts({ expired_at: "2026-11-29T11:58:00Z" }, policy(60, ["storage"])));
    expect(expired.reasons.map((r) => r.code)).toEqual(["credential_expired"]);
  });

  it("reads policy durations as seconds", () => {
    expect([
      durationSeconds(90),
      durationSeconds("45s"),
      durationSeconds("15m"),
      durationSeconds("24h"),
      durationSeconds("7d"),
    ]).toEqual([90, 45, 900, 86_400, 604_800]);
  });
});

describe("the vault lane carries metadata only", () => {
  it("finds placeholders of secret managers and templates, and nothing else", () => {
    const found = (text: string) => findVaultPlaceholders(text).map((s) => text.slice(s.start, s.end));
    expect(found("{{vault:kv/records#token}}")).toEqual(["{{vault:kv/records#token}}"]);
    expect(found("Bearer {{ secrets.RECORDS_TOKEN }} here")).toEqual(["{{ secrets.RECORDS_TOKEN }}"]);
    expect(found("x=${secrets.RECORDS_TOKEN};y=${{ secrets.B }}")).toEqual([
      "${secrets.RECORDS_TOKEN}",
      "${{ secrets.B }}",
    ]);
    expect(found("${env:RECORDS_TOKEN}")).toEqual(["${env:RECORDS_TOKEN}"]);
    expect(found("op://Private/records/credential and more")).toEqual(["op://Private/records/credential"]);
    expect(found("{{vault:unterminated value")).toEqual(["{{vault:unterminated"]);
    // Not placeholders: templates of other things, scope text, URLs.
    expect(found("repo:{{org}}/x ${user.name} shop://x https://records.example.com/op://")).toEqual([]);
    expect(found("records:write")).toEqual([]);
  });

  it("resumes after what a candidate read, so dense candidates are read once (decision 0008)", () => {
    const n = 20_000;
    const count = (unit: string) => findVaultPlaceholders(unit.repeat(n)).length;
    expect(count("{{")).toBe(0);
    expect(count("${")).toBe(0);
    // Unterminated: the placeholder runs to the end of its word, and later candidates no longer look for a `}`.
    expect(count("{{vault")).toBe(1);
    expect(count("op://")).toBe(1);
    // Each unterminated placeholder ends at a space, having taken the next unit's braces with it.
    expect(count("{{ secrets.")).toBe(n / 2);
  });

  it("redacts values and placeholders, keeping the metadata, and says what and where", () => {
    const attrs = {
      credential_ref: "records-api",
      scope: "records:write",
      expires_at: "2026-11-29T13:00:00Z",
      allowed_hosts: ["records.example.com"],
      value: "hunter2-but-longer",
      env: { name: "RECORDS_TOKEN", Secret_Value: 12345678 },
      header: "Authorization: Bearer {{vault:kv/records#token}}",
      delivered: true,
    };
    const out = redactVaultAttrs(attrs);
    expect(out.value).toEqual({
      ...attrs,
      value: "[REDACTED]",
      env: { name: "RECORDS_TOKEN", Secret_Value: "[REDACTED]" },
      header: "Authorization: Bearer [REDACTED]",
    });
    expect(out.redactions).toEqual([
      { path: "value", kind: "credential_value" },
      { path: "env.Secret_Value", kind: "credential_value" },
      { path: "header", kind: "vault_placeholder" },
    ]);
    expect(attrs.value).toBe("hunter2-but-longer"); // the input is not modified
    expect(redactVaultAttrs({ credential_ref: "records-api", scope: "records:write" }).redactions).toEqual([]);
  });

  it("takes vault events that may hold a value off the hot path, redacts them and flags their kinds", () => {
    const event = (attrs: Record<string, unknown>, plane = "vault") => ({
      id: "e1",
      task_id: "t1",
      plane,
      type: plane === "vault" ? "credential.issued" : "tool.called",
      occurred_at: "2026-11-29T11:00:00Z",
      attrs,
    });
    const plain = event({ credential_ref: "records-api", scope: "records:write", expires_at: "2026-11-29T13:00:00Z" });
    expect(fastPrepare(plain)).toMatchObject({ redaction_count: 0, redaction_kinds: null });
    expect(mayHoldVaultValue(JSON.stringify({ value: "x" }))).toBe(true);
    expect(fastPrepare(event({ credential_ref: "records-api", value: "plain-text-value" }))).toBeNull();

    const full = prepareFully(
      event({
        credential_ref: "records-api",
        value: "plain-text-value",
        token_hint: "${secrets.RECORDS}",
        api: "sk-" + "a".repeat(40),
      }),
    ) as PreparedEvent;
    expect(full.attrs).toEqual({
      credential_ref: "records-api",
      value: "[REDACTED]",
      token_hint: "[REDACTED]",
      api: "[REDACTED]",
    });
    expect(full.redaction_count).toBe(3);
    expect(full.redaction_kinds).toEqual(["api_key", "credential_value", "vault_placeholder"]);
    // On other planes a `value` and an environment template are ordinary data; a secret manager's placeholder is
    // redacted on every plane (decision 0027).
    const tools = prepareFully(
      event({ value: "plain-text-value", home: "${env:HOME}", hint: "${secrets.RECORDS}" }, "tools"),
    ) as PreparedEvent;
    expect(tools.attrs).toEqual({ value: "plain-text-value", home: "${env:HOME}", hint: "[REDACTED]" });
    expect(tools.redaction_kinds).toEqual(["vault_placeholder"]);
  });
});

describe("the compaction rule over the arrival feed", () => {
  const c = { event_id: "c1", occurred_at: "2026-01-01T00:00:00.000Z" };
  const ev = (id: string, type: string) => ({ id, type, occurred_at: "2026-01-01T00:00:01.000Z" });
  it("the last compaction or check received decides; other events change nothing", () => {
    expect(followUncheckedCompaction(c, [ev("x", "tool.called")])).toBe(c);
    expect(followUncheckedCompaction(c, [ev("k", "constraint.checked")])).toBeNull();
    expect(followUncheckedCompaction(null, [ev("c2", "compaction.performed")])).toMatchObject({ event_id: "c2" });
    expect(followUncheckedCompaction(c, [ev("c2", "compaction.performed"), ev("k", "constraint.checked")])).toBeNull();
    expect(
      followUncheckedCompaction(null, [ev("k", "constraint.checked"), ev("c2", "compaction.performed")]),
    ).toMatchObject({ event_id: "c2" });
    // The feed may repeat what the overview already counted: the same compaction again.
    expect(followUncheckedCompaction(c, [ev("c1", "compaction.performed")])).toMatchObject({ event_id: "c1" });
  });
});
