/**
 * Principals compare as people read them (docs/concepts.md#principals): Unicode NFC (UAX #15), so `jose` + U+0301 and
 * `josé` are one principal on every path that stores or compares one (checkpoints, `task.created` events, revoke and
 * restore). The signed record keeps the bytes the runtime sent; the columns hold the normalized form.
 */

/** The principal in Unicode Normalization Form C. */
export function normalizePrincipal(principal: string): string {
  return principal.normalize("NFC");
}
