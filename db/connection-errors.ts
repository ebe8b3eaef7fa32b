/**
 * How the database driver says that the connection failed rather than the statement: the request that met it kept
 * nothing it did not commit (each write is one transaction) and may be sent again once the database is back. The API
 * answers it `503 database_unavailable` (lib/server/route.ts), and db/walls.ts keeps such a connection out of the pool.
 * PostgreSQL Appendix A: class 08 (connection exception), 57P01–57P03 (`pg_terminate_backend` or a shutdown, a crash,
 * a server not yet accepting connections) and 53300 (no connection slot left).
 */
/** The code of the error db/walls.ts raises when no pooled connection came in time. */
export const RESERVE_TIMEOUT = "RESERVE_TIMEOUT";

const CONNECTION_ERROR_CODES = new Set([
  RESERVE_TIMEOUT,
  // postgres.js's own
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECTION_CLOSED",
  "CONNECT_TIMEOUT",
  // Node's socket errors
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // SQLSTATE
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/**
 * The code by which `err` — or an error it wraps as `cause` (Drizzle's query errors), or a member of an
 * AggregateError (Node's connect errors) — says the database connection failed; null for any other error.
 */
export function connectionErrorCode(err: unknown): string | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length && seen.size < 16) {
    const e = queue.shift();
    if (!e || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (CONNECTION_ERROR_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return code;
    queue.push((e as { cause?: unknown }).cause);
    const members = (e as { errors?: unknown }).errors;
    if (Array.isArray(members)) queue.push(...members);
  }
  return null;
}
