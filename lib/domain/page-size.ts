/** Page sizes of list reads (tasks, timeline, approvals): one rule for every list route. */
import { DomainError } from "./errors";

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

/**
 * Reads a requested page size (string or number): the default when absent, else a whole number from 1 to `max`.
 * Values above `max` are refused like 0 is, not silently capped, so a caller never mistakes a short page for the end.
 * @throws DomainError bad_request naming the range.
 */
export function pageSize(raw: string | number | null | undefined, max = MAX_PAGE, dflt = DEFAULT_PAGE): number {
  if (raw === null || raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    const shown = String(raw).length > 20 ? `${String(raw).slice(0, 20)}…` : String(raw);
    throw new DomainError(
      "bad_request",
      `limit must be a whole number from 1 to ${max} (got ${JSON.stringify(shown)}); follow next_cursor for more.`,
      {
        fields: [{ path: "limit", message: `1 to ${max}` }],
      },
    );
  }
  return n;
}
