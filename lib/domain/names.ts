/**
 * Names that identify things people and runtimes match against, with one rule per kind on every path that accepts
 * them (intent and receipt routes, `side_effect.*` events, checkpoint records, reconcile URLs).
 */
import { z } from "zod";
import { unsafeTextReason } from "./typed-text";

/** Idempotency keys: 8–200 characters of letters, digits and `. _ : -`. */
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,200}$/;
export const IDEMPOTENCY_KEY_RULE = "idempotency_key must be 8–200 characters of letters, digits, '.', '_', ':' or '-'";

/** Side-effect names: a letter or digit, then up to 99 letters, digits, '.', '_' or '-' (they travel in URL paths). */
export const SIDE_EFFECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const SIDE_EFFECT_NAME_RULE =
  "side-effect names are 1–100 characters of letters, digits, '.', '_' or '-', starting with a letter or digit";

/**
 * A name people read and match against (principal, phase, policy version, tool, action): 1–`max` characters, no
 * surrounding whitespace, none of the characters typed text refuses. A principal a person cannot type exactly could
 * never be revoked, and one that displays unlike its bytes could be revoked by mistake.
 */
export function plainName(field: string, max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((v) => v === v.trim(), `${field} must not start or end with whitespace`)
    .refine((v) => unsafeTextReason(v) === null, { error: (iss) => `${field} ${unsafeTextReason(String(iss.input))}` });
}
