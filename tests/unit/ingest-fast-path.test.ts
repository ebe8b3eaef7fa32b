/**
 * The ingest hot path (fastPrepare) must be a pure shortcut: whatever it accepts, the full path
 * (prepareFully: zod, redaction walk, storability walk, exact size) would have produced unchanged, and whatever
 * could need redaction or rejection it hands on. The prefilter over serialized attrs (mayHoldSecret) is the
 * part that carries the weight, so it is tested as a superset of redactJson on every secret shape we know,
 * placed where JSON escaping could hide a word boundary.
 */
import { describe, expect, it } from "vitest";
import { fastPrepare, prepareBatch, prepareFully } from "@/lib/domain/events/ingest";
import { mayHoldSecret, MAX_JSON_DEPTH, redactJson } from "@/lib/domain/events/redact";
import { REDACTED } from "@/lib/domain/secrets/redact";
import { fastValidEvent, OCCURRED_AT_PATTERN, validateEvent } from "@/lib/domain/events/schema";
import { buildWorkload } from "@/scripts/bench/ingest-workload";
import { LOOK_ALIKES, MUST_REDACT } from "../support/secret-corpus";

// Built from parts so the test file itself does not look like it holds secrets.
const PEM = [
  "-----BEGIN PRIVATE KEY-----",
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
  "-----END PRIVATE KEY-----",
].join("\n");
const JWT = [
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
  "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
].join(".");
const SECRETS = [
  "Bearer 3f9a7c1e0b2d4f6a8c0e2b4d",
  "Token 3f9a7c1e0b2d4f6a8c0e2b4d",
  "Token\u000b3f9a7c1e0b2d4f6a8c0e2b4d",
  "Token\u00a03f9a7c1e0b2d4f6a8c0e2b4d",
  "bearer abc.DEF-ghi_jkl~123/xyz=",
  `sk-${"a".repeat(24)}`,
  "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12",
  `ghp_${"A1b2C3d4E5".repeat(4)}`,
  `github_pat_11ABCDEFG0123456789_${"abcdefghij".repeat(3)}`,
  `rck_${"x".repeat(24)}`,
  `xoxb-${"1".repeat(12)}`,
  "AKIAIOSFODNN7EXAMPLE",
  "ASIAY34FZKBOKMUTVV7A",
  PEM,
  JWT,
  "Basic dXNlcjpwYXNzd29yZDEyMw==",
  "https://svc:s3cret-pw@records.example.com/x",
  "postgres://app:hunter2x@db:5432/custody",
  "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
  "rk_test_4eC39HqLyjWDarjtT1zdp7dc",
  "AIzaSyA1234567890abcdefghijklmnopqrstuv",
  "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1",
  "PASSWORD: 'hunter2hunter2'",
  "Access-Token=abc123def456",
  "refresh_token: zz9zz9zz9",
  "vault://kv/records/api-token",
];
/** Characters in front of a secret that JSON writes as an escape (where a `\b` in a rule could be hidden). */
const PREFIXES = ["", " ", "x", "\n", "\t", "\r", "\b", "\f", "\u0001", "\u001f", "\u007f", '"', "\\", "é", "\u2028"];
const SECRET_FIELDS = [
  "password",
  "Client-Secret",
  "AUTHORIZATION",
  "api-key",
  "aws_secret_access_key",
  "cookie",
  "token",
  "to\u212Aen",
  "vault_placeholder",
  "X-Api-Key",
  "sessionToken",
  "Set-Cookie",
  "db__password",
  "APIKey",
  "sig",
];

describe("mayHoldSecret: a superset of what redactJson changes", () => {
  const shapes: Array<(s: string) => unknown> = [
    (s) => ({ note: s }),
    (s) => ({ [s]: 1 }),
    (s) => ({ list: [1, { deep: [s] }] }),
    (s) => ({ headers: { authorization_hint: `see ${s} here` } }),
    // JSON held in a string (tool-call arguments), once and twice
    (s) => ({ arguments: JSON.stringify({ query: s }) }),
    (s) => ({ call: JSON.stringify({ arguments: JSON.stringify([s]) }) }),
  ];
  const corpus = MUST_REDACT.map(([, value]) => value);
  const cases = [...SECRETS, ...corpus].flatMap((secret) =>
    PREFIXES.flatMap((p) => shapes.map((shape) => shape(p + secret))),
  );
  it(`flags every one of ${cases.length} values that carry a secret value`, () => {
    const missed: string[] = [];
    let redacted = 0;
    for (const value of cases) {
      if (redactJson(value).redactions.length === 0) continue;
      redacted += 1;
      if (!mayHoldSecret(JSON.stringify(value))) missed.push(JSON.stringify(value));
    }
    expect(missed).toEqual([]);
    expect(redacted).toBeGreaterThan(cases.length * 0.9);
  });

  it.each([
    ["a secret field with a number", { password: 12345678 }],
    ["a secret field with an object", { cookie: { sid: "abc" } }],
    [
      "a header pair",
      {
        headers: [
          ["Cookie", "sid=abc"],
          ["X-Api-Key", "9f8e7d6c"],
        ],
      },
    ],
    ["a name/value header", { headers: [{ name: "Cookie", value: "sid=abc" }] }],
    ["a key/value header", { headers: [{ key: "x-auth-token", value: 1234 }] }],
    ["tool-call arguments", { arguments: '{"password": "Hunter2-Secret-99"}' }],
    ["tool-call arguments with spaces and newlines", { arguments: '{\n  "api_key" :\t"plain"\n}' }],
    ["a key spelled with \\u escapes", { arguments: '{"pass\\u0077ord": "plain words"}' }],
    ["a value spelled with \\u escapes", { arguments: `["sk\\u002d${"a".repeat(24)}"]` }],
    ["a value spelled with \\/ escapes", { arguments: '["vault:\\/\\/kv\\/x"]' }],
    ["twice-embedded arguments", { call: JSON.stringify({ arguments: JSON.stringify({ client_secret: "x y z" }) }) }],
    ["a header line", { raw: "GET / HTTP/1.1\r\nCookie: sid=abc\r\n" }],
    ["a query parameter", { url: "https://x.example/?access_token=abc" }],
  ])("flags %s", (_name, value) => {
    expect(redactJson(value).redactions.length).toBeGreaterThan(0);
    expect(mayHoldSecret(JSON.stringify(value))).toBe(true);
  });

  it.each(LOOK_ALIKES)("lets the look-alike through the full path unchanged: %s", (_name, value) => {
    expect(redactJson(value).redactions).toEqual([]);
  });

  it.each(SECRET_FIELDS)("flags a secret field named %j", (field) => {
    const value = { outer: { [field]: "plain-looking value" } };
    expect(redactJson(value).redactions).toHaveLength(1);
    expect(mayHoldSecret(JSON.stringify(value))).toBe(true);
  });

  it.each([
    ["token counts", { input_tokens: 2648, tokens_before: 180000 }],
    ["an object URL", { ref: "s3://inbox/bench-task-0024/case.pdf" }],
    ["a task id with sk-", { task: "bench-task-0024", mask: "mask-layer" }],
    [
      "a digest and a host",
      { sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", host: "records.internal.example" },
    ],
  ])("lets ordinary attrs through: %s", (_name, value) => {
    expect(redactJson(value).redactions).toEqual([]);
    expect(mayHoldSecret(JSON.stringify(value))).toBe(false);
  });
});

describe("fastPrepare agrees with the full path", () => {
  it("on every event of a benchmark workload it accepts, and accepts nearly all of them", () => {
    const workload = buildWorkload(
      { total: 3000, batchSize: 1000, senders: 3, dupRatio: 0, tasks: 20, seed: 5 },
      "unit",
    );
    let accepted = 0;
    for (const event of workload.unique) {
      const fast = fastPrepare(event);
      const full = prepareFully(event);
      if (fast) {
        accepted += 1;
        expect(fast).toEqual(full);
      } else {
        // Declined events are the ones the full path changes (redaction) or rejects.
        expect("error" in full || full.redaction_count > 0).toBe(true);
      }
    }
    expect(accepted).toBeGreaterThan(workload.unique.length * 0.95);
  });

  const base = {
    id: "e-1",
    task_id: "task-1",
    plane: "tools",
    type: "tool.called",
    occurred_at: "2026-11-29T10:00:00Z",
  };
  const nest = (levels: number): unknown => {
    let v: unknown = "leaf";
    for (let i = 0; i < levels; i++) v = { d: v };
    return v;
  };
  it.each([
    ["a NUL in attrs", { ...base, attrs: { a: "x\u0000y" } }, "rejected"],
    ["an unpaired surrogate in a key", { ...base, attrs: { ["\udc00"]: 1 } }, "rejected"],
    ["a NUL in the id", { ...base, id: "e\u0000" }, "rejected"],
    ["nesting one level too deep", { ...base, attrs: nest(MAX_JSON_DEPTH + 1) }, "rejected"],
    ["attrs over 64 KiB", { ...base, attrs: { blob: "x".repeat(70_000) } }, "rejected"],
    ["a secret in attrs", { ...base, attrs: { note: `Bearer ${"9".repeat(20)}` } }, "redacted"],
    ["a secret in the actor", { ...base, actor: `svc sk-${"q".repeat(24)}` }, "redacted"],
    ["a secret in the sandbox id", { ...base, environment_id: "AKIAIOSFODNN7EXAMPLE" }, "redacted"],
  ])("hands %s to the full path", (_name, event, outcome) => {
    expect(fastPrepare(event)).toBeNull();
    const { prepared, results } = prepareBatch({ events: [event] });
    if (outcome === "rejected") {
      expect(results[0]).toMatchObject({ status: "rejected" });
      expect(prepared).toEqual([]);
    } else {
      expect(results[0]).toMatchObject({ status: "stored" });
      expect(prepared[0]!.redaction_count).toBeGreaterThan(0);
      expect(JSON.stringify(prepared[0])).toContain(REDACTED);
    }
  });

  it("takes nesting just inside the limit and emoji (paired surrogates) on either path alike", () => {
    for (const event of [
      { ...base, attrs: nest(MAX_JSON_DEPTH) },
      { ...base, attrs: nest(MAX_JSON_DEPTH - 2) },
      { ...base, attrs: { note: "done \ud83d\ude00" } },
      { ...base, actor: "agent \ud83d\ude00" },
    ]) {
      const full = prepareFully(event);
      expect("error" in full).toBe(false);
      const fast = fastPrepare(event);
      if (fast) expect(fast).toEqual(full);
    }
  });
});

describe("the occurred_at pattern of the hot path is zod's", () => {
  it.each([
    "2026-11-29T10:00:00Z",
    "2026-11-29T10:00:00.123456+02:00",
    "2024-02-29T00:00:00Z",
    "2026-02-29T00:00:00Z",
    "2026-11-29T24:00:00Z",
    "2026-11-29T10:00:00z",
    "2026-11-29T10:00:00",
    "2026-11-29 10:00:00Z",
    "2026-13-01T00:00:00Z",
  ])("%s", (time) => {
    const event = { id: "e", task_id: "t", plane: "session", type: "phase.changed", occurred_at: time };
    expect(OCCURRED_AT_PATTERN.test(time)).toBe(validateEvent(event).ok);
    expect(fastValidEvent(event) !== null).toBe(validateEvent(event).ok);
  });
});
