/**
 * The sign-in throttle's numbers, in a module of their own (no database, no argon2) so the settings page can
 * quote them and unit tests can check the delays. The throttle itself is lib/domain/tenancy/sign-in-throttle.ts.
 *
 * Failures are counted per email *and* source (the client address): a wrong guess from one address never locks
 * the same email out at another address. Within one window of {@link SIGN_IN_WINDOW_MINUTES} minutes:
 * - the first {@link FREE_SIGN_IN_FAILURES} tries are checked at once;
 * - after the n-th failure the next try waits {@link signInDelaySeconds}(n) seconds (1, 2, 4, … s);
 * - after {@link MAX_SIGN_IN_FAILURES} failures that email is locked at that source until the window ends (or an
 *   owner unlocks it under Settings → Members).
 * Past {@link MAX_EMAIL_SIGN_IN_FAILURES} failures of one email across all sources in a window, an address that has
 * failed in its own window gets no further check until one of the two windows ends, so each further address gets
 * one guess, while an address with no failures (the person at their own) is still checked.
 */

/** Failed sign-ins allowed per email and source within {@link SIGN_IN_WINDOW_MINUTES} before that pair is locked. */
export const MAX_SIGN_IN_FAILURES = 10;
/** Length of a throttle window, counted from its first failure. */
export const SIGN_IN_WINDOW_MINUTES = 15;
/** Failures per window that cost no wait before the next try. */
export const FREE_SIGN_IN_FAILURES = 2;
/** Failed sign-ins of one email across every source within one window past which failed addresses stop. */
export const MAX_EMAIL_SIGN_IN_FAILURES = 100;
/** The longest wait between two tries (seconds). */
export const MAX_SIGN_IN_DELAY_SECONDS = 120;

/**
 * Seconds the next try must wait after the `failures`-th failure of a window (0 for the first
 * {@link FREE_SIGN_IN_FAILURES}, then 1, 2, 4, … up to {@link MAX_SIGN_IN_DELAY_SECONDS}).
 */
export function signInDelaySeconds(failures: number): number {
  if (failures <= FREE_SIGN_IN_FAILURES) return 0;
  return Math.min(2 ** (failures - FREE_SIGN_IN_FAILURES - 1), MAX_SIGN_IN_DELAY_SECONDS);
}
