/**
 * The sign-in throttle's numbers, in a module of their own so the settings page can quote them without
 * pulling the password code into the browser bundle.
 */

/** Failed sign-ins allowed per email within {@link SIGN_IN_WINDOW_MINUTES} before further tries are refused. */
export const MAX_SIGN_IN_FAILURES = 10;
export const SIGN_IN_WINDOW_MINUTES = 15;
