/**
 * The one redaction (lib/domain/secrets): a corpus of credential shapes that must come out redacted wherever they
 * sit (cloud keys, tokens, URLs with credentials in any part, header forms, cookies, private keys, secret fields of
 * any type, JSON held in a string), a corpus of look-alikes that must stay, and the scan's cost on adversarial
 * text counted (not timed): characters looked at stay under a constant times the text length.
 */
import { describe, expect, it } from "vitest";
import { isSecretName, secretNameKind, weakValueLooksSecret } from "@/lib/domain/secrets/names";
import { mayHoldSecret } from "@/lib/domain/secrets/prefilter";
import { findSecrets, REDACTED, redactJson, redactString, refuseSecrets } from "@/lib/domain/secrets/redact";
import { scanWithCost } from "@/lib/domain/secrets/scan";
import { LOOK_ALIKES, MUST_REDACT, SHAPE_FAMILIES } from "../support/secret-corpus";

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

describe("the redaction rate over the corpus (decision 0027)", () => {
  /** Every place a shape is tried: alone, inside prose in a nested value, and in tool-call arguments held as a string. */
  const places = (value: string): unknown[] => [
    { note: value },
    { list: [1, { deep: [`before ${value} after`] }] },
    { arguments: JSON.stringify({ input: value }) },
  ];
  const redactedEverywhere = ([, value, secret]: [string, string, string]) =>
    places(value).every((container) => {
      const out = redactJson(container);
      return out.redactions.length > 0 && !JSON.stringify(out.value).includes(secret);
    });

  it("holds at least 100 distinct shapes across the families", () => {
    expect(new Set(MUST_REDACT.map(([name]) => name)).size).toBe(MUST_REDACT.length);
    expect(new Set(MUST_REDACT.map(([, value]) => value)).size).toBe(MUST_REDACT.length);
    expect(MUST_REDACT.length).toBeGreaterThanOrEqual(100);
    expect(Object.keys(SHAPE_FAMILIES).length).toBeGreaterThanOrEqual(10);
  });

  it("redacts at least 98% of the shapes in every place, and names the misses", () => {
    const missed = MUST_REDACT.filter((shape) => !redactedEverywhere(shape)).map(([name]) => name);
    const rate = (MUST_REDACT.length - missed.length) / MUST_REDACT.length;
    const byFamily = Object.entries(SHAPE_FAMILIES)
      .map(([family, shapes]) => `${family} ${shapes.filter(redactedEverywhere).length}/${shapes.length}`)
      .join(", ");
    console.log(`redaction rate ${(rate * 100).toFixed(1)}% of ${MUST_REDACT.length} shapes (${byFamily})`);
    expect(rate, `missed: ${missed.join("; ")}`).toBeGreaterThanOrEqual(0.98);
  });

  it("flags none of the look-alikes (the false-positive list is empty)", () => {
    const flagged = LOOK_ALIKES.flatMap(([name, value]) =>
      findSecrets(value).map((r) => `${name} at ${r.path} (${r.kind})`),
    );
    expect(flagged).toEqual([]);
  });

  it("refuses every shape where values are signed, naming the path", () => {
    for (const [name, value] of MUST_REDACT) {
      expect(() => refuseSecrets({ record: { decisions: [{ summary: value }] } }, "The record"), name).toThrow(
        /^record\.decisions\[0\]\.summary/,
      );
    }
  });
});

describe("weak secret names: the value decides", () => {
  it.each([
    ["pass", "weak"],
    ["db_pass", "weak"],
    ["DB_PASS", "weak"],
    ["pwd", "weak"],
    ["MYSQL_PWD", "weak"],
    ["auth", "weak"],
    ["REDISCLI_AUTH", "weak"],
    ["credentials", "weak"],
    ["SSHPASS", "weak"],
    ["PGPASSWORD", "strong"],
    ["rootpassword", "strong"],
    ["passwd", "strong"],
    ["authorization", "strong"],
    ["private_key", "strong"],
    ["auth_method", null],
    ["pass_count", null],
    ["credentials_ref", null],
    ["credential_ref", null],
    ["credential_id", null],
    ["passage", null],
    ["compass", null],
    ["bypass", null],
    ["OLDPWD", null],
    ["PGPASSFILE", null],
    ["GOOGLE_APPLICATION_CREDENTIALS_FILE", null],
  ])("%s is %s", (name, kind) => expect(secretNameKind(name)).toBe(kind));

  it.each([
    ["Sup3rS3cret!", true],
    ["hunter2hunter2", true],
    ["user:pass-word", true],
    ["x".repeat(70) + "1", true],
    ["records-api", false],
    ["none", false],
    ["oauth2", false],
    ["scram-sha-256", false],
    ["same-origin", false],
    ["/home/app", false],
    ["~/.pgpass", false],
    ["C:\\Users\\app", false],
    ["$DB_PASS", false],
    ["${DB_PASS}", false],
    ["%DB_PASS%", false],
    ["two words 42", false],
    ["a1!", false],
  ])("the value %j looks like a credential: %s", (value, secret) => expect(weakValueLooksSecret(value)).toBe(secret));

  it("redacts credential-looking strings under a weak name, keeps numbers, and judges objects by their own names", () => {
    const out = redactJson({
      auth: ["svc", "Tuple-S3cret-9"],
      pass: 2,
      pwd: "/workspace",
      credentials: [{ name: "records-api", password: "Nested words" }, "records-api"],
      creds: { user: "app", token: "abc" },
      db_pass: "Plain-but-7",
    });
    expect(out.value).toEqual({
      auth: ["svc", REDACTED],
      pass: 2,
      pwd: "/workspace",
      credentials: [{ name: "records-api", password: REDACTED }, "records-api"],
      creds: { user: "app", token: REDACTED },
      db_pass: REDACTED,
    });
  });

  it("takes a header pair only for a strong name: a weak word is usually a value there", () => {
    expect(redactJson({ checks: [["result", "pass"], { name: "pass", value: "pass-2!" }] }).redactions).toEqual([]);
    expect(redactJson({ pair: ["X-Api-Key", "abc"] }).value).toEqual({ pair: ["X-Api-Key", REDACTED] });
  });

  it("reads placeholders in tool-call arguments held as a string", () => {
    const out = redactJson({ arguments: JSON.stringify({ header: "Bearer {{vault:kv/records#token}}", n: 1 }) });
    expect(out.redactions).toEqual([{ path: "arguments(JSON).header", kind: "vault_placeholder" }]);
    expect(JSON.parse(out.value.arguments)).toEqual({ header: `Bearer ${REDACTED}`, n: 1 });
  });
});

describe("argv arrays are read as one command line", () => {
  it.each([
    [["mysql", "-u", "root", "-pS3cretPass", "app"], 3, "-p[REDACTED]"],
    [["sshpass", "-p", "Ssh S3cret!", "ssh", "deploy@host"], 2, "[REDACTED]"],
    [["curl", "-u", "admin:Curl-S3cret-4", "https://x.example"], 2, "admin:[REDACTED]"],
    [["curl", "--user", "admin:Curl-S3cret-5", "https://x.example"], 2, "admin:[REDACTED]"],
    [["mysqladmin", "--password", "Adm-Flag-S3cret-3", "status"], 2, "[REDACTED]"],
    [["tool", "--pass", "Weak-S3cret-1"], 2, "[REDACTED]"],
    [["redis-cli", "-a", "R3dis-Cli-S3cret", "ping"], 2, "[REDACTED]"],
    [["sqlplus", "scott/T1ger-Pass@orcl"], 1, "scott/[REDACTED]@orcl"],
  ])("%j: argument %i becomes %s", (args, index, expected) => {
    const value = { type: "exec", command: args };
    const out = redactJson(value);
    expect(out.value.command[index]).toBe(expected);
    expect(out.redactions.map((r) => r.path)).toEqual([`command[${index}]`]);
    expect(mayHoldSecret(JSON.stringify(value))).toBe(true);
  });

  it.each([
    [["mkdir", "-p", "/tmp/x"]],
    [["ssh", "-p", "2222", "deploy@host"]],
    [["docker", "run", "-u", "1000:1000", "img"]],
    [["mysql", "-u", "root", "-p", "app"]],
    [["ls", "-a", "-l"]],
    [["app", "--password-file", "/run/secrets/db"]],
  ])("keeps %j", (args) => expect(redactJson({ command: args }).redactions).toEqual([]));
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
  // The 240 KB `apikey=` text and its siblings (decision 0008: each was quadratic or worse with backtracking
  // patterns), and the dense candidates of every rule decision 0027 added.
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
    ["pass= repeated", (n) => "pass=".repeat(n / 5)],
    ["pass=1 repeated", (n) => "pass=1".repeat(n / 6)],
    ["Pwd={ repeated", (n) => "Pwd={".repeat(n / 5)],
    ["--password repeated", (n) => "--password ".repeat(n / 11)],
    ["--user on a curl line", (n) => `curl ${"--user ".repeat((n - 5) / 7)}`],
    ["dashes", (n) => "-".repeat(n)],
    ["mysql -p repeated on one line", (n) => `mysql ${"-p ".repeat((n - 6) / 3)}`],
    ["-p repeated without a command", (n) => " -pX".repeat(n / 4)],
    ["mysql -p on many lines", (n) => "mysql -pS3cret\n".repeat(n / 15)],
    ["sshpass -p repeated", (n) => "sshpass -p ".repeat(n / 11)],
    ["curl -u a: repeated", (n) => `curl ${"-u a:".repeat((n - 5) / 5)}`],
    ["-u on lines without curl", (n) => "x -u a:b\n".repeat(n / 9)],
    ["/api/ repeated", (n) => "/api/".repeat(n / 5)],
    ["/token/ and a long segment repeated", (n) => "/token/a1b2c3d4e5f6g7h8i9".repeat(n / 26)],
    ["/bot repeated", (n) => "/bot123456789:".repeat(n / 14)],
    ["{{ secrets. repeated", (n) => "{{ secrets.".repeat(n / 11)],
    ["${ repeated", (n) => "${".repeat(n / 2)],
    ["{{vault without a close", (n) => `{{vault:${"x".repeat(n - 8)}`],
    ["secretsmanager: repeated", (n) => "secretsmanager:".repeat(n / 15)],
    ["KeyVault( without a close", (n) => "@Microsoft.KeyVault(".repeat(n / 20)],
    ["sqlplus a/ repeated", (n) => "sqlplus a/".repeat(n / 10)],
    ["jdbc:oracle:thin:a/ repeated", (n) => "jdbc:oracle:thin:a/".repeat(n / 19)],
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
