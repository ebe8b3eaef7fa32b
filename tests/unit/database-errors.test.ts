/**
 * The one mapping of a lost database connection: which driver errors say the connection failed (db/connection-errors.ts),
 * and the API's answer to them, 503 `database_unavailable` with `Retry-After` (lib/server/route.ts handleError), while a
 * statement's own error stays a 500 that reveals nothing.
 */
import { describe, expect, it, vi } from "vitest";
import { connectionErrorCode } from "@/db";
import { handleError } from "@/lib/server/route";

/** An error shaped like Drizzle's query error: the driver's error as its cause, the statement in its message. */
function drizzleError(cause: unknown): Error {
  return Object.assign(new Error("Failed query: select 1\nparams: secret-value"), { cause });
}

describe("a lost database connection", () => {
  it("is recognised by postgres.js's codes, Node's socket errors and SQLSTATE 08xxx / 57P01–57P03, wrapped or not", () => {
    for (const code of [
      "CONNECTION_ENDED",
      "CONNECTION_DESTROYED",
      "CONNECTION_CLOSED",
      "ECONNREFUSED",
      "57P01",
      "RESERVE_TIMEOUT",
    ]) {
      expect(connectionErrorCode(Object.assign(new Error(code), { code }))).toBe(code);
    }
    for (const code of ["57P02", "57P03", "08006", "08001"]) {
      expect(connectionErrorCode(drizzleError(Object.assign(new Error("x"), { code, severity: "FATAL" })))).toBe(code);
    }
    const refused = Object.assign(
      new AggregateError([Object.assign(new Error("connect"), { code: "ECONNREFUSED" })]),
      {},
    );
    expect(connectionErrorCode(drizzleError(refused))).toBe("ECONNREFUSED");
  });

  it("is not any other error: a statement's own SQLSTATE, a plain error, a non-error", () => {
    for (const code of ["23505", "40001", "22P02", "57014", "42P01"]) {
      expect(connectionErrorCode(drizzleError(Object.assign(new Error("x"), { code })))).toBeNull();
    }
    expect(connectionErrorCode(new Error("boom"))).toBeNull();
    expect(connectionErrorCode("CONNECTION_CLOSED")).toBeNull();
    expect(connectionErrorCode(null)).toBeNull();
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(connectionErrorCode(loop)).toBeNull();
  });

  it("is answered 503 database_unavailable with Retry-After, logging the code and not the statement's parameters", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = handleError(drizzleError(Object.assign(new Error("terminating"), { code: "57P01" })), "req-1");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.headers.get("x-request-id")).toBe("req-1");
      expect(await res.json()).toMatchObject({ error: { code: "database_unavailable", message: expect.any(String) } });
      expect(log.mock.calls.flat().join(" ")).not.toContain("secret-value");

      const other = handleError(drizzleError(Object.assign(new Error("duplicate key"), { code: "23505" })), "req-2");
      expect(other.status).toBe(500);
      expect(other.headers.get("retry-after")).toBeNull();
      expect(await other.json()).toMatchObject({ error: { code: "internal" } });
    } finally {
      log.mockRestore();
    }
  });
});
