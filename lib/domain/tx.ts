/**
 * Retry for transactions that lost a deadlock or serialization race (SQLSTATE 40P01, 40001).
 * The whole transaction is re-run, so callers must not have side effects outside it.
 */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const code = pgCode(err);
      if (i >= attempts || (code !== "40P01" && code !== "40001")) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    }
  }
}

/** The PostgreSQL SQLSTATE of an error from postgres.js, PGlite or a Drizzle wrapper, if any. */
export function pgCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === "object" && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
