/**
 * Text a person types that other people read back in Settings and the Audit log: API key names, revocation
 * reasons, principals, lookup tool names and URLs. One rule for all of it, so a name cannot disguise how it
 * displays: C0 and C1 control characters and the bidirectional embedding, override (U+202A–U+202E) and
 * isolate (U+2066–U+2069) characters are refused, and every message names the field and the rule.
 */
import { z } from "zod";

/** The characters {@link typedText} refuses. */
export const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The same for free text of several lines (evidence, notes): tab, line feed and carriage return are allowed. */
export const UNSAFE_MULTILINE_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

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
  const kind = cp >= 0x202a ? "a bidirectional override or isolate character" : "a control character";
  return `contains ${kind} (${code}) at position ${[...value.slice(0, m.index)].length + 1}, which can disguise how it displays; type it as plain text without it`;
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
          message: n === 0 ? `${field} must not be empty${hint} ${expected}` : `${field} is too short (${span(n, n)})${hint} ${expected}`,
        });
      } else if (n > max) {
        ctx.issues.push({ code: "custom", input: v, message: `${field} is too long (${n} characters); at most ${max} are allowed` });
      }
      const unsafe = unsafeTextReason(v);
      if (unsafe) ctx.issues.push({ code: "custom", input: v, message: `${field} ${unsafe}` });
    });
}

/**
 * {@link typedText} for a value that is not part of a JSON body (a path segment, an option): returns the trimmed
 * text, or the message of the first rule it breaks.
 */
export function checkTypedText(field: string, value: unknown, rule: TypedTextRule): { ok: true; value: string } | { ok: false; message: string } {
  const parsed = typedText(field, rule).safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, message: parsed.error.issues[0]?.message ?? `${field} is not valid` };
}
