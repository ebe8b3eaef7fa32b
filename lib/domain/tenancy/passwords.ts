/**
 * Password rules and hashing: argon2id (PHC string, the library's defaults), and what a new password must be.
 * Pure apart from the hashing, so the rules are unit-tested and the settings page can quote them.
 */
import { hash, verify } from "@node-rs/argon2";
import { z } from "zod";

/** Fewest characters of a new password (NIST SP 800-63B allows 8; we ask a little more of a shared dashboard). */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

/** argon2id hash (PHC string) with the library's defaults. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: 2 });
}

/** A hash of a password nobody has, so an unknown email costs one verification like a known one. */
export const DUMMY_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$T1bD4BFIvOVh/bSBebOKdA$ZIlGwRXRK16d27bKGwpP9Pl2grTuwfhOExsRotimSOU";

/** True when `password` matches the PHC `phc` (false on a malformed hash). */
export function verifyPassword(phc: string | null | undefined, password: string): Promise<boolean> {
  return verify(phc ?? DUMMY_HASH, password).catch(() => false);
}

/**
 * Why `password` cannot be a new password, or null when it can: {@link MIN_PASSWORD_LENGTH}–{@link MAX_PASSWORD_LENGTH}
 * characters, not only spaces, not the email itself. The sentence follows the field name.
 */
export function weakPasswordReason(password: string, email?: string): string | null {
  const n = [...password].length;
  if (n < MIN_PASSWORD_LENGTH) return `is too short (${n} characters); use at least ${MIN_PASSWORD_LENGTH}`;
  if (n > MAX_PASSWORD_LENGTH) return `is too long (${n} characters); at most ${MAX_PASSWORD_LENGTH} are allowed`;
  if (!password.trim()) return "must not be only spaces";
  if (/\u0000/.test(password)) return "must not contain a NUL character";
  if (email && password.trim().toLowerCase() === email.trim().toLowerCase()) return "must not be your email address";
  return null;
}

/** A zod schema for a new password in field `field` (the email check happens where the email is known). */
export function newPasswordSchema(field: string): z.ZodType<string, string> {
  return z
    .string({
      error: (iss) =>
        iss.input === undefined
          ? `${field} is required (at least ${MIN_PASSWORD_LENGTH} characters)`
          : `${field} must be a string`,
    })
    .check((ctx) => {
      const why = weakPasswordReason(ctx.value);
      if (why) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${why}` });
    });
}

/** A zod schema for a password that is checked, not set (current password): any non-empty string up to the maximum. */
export function givenPasswordSchema(field: string): z.ZodType<string, string> {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, `${field} must not be empty`)
    .max(MAX_PASSWORD_LENGTH * 4, `${field} is too long`);
}
