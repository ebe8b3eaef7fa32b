/**
 * The pooler setting (`DATABASE_POOLER`, docs/decisions/0051-through-a-connection-pooler.md): read strictly, so a
 * misspelt value stops the server instead of quietly preparing statements a pooler would lose.
 */
import { describe, expect, it } from "vitest";
import { poolerFromEnv } from "@/db/driver";

describe("DATABASE_POOLER", () => {
  it("is a direct connection when unset, empty or none", () => {
    expect(poolerFromEnv(undefined)).toBe("none");
    expect(poolerFromEnv("")).toBe("none");
    expect(poolerFromEnv(" none ")).toBe("none");
  });

  it("is transaction pooling for transaction, whatever its case", () => {
    expect(poolerFromEnv("transaction")).toBe("transaction");
    expect(poolerFromEnv("Transaction")).toBe("transaction");
  });

  it("refuses anything else, naming the variable", () => {
    for (const v of ["session", "pgbouncer", "true", "statement"]) {
      expect(() => poolerFromEnv(v)).toThrow(/DATABASE_POOLER must be "transaction" or "none"/);
    }
  });
});
