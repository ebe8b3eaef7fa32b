/**
 * Secret redaction for event attributes and task records: every secret kind is replaced by [REDACTED] and
 * counted; look-alikes that are not secrets stay as they are.
 */
import { describe, expect, it } from "vitest";
import { findSecrets, redactJson, redactString, unstorableJson } from "@/lib/domain/events/redact";
import { REDACTED } from "@/lib/domain/secrets/redact";

// Built from parts so the test file itself does not look like it holds secrets.
const PEM_BODY = [
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
  "VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuic",
].join("\n");
const pem = (label: string) => `-----BEGIN ${label}-----\n${PEM_BODY}\n-----END ${label}-----`;
const JWT = [
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
  "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
].join(".");

describe("redactString: each secret kind", () => {
  it.each([
    [
      "a bearer token in a header line",
      "Authorization: Bearer 3f9a7c1e0b2d4f6a8c0e2b4d",
      "Authorization: Bearer [REDACTED]",
      "bearer_token",
    ],
    [
      "a bearer token with dots and dashes",
      "curl -H 'authorization: bearer abc.DEF-ghi_jkl~123/xyz='",
      "curl -H 'authorization: bearer [REDACTED]'",
      "bearer_token",
    ],
    ["an sk- key", "key=sk-0123456789abcdefABCDEF0123456789", "key=[REDACTED]", "api_key"],
    ["an sk-proj- key", "use sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 now", "use [REDACTED] now", "api_key"],
    ["an sk-ant- key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-_12", "[REDACTED]", "api_key"],
    ["a ghp_ token", `GH=ghp_${"A1b2C3d4E5".repeat(4)}`, `GH=${REDACTED}`, "github_token"],
    ["a gho_ token", `gho_${"Z9y8X7w6V5".repeat(4)}`, REDACTED, "github_token"],
    [
      "a github_pat_ token",
      `pat: github_pat_11ABCDEFG0123456789_${"abcdefghij".repeat(5)}`,
      `pat: ${REDACTED}`,
      "github_token",
    ],
    [
      "an AWS access key id",
      "aws_access_key_id=AKIAIOSFODNN7EXAMPLE",
      `aws_access_key_id=${REDACTED}`,
      "aws_access_key_id",
    ],
    ["an AWS temporary key id", "ASIAY34FZKBOKMUTVV7A in use", `${REDACTED} in use`, "aws_access_key_id"],
    ["a PEM private key", `key:\n${pem("PRIVATE KEY")}\nend`, `key:\n${REDACTED}\nend`, "pem_private_key"],
    ["a PEM RSA private key", pem("RSA PRIVATE KEY"), REDACTED, "pem_private_key"],
    ["a PEM OpenSSH private key", pem("OPENSSH PRIVATE KEY"), REDACTED, "pem_private_key"],
    ["a JWT", `session=${JWT}; Path=/`, `session=${REDACTED}; Path=/`, "jwt"],
  ])("redacts %s", (_name, input, expected, kind) => {
    const out = redactString(input);
    expect(out.value).toBe(expected);
    expect(out.kinds).toContain(kind);
    expect(out.kinds.length).toBeGreaterThanOrEqual(1);
  });

  it("counts each secret of a string", () => {
    const out = redactString(`first sk-${"a".repeat(24)} then AKIAIOSFODNN7EXAMPLE and ${JWT}`);
    expect(out.value).toBe(`first ${REDACTED} then ${REDACTED} and ${REDACTED}`);
    expect(out.kinds.sort()).toEqual(["api_key", "aws_access_key_id", "jwt"]);
  });

  it("is idempotent: redacted text has nothing left to redact", () => {
    const once = redactString(`Bearer 3f9a7c1e0b2d4f6a8c0e2b4d and sk-${"b".repeat(30)}`).value;
    expect(redactString(once)).toEqual({ value: once, kinds: [] });
  });
});

describe("redactString: near-misses stay", () => {
  it.each([
    ["a short sk- string", "sk-short"],
    ["a task id with a long number", "task-12345678901234567890"],
    ["a sha256 hex digest", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["the word Bearer alone", "Bearer"],
    ["the word Bearer in a sentence", "The records API expects a Bearer header."],
    ["a sentence about bearer authentication", "The records API uses Bearer authentication."],
    ["a sentence about token authentication", "Switched to token authentication for the records API."],
    ["an environment variable name", "GITHUB_TOKEN"],
    ["a prefix of a GitHub token kind", "ghp_short"],
    ["a public key", pem("PUBLIC KEY")],
    ["a certificate", pem("CERTIFICATE")],
    ["a string shaped like an AWS id but lower-case", "akiaiosfodnn7example"],
    ["a dotted version", "eyJ.eyJ.x"],
  ])("keeps %s", (_name, input) => {
    expect(redactString(input)).toEqual({ value: input, kinds: [] });
  });
});

describe("redactJson", () => {
  it.each([
    "password",
    "client_secret",
    "authorization",
    "Authorization",
    "Client-Secret",
    "api_key",
    "access_token",
    "aws_secret_access_key",
    "cookie",
    "private_key",
  ])("redacts any value of a field named %s", (field) => {
    const out = redactJson({ [field]: "plain-looking value", other: "plain-looking value" });
    expect(out.value).toEqual({ [field]: REDACTED, other: "plain-looking value" });
    expect(out.redactions).toEqual([{ path: field, kind: "secret_field" }]);
  });

  it("keeps look-alike fields and non-string values", () => {
    const input = {
      token_count: 5,
      secret_name: "GITHUB_TOKEN",
      credential_id: "cred-123",
      password_policy: "min 12 characters",
      tokenizer: "cl100k_base",
      enabled: true,
      limits: [1, 2, 3],
      nothing: null,
    };
    expect(redactJson(input)).toEqual({ value: input, redactions: [] });
  });

  it("walks nested objects and arrays and reports every path", () => {
    const input = {
      request: { headers: { authorization: "Basic dXNlcjpwYXNz" }, url: "https://records.internal/v1" },
      steps: [{ note: `used sk-${"c".repeat(24)}` }, { note: "fine" }, { login: { password: "hunter2" } }],
      ids: ["AKIAIOSFODNN7EXAMPLE", "task-1"],
    };
    const out = redactJson(input);
    expect(out.value).toEqual({
      request: { headers: { authorization: REDACTED }, url: "https://records.internal/v1" },
      steps: [{ note: `used ${REDACTED}` }, { note: "fine" }, { login: { password: REDACTED } }],
      ids: [REDACTED, "task-1"],
    });
    expect(out.redactions).toEqual([
      { path: "request.headers.authorization", kind: "secret_field" },
      { path: "steps[0].note", kind: "api_key" },
      { path: "steps[2].login.password", kind: "secret_field" },
      { path: "ids[0]", kind: "aws_access_key_id" },
    ]);
    // the input is not changed
    expect(input.steps[0]!.note).toContain("sk-");
  });

  it("does not count an already redacted or empty secret field again", () => {
    expect(redactJson({ password: REDACTED, token: "" }).redactions).toEqual([]);
  });

  it("findSecrets reports paths without changing the value", () => {
    const value = { decisions: [{ summary: `called with ${JWT}` }] };
    expect(findSecrets(value)).toEqual([{ path: "decisions[0].summary", kind: "jwt" }]);
    expect(value.decisions[0]!.summary).toContain(JWT);
  });
});

describe("more credential shapes, keys, and values PostgreSQL cannot store", () => {
  it.each([
    ["basic credentials", "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "Authorization: Basic [REDACTED]"],
    [
      "a password in a URL",
      "fetch https://svc:s3cret-pw@records.example.com/x",
      "fetch https://svc:[REDACTED]@records.example.com/x",
    ],
    ["a Stripe key", "key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "key [REDACTED]"],
    ["a Google API key", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED]"],
    [
      "an assigned secret",
      "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
      "aws_secret_access_key=[REDACTED]",
    ],
    ["a vault placeholder", "token at vault://kv/records/api-token", "token at [REDACTED]"],
  ])("redacts %s", (_kind, input, expected) => {
    const out = redactJson({ note: input });
    expect(out.value.note).toBe(expected);
    expect(out.redactions.length).toBeGreaterThan(0);
  });

  it.each([
    "Basic authentication is disabled",
    "password: required",
    "https://records.example.com/lookup?id=42",
    "skip_live_tests",
    "see vault docs",
  ])("keeps the near miss %j", (input) => {
    const out = redactJson({ note: input });
    expect(out.value.note).toBe(input);
    expect(out.redactions).toEqual([]);
  });

  it("renames an object key that is a secret, and reports it", () => {
    const out = redactJson({ "Bearer abcdefghijklmnopqrstuvwxyz0123456789": "x", ok: 1 });
    expect(Object.keys(out.value).sort()).toEqual(["Bearer [REDACTED]", "ok"]);
    expect(JSON.stringify(out.value)).not.toContain("abcdefghijklmnop");
    expect(out.redactions[0]!.kind).toBe("bearer_token_in_key");
  });

  it("keeps two secret keys apart instead of merging them", () => {
    const out = redactJson({ "sk-aaaaaaaaaaaaaaaaaaaaaaaa1": 1, "sk-bbbbbbbbbbbbbbbbbbbbbbbb2": 2 });
    expect(Object.values(out.value).sort()).toEqual([1, 2]);
    expect(Object.keys(out.value).every((k) => k.startsWith("[REDACTED]"))).toBe(true);
  });

  it("names NUL characters, unpaired surrogates and deep nesting; accepts ordinary JSON", () => {
    expect(unstorableJson({ a: "x\u0000y" })).toMatch(/NUL/);
    expect(unstorableJson({ ["k\u0000"]: 1 })).toMatch(/NUL/);
    expect(unstorableJson({ a: "\ud800" })).toMatch(/surrogate/);
    expect(unstorableJson({ a: "emoji \ud83d\ude00 ok" })).toBeNull();
    let deep: unknown = "leaf";
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(unstorableJson(deep)).toMatch(/nested deeper/);
    expect(unstorableJson({ a: [1, { b: "c" }], n: null })).toBeNull();
  });
});
