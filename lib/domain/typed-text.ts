/**
 * Text a person types that other people read back in Settings and the Audit log: API key names, revocation
 * reasons, principals, lookup tool names and URLs. One rule for all of it, so a name cannot disguise how it
 * displays: control characters (C0, C1), bidirectional controls (embeddings, overrides, isolates, marks),
 * invisible characters (zero-width space and joiners, word joiner, soft hyphen, byte order mark, variation
 * selectors, fillers: Unicode's format and default-ignorable characters), line and paragraph separators and
 * unpaired surrogates are refused; so is text that looks like a credential (it would be stored and shown for good).
 * Every message names the field, the character (code point and position) or the credential kind, and the rule.
 */
import { z } from "zod";
import { redactString } from "./secrets/redact";

/** The characters {@link typedText} refuses (see the module comment). */
export const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
/** The same for free text of several lines (evidence, notes): tab, line feed and carriage return are allowed. */
export const UNSAFE_MULTILINE_TEXT = /(?![\t\n\r])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** How a message names the class of an unsafe character. */
function characterKind(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp >= 0xd800 && cp <= 0xdfff) return "an unpaired UTF-16 surrogate (not valid Unicode)";
  if (BIDI.test(ch)) return "a bidirectional control character";
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return "a control character";
  if (cp === 0x2028 || cp === 0x2029) return "a line or paragraph separator";
  return "an invisible character";
}

/**
 * Why `value` cannot be shown as typed — naming the first offending character and its position — or null when it is
 * plain text. The sentence reads after a field name: `name contains a control character (U+0007) at …`.
 * `multiline`: tab, line feed and carriage return are plain text too.
 */
export function unsafeTextReason(value: string, opts: { multiline?: boolean } = {}): string | null {
  const m = (opts.multiline ? UNSAFE_MULTILINE_TEXT : UNSAFE_TEXT).exec(value);
  if (!m) return null;
  const cp = m[0].codePointAt(0)!;
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return `contains ${characterKind(m[0])} (${code}) at position ${[...value.slice(0, m.index)].length + 1}, which can disguise how it displays; type it as plain text without it`;
}

/** Why typed text may not be kept because it looks like a credential, or null. Reads after a field name. */
export function credentialReason(value: string): string | null {
  const kinds = redactString(value).kinds;
  return kinds.length
    ? `looks like a credential value (${kinds[0]}); it would be stored and shown for good, so never paste secrets here`
    : null;
}

export type TypedTextRule = {
  /** Fewest characters after trimming (default 1). */
  min?: number;
  max: number;
  /** What to write, e.g. "say why the authority is withdrawn"; added to the required and too-short messages. */
  hint?: string;
};

/** `3–1000 characters` or `1 character`. */
function span(min: number, max: number): string {
  return min === max ? `${min} character${min === 1 ? "" : "s"}` : `${min}–${max} characters`;
}

/**
 * A zod schema for one field of typed text: a string, trimmed, `min`–`max` characters, without the characters of
 * {@link UNSAFE_TEXT}. Messages start with the field name and say what to send:
 * `reason is required: say why … (3–1000 characters)`, `reason is too short (1 character): say why … (3–1000 characters)`.
 */
export function typedText(field: string, rule: TypedTextRule): z.ZodType<string, string> {
  const min = rule.min ?? 1;
  const { max } = rule;
  const hint = rule.hint ? `: ${rule.hint}` : "";
  const expected = `(${span(min, max)})`;
  return z
    .string({
      error: (iss) =>
        iss.input === undefined || iss.input === null
          ? `${field} is required${hint} ${expected}`
          : `${field} must be a string ${expected}, not ${Array.isArray(iss.input) ? "an array" : typeof iss.input}`,
    })
    .trim()
    .check((ctx) => {
      const v = ctx.value;
      const n = [...v].length;
      if (n < min) {
        ctx.issues.push({
          code: "custom",
          input: v,
          message:
            n === 0
              ? `${field} must not be empty${hint} ${expected}`
              : `${field} is too short (${span(n, n)})${hint} ${expected}`,
        });
      } else if (n > max) {
        ctx.issues.push({
          code: "custom",
          input: v,
          message: `${field} is too long (${n} characters); at most ${max} are allowed`,
        });
      }
      const unsafe = unsafeTextReason(v);
      if (unsafe) ctx.issues.push({ code: "custom", input: v, message: `${field} ${unsafe}` });
      const credential = n <= max ? credentialReason(v) : null;
      if (credential) ctx.issues.push({ code: "custom", input: v, message: `${field} ${credential}` });
    });
}

/**
 * {@link typedText} for a value that is not part of a JSON body (a path segment, an option): returns the trimmed
 * text, or the message of the first rule it breaks.
 */
export function checkTypedText(
  field: string,
  value: unknown,
  rule: TypedTextRule,
): { ok: true; value: string } | { ok: false; message: string } {
  const parsed = typedText(field, rule).safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, message: parsed.error.issues[0]?.message ?? `${field} is not valid` };
}
