/**
 * The `attempt` field of intents and receipts (lib/domain/side-effects/intent.ts `attemptField`): each way it can be
 * wrong gets its own message (a value past the limit is told the limit, not "attempt is required").
 */
import { describe, expect, it } from "vitest";
import { attemptField } from "@/lib/domain/side-effects/intent";

const message = (v: unknown) => attemptField.safeParse(v).error?.issues[0]?.message;

describe("attempt field", () => {
  it("accepts 1 through 1,000,000,000", () => {
    for (const v of [1, 2, 1_000_000, 1_000_000_000]) expect(attemptField.safeParse(v).success).toBe(true);
  });

  it.each([
    [undefined, /^attempt is required/],
    ["2", /^attempt is required/],
    [0, /^attempt starts at 1$/],
    [1.5, /^attempt must be a whole number$/],
    [1_000_000_001, /^attempt is at most 1000000000$/],
    [2_147_483_648, /^attempt is at most 1000000000$/],
  ])("refuses %s with its own message", (v, expected) => {
    expect(message(v)).toMatch(expected);
  });
});
