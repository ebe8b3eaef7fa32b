/**
 * Counting the markers the server writes in place of secrets.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/redactions.test.ts.
 */

/** The marker the server writes in place of a secret before storage. */
export const REDACTED_MARKER = "[REDACTED]";

/** Number of `[REDACTED]` markers inside a JSON value (strings may hold several, e.g. two headers). */
export function countRedactedValues(value: unknown): number {
  if (typeof value === "string") return value.split(REDACTED_MARKER).length - 1;
  if (Array.isArray(value)) return value.reduce<number>((n, v) => n + countRedactedValues(v), 0);
  if (value !== null && typeof value === "object") {
    return Object.values(value).reduce<number>((n, v) => n + countRedactedValues(v), 0);
  }
  return 0;
}
