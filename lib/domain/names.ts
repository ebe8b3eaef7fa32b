/**
 * Names and ids that people and runtimes match against, with one rule per kind on every path that accepts them
 * (intent and receipt routes, events, checkpoint records, RunState imports, reconcile URLs, settings). The lengths are
 * the boundary limits of ./limits.ts; the characters are those of typed text (./typed-text.ts): a name that displays
 * unlike its bytes (bidi overrides, invisible or control characters) could be matched, revoked or approved by mistake,
 * and one that holds a credential would be stored and shown to every role for good. Ids are keys (deduplication,
 * pairing, search), so a credential in one is refused rather than redacted: a redacted copy would merge distinct ids.
 */
import { z } from "zod";
import { LIMITS, type BoundaryLimit } from "./limits";
import { redactString } from "./secrets/redact";
import { applySpans, findSecretSpans } from "./secrets/scan";
import { unsafeTextReason } from "./typed-text";

/** Idempotency keys: 8–200 characters of letters, digits and `. _ : -`. */
export const IDEMPOTENCY_KEY = new RegExp(
  `^[A-Za-z0-9._:-]{${LIMITS.idempotencyKey.min},${LIMITS.idempotencyKey.max}}$`,
);
export const IDEMPOTENCY_KEY_RULE = `idempotency_key must be ${LIMITS.idempotencyKey.min}–${LIMITS.idempotencyKey.max} characters of letters, digits, '.', '_', ':' or '-'`;

/** Side-effect names: a letter or digit, then up to 99 letters, digits, '.', '_' or '-' (they travel in URL paths). */
export const SIDE_EFFECT_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${LIMITS.sideEffectName.max - 1}}$`);
export const SIDE_EFFECT_NAME_RULE = `side-effect names are 1–${LIMITS.sideEffectName.max} characters of letters, digits, '.', '_' or '-', starting with a letter or digit`;

/** Printable ASCII without surrounding spaces: a name that matches holds nothing {@link nameProblem} looks for but credentials. */
const PLAIN_ASCII = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** True when `value` is printable ASCII without surrounding spaces (no character of typed text's rule can be in it). */
export function isPlainAscii(value: string): boolean {
  return PLAIN_ASCII.test(value);
}

/**
 * The credentials in a name or id: what the one redaction finds in it, also where `_` joins a credential to the rest
 * (`evt_AKIA…`, `tool_Bearer_…`): in free text `_` is part of a word, in an id it separates words.
 */
export function credentialKindsInName(value: string): string[] {
  const kinds = redactString(value).kinds;
  if (kinds.length || !value.includes("_")) return kinds;
  return redactString(value.replace(/_/g, " ")).kinds;
}

/**
 * A label (a sandbox id, an actor) with its credentials redacted, also where `_` joins one to the rest
 * ({@link credentialKindsInName}); the kinds found, one per replacement.
 */
export function redactName(value: string): { value: string; kinds: string[] } {
  const spaced = value.replace(/_/g, " ");
  if (spaced === value || !redactString(spaced).kinds.length) return redactString(value);
  // `_` and the space have the same length, so the spans of both readings are spans of the label: redact their union
  // (a `ghp_…` token is found only as written, an `evt_AKIA…` key only with spaces).
  const spans = [...findSecretSpans(value), ...findSecretSpans(spaced)].sort((a, b) => a.start - b.start);
  const merged: typeof spans = [];
  for (const sp of spans) {
    const last = merged.at(-1);
    if (last && sp.start < last.end) last.end = Math.max(last.end, sp.end);
    else merged.push({ ...sp });
  }
  return { value: applySpans(value, merged), kinds: merged.map((sp) => sp.kind) };
}

/**
 * Why `value` cannot be a name or id of this kind, as a sentence that reads after the field's name, or null when it
 * can: not a string, empty, longer than the limit, surrounding whitespace, a character typed text refuses (named with
 * its code point and position), or a credential (named by kind; never quoted).
 * `credentials: "allow"` leaves credentials to the caller (a label that is redacted rather than refused).
 */
export function nameProblem(
  value: unknown,
  limit: BoundaryLimit,
  opts: { credentials?: "refuse" | "allow" } = {},
): string | null {
  if (typeof value !== "string") return `must be a string (1–${limit.max} characters)`;
  const min = limit.min ?? 1;
  if (value.length < min) return value.length === 0 ? "must not be empty" : `is shorter than ${min} characters`;
  if (value.length > limit.max)
    return `is too long (${value.length} characters); at most ${limit.max} are allowed (the ${limit.name} limit)`;
  if (!isPlainAscii(value)) {
    if (value !== value.trim()) return "must not start or end with whitespace";
    const unsafe = unsafeTextReason(value);
    if (unsafe) return unsafe;
  }
  if (opts.credentials === "allow") return null;
  const kinds = credentialKindsInName(value);
  if (kinds.length)
    return `looks like a credential value (${kinds[0]}); names and ids are stored and shown for good: send a reference, never a secret`;
  return null;
}

/**
 * A zod check for an id that is trimmed rather than refused for surrounding whitespace (an external system's id): none
 * of the characters typed text refuses. The message starts with `field`.
 */
export function plainTextCheck(field: string) {
  return (ctx: { value: string; issues: z.core.$ZodRawIssue[] }): void => {
    const unsafe = unsafeTextReason(ctx.value);
    if (unsafe) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${unsafe}` });
  };
}

/**
 * A zod schema for a name or id of one kind ({@link nameProblem}): a string of 1–`limit.max` characters, no
 * surrounding whitespace, none of the characters typed text refuses, no credential. The message starts with `field`.
 */
export function plainName(field: string, limit: BoundaryLimit) {
  return z.string({ error: `${field} must be a string (1–${limit.max} characters)` }).check((ctx) => {
    const problem = nameProblem(ctx.value, limit);
    if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${problem}` });
  });
}

/**
 * Why `value` cannot be an action, tool or principal name, or null when it can: {@link nameProblem}, then the
 * restricted alphabet of decision 0033 — printable ASCII only. A look-alike letter of another script (Cyrillic `о`), a
 * compatibility form (fullwidth `ｐ`) or a look-alike punctuation mark (U+2024 `․`) would otherwise pass a rule, a
 * binding or a revocation as another name; refused where it enters, it can never be stored.
 */
export function identifierProblem(value: unknown, limit: BoundaryLimit): string | null {
  const problem = nameProblem(value, limit);
  if (problem || typeof value !== "string" || isPlainAscii(value)) return problem;
  const at = [...value].findIndex((c) => c < "\x20" || c > "\x7e");
  const ch = [...value][at] ?? "";
  const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
  return `must be printable ASCII (letters, digits, punctuation): ${code} at character ${at + 1} is not. Names are compared without case, and a look-alike character of another script or width could pass for another name`;
}

/** A zod schema for an action, tool or principal name ({@link identifierProblem}); the message starts with `field`. */
export function identifierName(field: string, limit: BoundaryLimit) {
  return z.string({ error: `${field} must be a string (1–${limit.max} characters)` }).check((ctx) => {
    const problem = identifierProblem(ctx.value, limit);
    if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${problem}` });
  });
}

/**
 * The one canonical form in which action, tool, effect and principal names are compared (decision 0033): names are
 * of a restricted alphabet refused at the boundary (printable ASCII), so the canonical form is the name in lower case.
 * Rules, bindings and revocations compare canonical forms; what is stored and shown is the name as sent.
 */
export function canonicalName(name: string): string {
  return name.toLowerCase();
}
