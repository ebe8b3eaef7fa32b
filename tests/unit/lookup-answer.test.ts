/**
 * What a lookup may reach (lib/domain/web/outbound.ts, which every lookup call goes through) and what of its answer is
 * kept (lib/domain/side-effects/lookup.ts), as pure functions.
 */
import { describe, expect, it } from "vitest";
import { interpretLookup, keptAnswer } from "@/lib/domain/side-effects/lookup";
import { blockedTargetReason } from "@/lib/domain/web/outbound";

describe("targets no lookup may reach as written (blockedTargetReason)", () => {
  it.each([
    "http://169.254.169.254/latest/meta-data",
    "http://2852039166/",
    "http://0xA9FEA9FE/",
    "http://[::ffff:169.254.169.254]/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/latest",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://metadata.google.internal/",
    "http://metadata.google.internal./",
    "http://instance-data/latest",
  ])("refuses %s", (url) => {
    expect(blockedTargetReason(new URL(url))).not.toBeNull();
  });

  it.each([
    "http://127.0.0.1:4000/lookup",
    "https://records.example/lookup",
    "http://10.0.0.5/x",
    "http://[64:ff9b::a01:101]/",
  ])("allows %s", (url) => {
    expect(blockedTargetReason(new URL(url))).toBeNull();
  });
});

describe("lookup answers", () => {
  it("keeps only the four fields, with control and bidi characters replaced", () => {
    expect(
      keptAnswer({ found: true, external_operation_id: "op\u202e\u0000", secret: { a: 1 }, result_digest: 5 }),
    ).toEqual({
      found: true,
      external_operation_id: "op\ufffd\ufffd",
    });
    expect(keptAnswer([1, 2])).toBeNull();
  });

  it("calls an operation id with control or bidi characters ambiguous, and drops an unsafe digest or an implausible time", () => {
    expect(interpretLookup(200, { found: true, external_operation_id: "op\u0000" }).outcome).toBe("ambiguous");
    expect(interpretLookup(200, { found: true, external_operation_id: "   " }).outcome).toBe("ambiguous");
    const found = interpretLookup(200, {
      found: true,
      external_operation_id: "op-1",
      result_digest: "d\u0007",
      completed_at: "2999-01-01T00:00:00Z",
    });
    expect(found).toMatchObject({
      outcome: "found",
      external_operation_id: "op-1",
      result_digest: null,
      completed_at: null,
    });
  });
});

describe("the tool owner's count of writes under the key (applied_count, decision 0050)", () => {
  it("keeps a non-negative integer count and says it in the message", () => {
    const once = interpretLookup(200, { found: true, external_operation_id: "op-1", applied_count: 1 });
    expect(once).toMatchObject({ outcome: "found", applied_count: 1 });
    expect(once.message).toBe(
      "The tool owner reports the write was applied once under this idempotency key (operation op-1).",
    );
    expect(interpretLookup(200, { found: true, external_operation_id: "op-1", applied_count: 3 }).message).toContain(
      "applied 3 times under this idempotency key",
    );
    expect(keptAnswer({ found: true, external_operation_id: "op-1", applied_count: 2 })).toMatchObject({
      applied_count: 2,
    });
  });

  it("drops a count that is not a non-negative integer, and calls found-but-never-applied ambiguous", () => {
    for (const bad of [-1, 1.5, "1", null]) {
      const a = interpretLookup(200, { found: true, external_operation_id: "op-1", applied_count: bad });
      expect(a).toMatchObject({ outcome: "found", applied_count: null });
      expect(a.message).not.toContain("under this idempotency key");
      expect(keptAnswer({ found: true, applied_count: bad })).not.toHaveProperty("applied_count");
    }
    expect(interpretLookup(200, { found: true, external_operation_id: "op-1", applied_count: 0 }).outcome).toBe(
      "ambiguous",
    );
    expect(interpretLookup(200, { found: false }).applied_count).toBeNull();
  });
});
