/**
 * The duplicate-write rule (lib/domain/side-effects/duplicates.ts, decision 0029) as a pure function, and the cleaning
 * of a tool's error message kept with a not_applied receipt (lib/domain/side-effects/receipts.ts).
 */
import { describe, expect, it } from "vitest";
import { normalDigest, toolCallDigest } from "@/lib/domain/crypto/canonical";
import { duplicateVerdict, type DuplicateFacts, type SameWrite } from "@/lib/domain/side-effects/duplicates";
import { MAX_TOOL_ERROR_CHARS, toolErrorText } from "@/lib/domain/side-effects/receipts";
import { toolPayloadDigest } from "@/lib/sdk/openai-agents";

const write = (name: string, status: SameWrite["status"], over: Partial<SameWrite> = {}): SameWrite => ({
  name,
  idempotency_key: `key-${name}`,
  status,
  receipt: null,
  intent_at: null,
  ...over,
});
const none: DuplicateFacts = { same: [], repeated: null };

describe("duplicateVerdict (docs/concepts.md#a-second-write-of-the-same-payload)", () => {
  it("lets a write go when no other effect wrote the payload, and when it names the latest identical write", () => {
    expect(duplicateVerdict({ name: "b", repeats: null }, none)).toEqual({ needsApproval: false });
    const facts: DuplicateFacts = {
      same: [write("c", "completed"), write("a", "completed")],
      repeated: { name: "c", same_payload: true, had_approval: true },
    };
    expect(duplicateVerdict({ name: "b", repeats: "c" }, facts)).toEqual({ needsApproval: true });
  });

  it("refuses a second write of an in-flight, completed or unknown payload, naming the latest, its key and status", () => {
    const receipt = { external_operation_id: "op-1", result_digest: null, completed_at: "2026-01-01T00:00:00.000Z" };
    for (const status of ["in_flight", "completed", "unknown"] as const) {
      const out = duplicateVerdict(
        { name: "b", repeats: null },
        { same: [write("a", status, { receipt: status === "completed" ? receipt : null })], repeated: null },
      );
      expect("refused" in out && out.refused.code).toBe("duplicate_payload");
      const details = "refused" in out ? (out.refused.details as Record<string, unknown>) : {};
      expect(details).toMatchObject({ side_effect: "a", idempotency_key: "key-a", status });
      expect("receipt" in details).toBe(status === "completed");
    }
  });

  it("refuses a repeat that names an older identical write, itself, an effect the task lacks, or another payload", () => {
    const older = duplicateVerdict(
      { name: "c", repeats: "a" },
      {
        same: [write("b", "in_flight"), write("a", "completed")],
        repeated: { name: "a", same_payload: true, had_approval: false },
      },
    );
    expect("refused" in older && older.refused.code).toBe("duplicate_payload");
    const self = duplicateVerdict({ name: "a", repeats: "a" }, none);
    expect("refused" in self && self.refused.code).toBe("repeats_mismatch");
    const missing = duplicateVerdict({ name: "b", repeats: "x" }, none);
    expect("refused" in missing && missing.refused.code).toBe("repeats_mismatch");
    const other = duplicateVerdict(
      { name: "b", repeats: "x" },
      { same: [], repeated: { name: "x", same_payload: false, had_approval: false } },
    );
    expect("refused" in other && other.refused.code).toBe("repeats_mismatch");
  });
});

describe("the payload digest formula (docs/concepts.md#payload-digest)", () => {
  it("is the client's, and compares without case or a sha256: prefix", () => {
    const args = { b: [1, "x"], a: { z: null, y: 2.5 } };
    expect(toolPayloadDigest("tool", args)).toBe(toolCallDigest("tool", args));
    expect(normalDigest(`SHA256:${toolCallDigest("tool", args).toUpperCase()}`)).toBe(toolCallDigest("tool", args));
  });
});

describe("toolErrorText", () => {
  it("redacts credentials, replaces characters that disguise display, trims and bounds the length", () => {
    const secret = `ghp_${"a1B2c3D4e5F6g7H8i9J0".repeat(2)}`;
    const out = toolErrorText(`  token ${secret} rejected\u202e\u0007 \n line two  `);
    expect(out.text).not.toContain(secret);
    expect(out.text).toContain("[REDACTED]");
    expect(out.text).not.toMatch(/[\u202e\u0007]/);
    expect(out.text).toContain("\n line two");
    expect(out.truncated).toBe(false);
    const long = toolErrorText("é".repeat(MAX_TOOL_ERROR_CHARS + 10));
    expect(long.truncated).toBe(true);
    expect([...long.text]).toHaveLength(MAX_TOOL_ERROR_CHARS);
    expect(long.text.endsWith("…")).toBe(true);
  });
});
