/**
 * Credential shapes that must come out redacted wherever they sit, and look-alikes that must stay: shared by the
 * redaction unit tests, the ingest superset test and the fuzz suite.
 */
// Built from parts so that this file does not itself look like it holds secrets.
const j = (...parts: string[]) => parts.join("");
const A36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const HEX32 = "0123456789abcdef0123456789abcdef";
const PEM_BODY =
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuic";
export const pem = (label: string) => j("-----BEGIN ", label, "-----\n", PEM_BODY, "\n-----END ", label, "-----");
const JWT = j("eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".", "c2lnbmF0dXJlc2lnbmF0dXJl");

/** Each value holds one secret, named by `secret`: after redaction that text is gone. */
export const MUST_REDACT: Array<[string, string, string]> = [
  // cloud keys
  ["AWS access key id", j("AKIA", "IOSFODNN7EXAMPLE"), j("AKIA", "IOSFODNN7EXAMPLE")],
  [
    "AWS secret in an assignment",
    j("aws_secret_access_key=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  ],
  [
    "Google API key",
    j("key AIza", "SyA1234567890abcdefghijklmnopqrstuv"),
    j("AIza", "SyA1234567890abcdefghijklmnopqrstuv"),
  ],
  [
    "Google OAuth access token",
    j("ya29.", "a0AfH6SMBx1234567890abcdefXYZ"),
    j("ya29.", "a0AfH6SMBx1234567890abcdefXYZ"),
  ],
  [
    "Azure storage connection string",
    j(
      "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
      "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
      ";EndpointSuffix=core.windows.net",
    ),
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
  ],
  [
    "Azure SAS signature",
    j("https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sig=", "AbCdEf0123456789%2Bxyz%3D"),
    "AbCdEf0123456789%2Bxyz%3D",
  ],
  ["DigitalOcean token", j("dop_v1_", HEX32, HEX32), j("dop_v1_", HEX32, HEX32)],
  // tokens
  ["OpenAI key", j("sk-", "proj-", A36), j("proj-", A36)],
  ["Anthropic key", j("sk-", "ant-api03-", A36), j("ant-api03-", A36)],
  ["Stripe live key", j("sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"), "4eC39HqLyjWDarjtT1zdp7dc"],
  ["Stripe webhook secret", j("whsec_", A36), A36],
  ["GitHub token", j("ghp_", A36), A36],
  ["GitHub fine-grained token", j("github_pat_", "11ABCDEFG0123456789_", A36), A36],
  ["GitLab token", j("glpat-", "xYz0123456789abcdEFGH"), "xYz0123456789abcdEFGH"],
  ["Slack bot token", j("xoxb-", "123456789012-1234567890123-", "AbCdEfGhIjKl"), "1234567890123-"],
  ["npm token", j("npm_", A36), A36],
  ["Hugging Face token", j("hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"), "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"],
  ["SendGrid key", j("SG.", "AbCdEfGhIjKlMnOpQr", ".", "StUvWxYz0123456789ab"), "AbCdEfGhIjKlMnOpQr"],
  ["HashiCorp Vault token", j("hvs.", "CAESIAbCdEfGhIjKlMnOpQrStUv"), "CAESIAbCdEfGhIjKlMnOpQrStUv"],
  ["Twilio API key", j("SK", HEX32), HEX32],
  ["Mailgun key", j("key-", HEX32), HEX32],
  ["our runtime key", j("rck_", A36), A36],
  ["a JWT", `session ${JWT}`, JWT.slice(0, 30)],
  ["a bearer token", "Authorization: Bearer 3f9a7c1e0b2d4f6a8c0e2b4d", "3f9a7c1e0b2d4f6a8c0e2b4d"],
  ["a token scheme", "token 9f8e7d6c5b4a39281706f5e4", "9f8e7d6c5b4a39281706f5e4"],
  ["basic credentials", "basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw=="],
  ["a vault placeholder", "vault://kv/records/api-token", "kv/records"],
  // URLs with credentials in any part
  ["a password in the user info", "postgres://app:hunter2x@db:5432/custody", "hunter2x"],
  [
    "a token as the user info",
    j("https://", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "@github.com/acme/repo.git"),
    "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
  ],
  ["an access token in the query", "https://api.example.com/v1?access_token=Zx9Yw8Vu7Ts6&page=2", "Zx9Yw8Vu7Ts6"],
  ["an API key in the query", "https://api.example.com/v1?page=2&api_key=Zx9Yw8Vu7Ts6", "Zx9Yw8Vu7Ts6"],
  ["a token in the fragment", "https://app.example.com/callback#id_token=Zx9Yw8Vu7Ts6&state=1", "Zx9Yw8Vu7Ts6"],
  [
    "an S3 presigned signature",
    "https://b.s3.amazonaws.com/k?X-Amz-Security-Token=FwoGZXIvYXdzEJr0123",
    "FwoGZXIvYXdzEJr0123",
  ],
  [
    "a Slack webhook",
    j("https://hooks.slack.com/services/", "T00000000/B00000000/", "XXXXXXXXXXXXXXXXXXXXXXXX"),
    "XXXXXXXXXXXXXXXXXXXXXXXX",
  ],
  [
    "a Discord webhook",
    j("https://discord.com/api/webhooks/", "123456789012345678/", "AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789"),
    "AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789",
  ],
  // header forms and cookies
  ["a cookie header line", "GET /x HTTP/1.1\nCookie: sid=s3ss10n-abc; theme=dark\nAccept: */*", "s3ss10n-abc"],
  ["a set-cookie header line", "Set-Cookie: session=Zx9Yw8Vu7Ts6; Path=/; HttpOnly", "Zx9Yw8Vu7Ts6"],
  ["an API key header line", "X-Api-Key: 9f8e7d6c5b4a3928", "9f8e7d6c5b4a3928"],
  [
    "a digest authorization header",
    'Authorization: Digest username="u", response="6629fae49393a05397450978507c4ef1"',
    "6629fae49393a05397450978507c4ef1",
  ],
  ["an env assignment", "export DB_PASSWORD=correct-horse-battery", "correct-horse-battery"],
  ["a YAML password", 'password: "no digits here"', "no digits here"],
  ["a JSON fragment in text", '{"client_secret": "abc.def.ghi"}', "abc.def.ghi"],
  // private keys
  ["a PEM private key", pem("PRIVATE KEY"), "MIIEvQIBADAN"],
  ["a PEM EC private key", pem("EC PRIVATE KEY"), "MIIEvQIBADAN"],
  ["an encrypted PEM private key", pem("ENCRYPTED PRIVATE KEY"), "MIIEvQIBADAN"],
  ["a PGP private key block", pem("PGP PRIVATE KEY BLOCK"), "MIIEvQIBADAN"],
  ["a private key cut short", j("-----BEGIN OPENSSH PRIVATE KEY-----\n", PEM_BODY), "MIIEvQIBADAN"],
  [
    "an age secret key",
    j("AGE-SECRET-KEY-1", "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"),
    "QQQQQQQQQQQQQQQQQQQQ",
  ],
];

/** Values with nothing secret in them: they must come out unchanged. */
export const LOOK_ALIKES: Array<[string, unknown]> = [
  [
    "token counts",
    { token_count: 5, input_tokens: 2648, max_tokens: 1024, tokens_before: 180000, tokenizer: "cl100k_base" },
  ],
  [
    "names that contain a secret word",
    {
      secret_name: "GITHUB_TOKEN",
      password_policy: "min 12",
      credential_id: "cred-123",
      token_type: "bearer",
      token_url: "https://id.example.com/token",
      private_key_id: "k-1",
      aws_access_key_id_ref: "ref",
    },
  ],
  [
    "ids and digests",
    {
      id: "evt-0001",
      task: "bench-task-0024",
      sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      uuid: "0b6c7a2e-4c1f-4e8a-9d3b-2f1e0a9c8b7d",
    },
  ],
  [
    "hosts and URLs without credentials",
    {
      host: "records.internal.example",
      url: "https://records.example.com/lookup?id=42&page=2#top",
      s3: "s3://inbox/case-918.pdf",
    },
  ],
  [
    "prose about authentication",
    { note: "The records API uses Bearer authentication. Basic authentication is disabled. Token auth is next." },
  ],
  [
    "words and settings",
    { mask: "mask-layer", skip: "skip_live_tests", region: "Asia/Tokyo", vault: "see vault docs", password: "" },
  ],
  ["public keys and certificates", { pub: pem("PUBLIC KEY"), cert: pem("CERTIFICATE") }],
  ["a password prompt", { prompt: "password: required", label: "Password: ********" }],
  [
    "a header pair that is not secret",
    {
      headers: [
        ["Accept", "application/json"],
        ["Content-Type", "text/plain"],
      ],
    },
  ],
  ["a name/value pair that is not secret", { headers: [{ name: "User-Agent", value: "runtime/1.2.3" }] }],
  ["JSON in a string without secrets", { arguments: '{"query": "case 918", "limit": 10}' }],
  ["numbers and booleans", { enabled: true, limits: [1, 2, 3], nothing: null, ratio: 0.25 }],
  ["short sk- and eyJ strings", { a: "sk-short", b: "eyJ.eyJ.x", c: "ghp_short" }],
  ["an upper-case word that starts like an AWS id", { code: "ASIAPACIFICREGIONCODE1" }],
];
