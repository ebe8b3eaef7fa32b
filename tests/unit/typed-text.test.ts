/**
 * The one rule for text people type (lib/domain/typed-text.ts) and the human messages validationError gives in
 * place of zod's generic ones.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { validationError } from "@/lib/domain/errors";
import { checkTypedText, typedText, unsafeTextReason } from "@/lib/domain/typed-text";

describe("unsafeTextReason", () => {
  it("finds C0 and C1 controls, DEL, bidi embeddings, overrides and isolates", () => {
    for (const cp of [
      0x00, 0x09, 0x0a, 0x1f, 0x7f, 0x80, 0x9f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
    ]) {
      expect(unsafeTextReason(`ab${String.fromCodePoint(cp)}c`), cp.toString(16)).toContain(
        `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`,
      );
    }
  });

  it("lets ordinary text through: accents, CJK, emoji, combining marks, typographic punctuation", () => {
    for (const s of [
      "Läufer",
      "José",
      "Jose\u0301",
      "東京 runtime",
      "ok ✓ 🚀",
      "tenant/acme:user/42",
      "— · … “quoted”",
      "Ελληνικά",
      "עברית",
    ]) {
      expect(unsafeTextReason(s), s).toBeNull();
    }
  });

  it.each([
    [0x200b, "invisible", "zero-width space"],
    [0x200c, "invisible", "zero-width non-joiner"],
    [0x200d, "invisible", "zero-width joiner"],
    [0x2060, "invisible", "word joiner"],
    [0xfeff, "invisible", "byte order mark"],
    [0x00ad, "invisible", "soft hyphen"],
    [0x034f, "invisible", "combining grapheme joiner"],
    [0x180e, "invisible", "Mongolian vowel separator"],
    [0x3164, "invisible", "Hangul filler"],
    [0xfe0f, "invisible", "variation selector"],
    [0xe0041, "invisible", "tag character"],
    [0x200e, "bidirectional", "left-to-right mark"],
    [0x200f, "bidirectional", "right-to-left mark"],
    [0x061c, "bidirectional", "Arabic letter mark"],
    [0x2028, "line or paragraph separator", "line separator"],
    [0xd800, "unpaired UTF-16 surrogate", "lone surrogate"],
  ])("refuses U+%s (%s: %s), naming it and its position", (cp, kind) => {
    const reason = unsafeTextReason(`ab${String.fromCodePoint(cp)}cd`);
    expect(reason).toContain(`U+${cp.toString(16).toUpperCase().padStart(4, "0")}`);
    expect(reason).toContain(kind);
    expect(reason).toContain("position 3");
  });

  it("counts the position in characters, not UTF-16 units", () => {
    expect(unsafeTextReason("🚀\u202e")).toContain("position 2");
  });
});

describe("typedText", () => {
  const reason = typedText("reason", { min: 3, max: 10, hint: "say why" });
  const msg = (v: unknown) => {
    const r = reason.safeParse(v);
    return r.success ? null : r.error.issues.map((i) => i.message);
  };

  it("trims and accepts text within the bounds", () => {
    expect(reason.parse("  why  ")).toBe("why");
  });

  it("names the field and the rule for each way to break it", () => {
    expect(msg(undefined)).toEqual(["reason is required: say why (3–10 characters)"]);
    expect(msg("x")).toEqual(["reason is too short (1 character): say why (3–10 characters)"]);
    expect(msg("  ")).toEqual(["reason must not be empty: say why (3–10 characters)"]);
    expect(msg("x".repeat(11))).toEqual(["reason is too long (11 characters); at most 10 are allowed"]);
    expect(msg(5)).toEqual(["reason must be a string (3–10 characters), not number"]);
    expect(msg("ab\u202ecd")![0]).toMatch(
      /^reason contains a bidirectional control character \(U\+202E\) at position 3/,
    );
    expect(msg("ab\u200bcd")![0]).toMatch(/^reason contains an invisible character \(U\+200B\) at position 3/);
    expect(msg("AKIAIOSFODNN7EXAMPLE")).toEqual(["reason is too long (20 characters); at most 10 are allowed"]); // only the length is reported
    expect(
      typedText("reason", { max: 100 }).safeParse("rotated AKIAIOSFODNN7EXAMPLE").error!.issues[0]!.message,
    ).toMatch(/^reason looks like a credential value \(aws_access_key_id\)/);
  });

  it("checks values outside a body the same way", () => {
    expect(checkTypedText("tool", "lookup\u0007", { max: 200 })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^tool contains a control character \(U\+0007\)/),
    });
    expect(checkTypedText("tool", "lookup", { max: 200 })).toEqual({ ok: true, value: "lookup" });
  });
});

describe("validationError", () => {
  const schema = z.strictObject({ name: z.string(), count: z.number().optional() });
  const fail = (body: unknown) => validationError(schema.safeParse(body).error!.issues);

  it("turns zod's 'expected string, received undefined' into 'name is required'", () => {
    const err = fail({});
    expect(err.message).toBe("name is required (string)");
    expect(err.details).toEqual({ fields: [{ path: "name", message: "name is required (string)" }] });
  });

  it("says which type was expected and which arrived", () => {
    expect(fail({ name: "a", count: "3" }).message).toBe("count must be a number, not string");
  });

  it("names unknown fields", () => {
    expect(fail({ name: "a", extra: 1, more: 2 }).message).toMatch(
      /^body: unknown fields "extra", "more"; remove them/,
    );
  });

  it("keeps schema-specific messages and prefixes them with the field when they do not name it", () => {
    const s = z.object({ url: z.string().min(5, "must be at least 5 characters") });
    expect(validationError(s.safeParse({ url: "x" }).error!.issues).message).toBe("url: must be at least 5 characters");
  });
});

describe("unsafeTextReason for text of several lines", () => {
  it("allows tab, line feed and carriage return, and still refuses other controls and bidi overrides", () => {
    expect(unsafeTextReason("line one\r\n\tline two", { multiline: true })).toBeNull();
    expect(unsafeTextReason("line one\nline two")).toContain("U+000A");
    expect(unsafeTextReason("ok\u202eevil", { multiline: true })).toContain("U+202E");
    expect(unsafeTextReason("bell\u0007", { multiline: true })).toContain("U+0007");
  });
});
