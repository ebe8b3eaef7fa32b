/**
 * The one redaction (lib/domain/secrets): a corpus of credential shapes that must come out redacted wherever they
 * sit (cloud keys, tokens, URLs with credentials in any part, header forms, cookies, private keys, secret fields of
 * any type, JSON held in a string), a corpus of look-alikes that must stay, and the scan's cost on adversarial
 * text counted (not timed): characters looked at stay under a constant times the text length.
 */
import { describe, expect, it } from "vitest";
import { isSecretName } from "@/lib/domain/secrets/names";
import { mayHoldSecret } from "@/lib/domain/secrets/prefilter";
import { findSecrets, REDACTED, redactJson, redactString } from "@/lib/domain/secrets/redact";
import { scanWithCost } from "@/lib/domain/secrets/scan";
import { LOOK_ALIKES, MUST_REDACT } from "../support/secret-corpus";

describe("corpus: every shape comes out redacted", () => {
  it.each(MUST_REDACT)("%s", (_name, value, secret) => {
    for (const container of [{ note: value }, { list: [1, { deep: [`before ${value} after`] }] }]) {
      const out = redactJson(container);
      expect(JSON.stringify(out.value), JSON.stringify(container)).not.toContain(secret);
      expect(out.redactions.length).toBeGreaterThan(0);
      expect(mayHoldSecret(JSON.stringify(container))).toBe(true);
    }
  });

  it("redacts tool-call arguments serialized as a JSON string, and keeps the rest of the document", () => {
    const out = redactJson({
      tool: "login",
      arguments: '{"username": "ada", "password": "Hunter2-Secret-99", "remember": true}',
    });
    expect(JSON.stringify(out.value)).not.toContain("Hunter2-Secret-99");
    expect(JSON.parse(out.value.arguments)).toEqual({ username: "ada", password: REDACTED, remember: true });
    expect(out.redactions).toEqual([{ path: "arguments(JSON).password", kind: "secret_field" }]);
  });

  it("redacts JSON inside JSON inside a string, and keys spelled with \\u escapes", () => {
    const inner = JSON.stringify({ headers: { "X-Api-Key": "9f8e7d6c5b4a" } });
    const out = redactJson({
      call: JSON.stringify({ arguments: inner }),
      escaped: '{"pass\\u0077ord": "plain words"}',
    });
    expect(JSON.stringify(out.value)).not.toContain("9f8e7d6c5b4a");
    expect(JSON.stringify(out.value)).not.toContain("plain words");
    expect(mayHoldSecret(JSON.stringify({ escaped: '{"pass\\u0077ord": "plain words"}' }))).toBe(true);
  });

  it("keeps an embedded document it cannot rewrite exactly as text, and still redacts what the text shows", () => {
    const text = '{"id": 1234567890123456789, "password": "Hunter2-Secret-99"}';
    const out = redactJson({ arguments: text });
    expect(out.value.arguments).toBe('{"id": 1234567890123456789, "password": "[REDACTED]"}');
  });

  it("redacts header pairs as arrays and as name/value objects", () => {
    const out = redactJson({
      pairs: [
        ["Cookie", "sid=abc; theme=dark"],
        ["X-Api-Key", "9f8e7d6c"],
        ["Accept", "*/*"],
      ],
      har: [
        { name: "Authorization", value: "Digest abc" },
        { name: "Cookie", value: "sid=abc" },
        { key: "x-auth-token", value: 1234 },
        { name: "Accept", value: "*/*" },
      ],
    });
    expect(out.value).toEqual({
      pairs: [
        ["Cookie", REDACTED],
        ["X-Api-Key", REDACTED],
        ["Accept", "*/*"],
      ],
      har: [
        { name: "Authorization", value: REDACTED },
        { name: "Cookie", value: REDACTED },
        { key: "x-auth-token", value: REDACTED },
        { name: "Accept", value: "*/*" },
      ],
    });
  });

  it("redacts a secret field whatever its type, keeping true, false and null", () => {
    const out = redactJson({
      password: 12345678,
      pin_token: -1.5,
      cookie: { sid: "abc", n: 7, on: true },
      secret: ["a", 1, null],
      api_key: false,
      token: null,
    });
    expect(out.value).toEqual({
      password: REDACTED,
      pin_token: REDACTED,
      cookie: { sid: REDACTED, n: REDACTED, on: true },
      secret: [REDACTED, REDACTED, null],
      api_key: false,
      token: null,
    });
  });

  it("keeps a key named __proto__ as a key when it copies an object", () => {
    const input = JSON.parse('{"__proto__": {"x": 1}, "password": "p4ssw0rd!"}') as Record<string, unknown>;
    const out = redactJson(input).value as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["__proto__", "password"]);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":1},"password":"[REDACTED]"}');
  });

  it("is idempotent: redacted output has nothing left to redact", () => {
    for (const [, value] of MUST_REDACT) {
      const once = redactString(value).value;
      expect(redactString(once), value).toEqual({ value: once, kinds: [] });
    }
  });
});

describe("corpus: look-alikes stay", () => {
  it.each(LOOK_ALIKES)("%s", (_name, value) => {
    expect(findSecrets(value)).toEqual([]);
    expect(redactJson(value).value).toBe(value);
  });

  it.each([
    "token_count",
    "input_tokens",
    "secret_name",
    "password_policy",
    "credential_id",
    "tokenizer",
    "aws_access_key_id",
    "token_type",
    "passwordHash",
    "idempotency_key",
    "key",
  ])("the name %s is not a secret name", (name) => expect(isSecretName(name)).toBe(false));
  it.each([
    "password",
    "db_password",
    "DB_PASSWORD",
    "X-Api-Key",
    "apiKey",
    "APIKey",
    "sessionToken",
    "Set-Cookie",
    "client_secret",
    "aws_secret_access_key",
    "Proxy-Authorization",
    "private_key",
    "to\u212Aen",
  ])("the name %s is a secret name", (name) => expect(isSecretName(name)).toBe(true));
});

describe("the scan is linear in the length of the text", () => {
  // The 240 KB `apikey=` text and its siblings (decision 0008): each was quadratic (or worse) with backtracking
  // patterns.
  const ADVERSARIAL: Array<[string, (n: number) => string]> = [
    ["apikey= repeated", (n) => "apikey=".repeat(n / 7)],
    ["apikey=1 repeated", (n) => "apikey=1".repeat(n / 8)],
    ["password: repeated", (n) => "password: ".repeat(n / 10)],
    ["sk- repeated", (n) => "sk-".repeat(n / 3)],
    ["sk-a- repeated", (n) => "sk-a-".repeat(n / 5)],
    ["Bearer repeated", (n) => "Bearer ".repeat(n / 7)],
    ["Bearer 1 repeated", (n) => "Bearer 1 ".repeat(n / 9)],
    ["BEGIN PRIVATE KEY without END", (n) => "-----BEGIN PRIVATE KEY-----".repeat(n / 27)],
    ["BEGIN with a header that never closes", (n) => "-----BEGIN ".repeat(n / 11)],
    ["URL user info without @", (n) => "a://b:c".repeat(n / 7)],
    ["URL user info with @", (n) => "a://b:c@".repeat(n / 8)],
    ["JWT-like segments", (n) => "eyJaaaaaaaaaaaa.".repeat(n / 16)],
    ["one long word", (n) => "a".repeat(n)],
    ["AKIA repeated", (n) => "AKIA".repeat(n / 4)],
    ["= after a long name", (n) => `${"a".repeat(n - 2)}==`],
    ["colons", (n) => ":".repeat(n)],
    ["cookie: repeated", (n) => "cookie:".repeat(n / 7)],
    ["quotes after a secret name", (n) => `password${'"'.repeat(n - 9)}:`],
    ["vault:// repeated", (n) => "vault://".repeat(n / 8)],
  ];

  it.each(ADVERSARIAL)(
    "%s: characters looked at stay under 40 × the length, at 64 KiB and at 256 KiB",
    (_name, make) => {
      for (const n of [64 * 1024, 256 * 1024]) {
        const text = make(n);
        const { steps, candidates } = scanWithCost(text);
        expect(steps, `steps for ${text.length} characters`).toBeLessThan(40 * text.length);
        expect(candidates).toBeLessThanOrEqual(text.length);
      }
    },
  );

  it("redacts a 240 KB apikey= string to one span", () => {
    const out = redactString("apikey=".repeat(240_000 / 7));
    expect(out.value).toBe(`apikey=${REDACTED}`);
  });
});
