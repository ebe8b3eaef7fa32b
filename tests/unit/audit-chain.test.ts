import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { auditEntryHash, auditEntryJsonAroundSeq, GENESIS_HASH } from "@/lib/domain/audit/append";
import { canonicalJson, sha256Hex } from "@/lib/domain/crypto/canonical";

const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => canonicalJsonOk(v));
function canonicalJsonOk(v: unknown): boolean {
  try {
    canonicalJson(v);
    return true;
  } catch {
    return false;
  }
}

describe("audit entry JSON around seq (the hash PostgreSQL computes in appendAudit)", () => {
  it("prefix + seq + suffix is the RFC 8785 JSON of the whole entry", () => {
    fc.assert(
      fc.property(
        fc.record({
          tenantId: fc.uuid(),
          at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          actorKind: fc.constantFrom("user", "api_key", "system"),
          actorId: fc.string(),
          actorLabel: fc.string(),
          action: fc.string(),
          target: fc.string(),
          details: fc.dictionary(fc.string(), json),
        }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        (entry, seq) => {
          const { prefix, suffix } = auditEntryJsonAroundSeq(entry);
          expect(prefix + String(seq) + suffix).toBe(canonicalJson({ ...entry, seq }));
          expect(sha256Hex(GENESIS_HASH + prefix + String(seq) + suffix)).toBe(
            auditEntryHash(GENESIS_HASH, { ...entry, seq }),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds for details that themselves hold a seq key", () => {
    const entry = {
      tenantId: "t",
      at: "2026-01-01T00:00:00.000Z",
      actorKind: "user",
      actorId: "u",
      actorLabel: "a",
      action: "x",
      target: 'y","seq":1',
      details: { seq: 0, z: { seq: 2 } },
    };
    const { prefix, suffix } = auditEntryJsonAroundSeq(entry);
    expect(prefix + "17" + suffix).toBe(canonicalJson({ ...entry, seq: 17 }));
  });
});
