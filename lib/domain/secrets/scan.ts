/**
 * Finding credentials in text, in time linear in the length of the text (decision 0008: no
 * pattern run on untrusted text may take more than linear time; the shapes runtimes really send).
 *
 * How it stays linear (decision 0008): no regular expression looks at the text. A loop over the characters finds
 * the fixed words rules start from, with a table of first characters. Each word found is a *candidate* (`sk-`,
 * `Bearer`, `://`, `=` …) and its rule is checked with a few lookups of "where does the run of characters of class C
 * starting (or ending) here stop": those run ends are memoized per class, so every character is walked at most
 * once per class, however densely candidates repeat (`apikey=apikey=…`, `sk-sk-sk-…`). A candidate inside a span
 * already found is skipped. No backtracking regex ever looks at the text.
 *
 * Shapes (after the provider rules of secretlint's recommended preset and gitleaks): PEM private keys (a key
 * without its END line is redacted to the end of the text), JWTs, `Bearer`/`Token`/`Basic` credentials, provider
 * keys and tokens by prefix (OpenAI/Anthropic `sk-`, Stripe, GitHub, GitLab, Slack, Google, AWS key ids, npm,
 * Hugging Face, SendGrid, DigitalOcean, Shopify, HashiCorp Vault, PyPI, age, Linear, Groq, Databricks, Twilio,
 * Mailgun, Doppler, 1Password, Grafana, Sentry, Postman, Atlassian, Fly.io, Dynatrace, EasyPost, Artifactory,
 * Pulumi, New Relic, Telegram bots, our own `rck_` and `rci_`), passwords and tokens in URLs (user info; parameters
 * are assignments; a token-like path segment after a segment named like a credential: `/api/<32+ letters and
 * digits>`, `/token/<16+>`, `/hooks/<16+>`), Slack and Discord webhook URLs, connection strings (ODBC/ADO.NET
 * `Pwd=`/`Password=` with `{…}` values, JDBC and libpq `password=`, Oracle `user/password@`), command lines (`mysql
 * -p<password>`, `sshpass -p`, `redis-cli -a`, `curl -u user:password`, `--password <value>` and any `--<secret
 * name> <value>`), placeholders of secret managers (`{{vault:…}}`, `${secrets.X}`, `op://…`, `vault:secret/…#key`,
 * `arn:aws:secretsmanager:…`, `{{resolve:secretsmanager:…}}`, `doppler://…`, `@Microsoft.KeyVault(…)`), and
 * `name=value` / `name: value` assignments and header lines whose name is a secret name (./names.ts; weak names
 * such as `pass`, `pwd`, `auth` only when the value looks like a credential). Decision 0027 says which shapes and why.
 */
import { isSecretHeaderName, secretNameKind, isPlainValueChar, WEAK_VALUE_CHECKED, weakValueVerdict } from "./names";

export const REDACTED = "[REDACTED]";

/** A part of a text to replace: `[start, end)` in UTF-16 code units, and what it is. */
export type SecretSpan = { start: number; end: number; kind: string };

type Cls = (c: number) => boolean;

function asciiTable(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
function ascii(chars: string): Cls {
  const t = asciiTable(chars);
  return (c) => c < 128 && t[c] === 1;
}
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;

/** JavaScript's `\s`. */
export function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
function notSpaceNor(chars: string): Cls {
  const t = asciiTable(chars);
  return (c) => !isSpace(c) && !(c < 128 && t[c] === 1);
}

const WORD = ascii(ALNUM + "_");
const B62 = ascii(ALNUM);
const B64URL = ascii(ALNUM + "_-");
const TOKEN68 = ascii(ALNUM + "-._~+/");
const B64 = ascii(ALNUM + "+/");
const HEX_CHARS = DIGITS + "abcdefABCDEF";
const HEX = ascii(HEX_CHARS);
const UPALNUM = ascii(UPPER + DIGITS);
const ALPHA = ascii(UPPER + LOWER);
const SLACK = ascii(ALNUM + "-");
const NAME = ascii(ALNUM + "_.-");
const EQUALS = ascii("=");
const NON_DIGIT: Cls = (c) => c < 48 || c > 57;
const SPACE: Cls = isSpace;
/** What may stand between a name and its `=` or `:`: spaces, quotes, backslashes (`"password": …`, `\"key\":`). */
const NAME_GAP: Cls = (c) => isSpace(c) || c === 34 || c === 39 || c === 96 || c === 92;
const URL_USER = notSpaceNor("/?#@:");
const URL_PASS = notSpaceNor("/@");
const VALUE = notSpaceNor(`"'&,;\\`);
const VAULT = notSpaceNor(`"'<>`);
const LINE: Cls = (c) => c !== 10 && c !== 13;
const LINE_IN_DQUOTES: Cls = (c) => c !== 10 && c !== 13 && c !== 34;
const LINE_IN_SQUOTES: Cls = (c) => c !== 10 && c !== 13 && c !== 39;
const IN_DQUOTES: Cls = (c) => c !== 34 && c !== 92 && c !== 10 && c !== 13;
const IN_SQUOTES: Cls = (c) => c !== 39 && c !== 92 && c !== 10 && c !== 13;
const WEBHOOK_PATH = ascii(ALNUM + "/+_-");
/** Spaces and tabs: what separates a flag from its value on one command line. */
const HSPACE = ascii(" \t");
const NOT_LINE_CLOSE_BRACE: Cls = (c) => c !== 125 && c !== 10 && c !== 13;
const NOT_LINE_CLOSE_PAREN: Cls = (c) => c !== 41 && c !== 10 && c !== 13;
const NON_LETTER: Cls = (c) => !ALPHA(c);
const NOT_SPACE: Cls = (c) => !isSpace(c);
const DIGIT = ascii(DIGITS);
const PLAIN_VALUE: Cls = isPlainValueChar;
const REF_NO_SLASH: Cls = (c) => VAULT(c) && c !== 47;
/** A flag's unquoted value: not a space, not a quote. */
const ARG = notSpaceNor(`"'`);
/** The user part of `user:password` or `user/password@`. */
const USER_PART = notSpaceNor(`"':/@`);
const NOT_AT = notSpaceNor(`"'@`);

/**
 * Every word a rule starts from, found by a loop over the characters with a table of first characters (no regular
 * expression). Keep in step with {@link candidateRule} and with the superset regexes in ./prefilter.ts.
 */
const CANDIDATE_WORDS = [
  "-----BEGIN ",
  "eyJ",
  "sk-",
  "sk_live_",
  "sk_test_",
  "rk_live_",
  "rk_test_",
  "whsec_",
  "ghp_",
  "gho_",
  "ghu_",
  "ghs_",
  "ghr_",
  "github_pat_",
  "glpat-",
  "gldt-",
  "glrt-",
  "glptt-",
  "gsk_",
  "rck_",
  "xoxa-",
  "xoxb-",
  "xoxp-",
  "xoxr-",
  "xoxs-",
  "xoxe-",
  "xapp-",
  "AIza",
  "AKIA",
  "ASIA",
  "AGPA",
  "AIDA",
  "AROA",
  "AIPA",
  "ANPA",
  "ANVA",
  "A3T",
  "AGE-SECRET-KEY-1",
  "npm_",
  "hf_",
  "SG.",
  "SK",
  "dop_v1_",
  "doo_v1_",
  "dor_v1_",
  "dapi",
  "shpat_",
  "shpca_",
  "shppa_",
  "shpss_",
  "hvs.",
  "hvb.",
  "hvr.",
  "ya29.",
  "pypi-AgEIcHlwaS5vcmc",
  "lin_api_",
  "key-",
  "rci_",
  "dp.pt.",
  "dp.st.",
  "dp.ct.",
  "dp.sa.",
  "dp.scim.",
  "dp.audit.",
  "ops_eyJ",
  "glsa_",
  "glc_",
  "sntrys_",
  "sntryu_",
  "PMAK-",
  "ATATT3",
  "fo1_",
  "dt0c01.",
  "EZAK",
  "EZTK",
  "AKCp",
  "pul-",
  "NRAK-",
  "vault:",
  "op://",
  "doppler://",
  "infisical://",
  "sm://",
  "berglas://",
  "secretsmanager:",
  "secretmanager:",
  "ssm-secure:",
  "@Microsoft.KeyVault(",
  "{{",
  "${",
  "jdbc:oracle:thin:",
  "sqlplus",
  "://",
  "hooks.slack.com/services/",
  "/api/webhooks/",
  "/bot",
  "/",
  "--",
  "-p",
  "-u",
  "-U",
  "-a",
  "=",
  ":",
];
/** Auth scheme words, matched in any case. */
const SCHEME_WORDS = ["bearer", "basic", "token"];

/** Candidate words by first character, longest first. */
const BY_FIRST: Array<string[] | undefined> = (() => {
  const table: Array<string[] | undefined> = new Array(128);
  for (const w of [...CANDIDATE_WORDS].sort((a, b) => b.length - a.length)) (table[w.charCodeAt(0)] ??= []).push(w);
  return table;
})();

/** The candidate word at `i`, or null. Constant time for each position. */
function candidateAt(text: string, i: number): string | null {
  const c = text.charCodeAt(i);
  if (c >= 128) return null;
  const words = BY_FIRST[c];
  if (words) for (const w of words) if (text.startsWith(w, i)) return w;
  const lower = c | 0x20;
  if (lower === 98 || lower === 116) {
    for (const w of SCHEME_WORDS) {
      if (w.charCodeAt(0) !== lower || i + w.length > text.length) continue;
      let same = true;
      for (let k = 1; same && k < w.length; k++) same = (text.charCodeAt(i + k) | 0x20) === w.charCodeAt(k);
      if (same) return w;
    }
  }
  return null;
}

/** A token that starts with a fixed prefix: at least `min` characters of `cls` after it (exactly `exact`, then a boundary). */
type PrefixRule = { kind: string; cls: Cls; min: number; exact?: boolean };

const PREFIX_RULES: Record<string, PrefixRule> = {
  "sk-": { kind: "api_key", cls: B64URL, min: 20 },
  sk_live_: { kind: "api_key", cls: B62, min: 16 },
  sk_test_: { kind: "api_key", cls: B62, min: 16 },
  rk_live_: { kind: "api_key", cls: B62, min: 16 },
  rk_test_: { kind: "api_key", cls: B62, min: 16 },
  whsec_: { kind: "api_key", cls: B62, min: 24 },
  ghp_: { kind: "github_token", cls: WORD, min: 30 },
  gho_: { kind: "github_token", cls: WORD, min: 30 },
  ghu_: { kind: "github_token", cls: WORD, min: 30 },
  ghs_: { kind: "github_token", cls: WORD, min: 30 },
  ghr_: { kind: "github_token", cls: WORD, min: 30 },
  github_pat_: { kind: "github_token", cls: WORD, min: 22 },
  "glpat-": { kind: "gitlab_token", cls: B64URL, min: 20 },
  "gldt-": { kind: "gitlab_token", cls: B64URL, min: 20 },
  "glrt-": { kind: "gitlab_token", cls: B64URL, min: 20 },
  "glptt-": { kind: "gitlab_token", cls: B64URL, min: 20 },
  rck_: { kind: "api_key", cls: B64URL, min: 20 },
  "xoxa-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xoxb-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xoxp-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xoxr-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xoxs-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xoxe-": { kind: "slack_token", cls: SLACK, min: 10 },
  "xapp-": { kind: "slack_token", cls: SLACK, min: 10 },
  AIza: { kind: "api_key", cls: B64URL, min: 35 },
  npm_: { kind: "npm_token", cls: B62, min: 36 },
  hf_: { kind: "api_key", cls: ALPHA, min: 34 },
  dop_v1_: { kind: "digitalocean_token", cls: HEX, min: 64 },
  doo_v1_: { kind: "digitalocean_token", cls: HEX, min: 64 },
  dor_v1_: { kind: "digitalocean_token", cls: HEX, min: 64 },
  shpat_: { kind: "shopify_token", cls: HEX, min: 32 },
  shpca_: { kind: "shopify_token", cls: HEX, min: 32 },
  shppa_: { kind: "shopify_token", cls: HEX, min: 32 },
  shpss_: { kind: "shopify_token", cls: HEX, min: 32 },
  "hvs.": { kind: "vault_token", cls: B64URL, min: 24 },
  "hvb.": { kind: "vault_token", cls: B64URL, min: 24 },
  "hvr.": { kind: "vault_token", cls: B64URL, min: 24 },
  "ya29.": { kind: "google_oauth_token", cls: B64URL, min: 20 },
  "AGE-SECRET-KEY-1": { kind: "age_secret_key", cls: UPALNUM, min: 58 },
  "pypi-AgEIcHlwaS5vcmc": { kind: "pypi_token", cls: B64URL, min: 50 },
  lin_api_: { kind: "api_key", cls: B62, min: 32 },
  gsk_: { kind: "api_key", cls: B62, min: 52 },
  dapi: { kind: "api_key", cls: HEX, min: 32, exact: true },
  SK: { kind: "api_key", cls: HEX, min: 32, exact: true },
  "key-": { kind: "api_key", cls: HEX, min: 32, exact: true },
  rci_: { kind: "invitation_token", cls: B64URL, min: 20 },
  "dp.pt.": { kind: "doppler_token", cls: B62, min: 40 },
  "dp.st.": { kind: "doppler_token", cls: NAME, min: 40 },
  "dp.ct.": { kind: "doppler_token", cls: B62, min: 40 },
  "dp.sa.": { kind: "doppler_token", cls: B62, min: 40 },
  "dp.scim.": { kind: "doppler_token", cls: B62, min: 40 },
  "dp.audit.": { kind: "doppler_token", cls: B62, min: 40 },
  ops_eyJ: { kind: "onepassword_token", cls: ascii(ALNUM + "+/="), min: 100 },
  glsa_: { kind: "grafana_token", cls: WORD, min: 32 },
  glc_: { kind: "grafana_token", cls: ascii(ALNUM + "+/="), min: 32 },
  sntrys_: { kind: "sentry_token", cls: ascii(ALNUM + "+/=_"), min: 40 },
  sntryu_: { kind: "sentry_token", cls: HEX, min: 64 },
  "PMAK-": { kind: "api_key", cls: ascii(HEX_CHARS + "-"), min: 59 },
  ATATT3: { kind: "atlassian_token", cls: ascii(ALNUM + "_-="), min: 150 },
  fo1_: { kind: "flyio_token", cls: B64URL, min: 43 },
  "dt0c01.": { kind: "dynatrace_token", cls: ascii(ALNUM + "."), min: 80 },
  EZAK: { kind: "api_key", cls: B62, min: 54 },
  EZTK: { kind: "api_key", cls: B62, min: 54 },
  AKCp: { kind: "artifactory_token", cls: B62, min: 69 },
  "pul-": { kind: "pulumi_token", cls: HEX, min: 40 },
  "NRAK-": { kind: "newrelic_key", cls: UPALNUM, min: 27 },
};
const AWS_PREFIXES = new Set(["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"]);

/** One pass over one text: memoized run ends per character class. */
class Scan {
  readonly n: number;
  private fwd = new Map<Cls, Int32Array>();
  private back = new Map<Cls, Int32Array>();
  private pemEndFrom = -1;
  private pemEndAt = -2;
  private nextAt = new Map<string, { from: number; at: number }>();
  /** Characters looked at by run lookups and searches (for the linearity test). */
  steps = 0;
  /** End of the last span found: a rule that reaches back never starts before it. */
  floor = 0;

  constructor(
    readonly text: string,
    /** Placeholders only, `${env:X}` included (the vault lane's own pass). */
    readonly vaultLane = false,
  ) {
    this.n = text.length;
  }

  /**
   * Position of the next `word` at or after `from`, or -1. Remembered per word, so a run of calls with `from` never
   * decreasing (the scan moves left to right) reads each character a bounded number of times.
   */
  nextIndex(word: string, from: number): number {
    const m = this.nextAt.get(word);
    if (m && from >= m.from && (m.at === -1 || m.at >= from)) return m.at;
    const at = this.text.indexOf(word, from);
    this.steps += (at === -1 ? this.n : at + word.length) - from;
    this.nextAt.set(word, { from, at });
    return at;
  }

  /** True when `word` occurs on the line of `i`, before `i` (the command a flag belongs to). */
  onLineBefore(word: string, i: number): boolean {
    const at = this.nextIndex(word, this.runStart(LINE, i));
    return at >= 0 && at + word.length <= i;
  }

  code(i: number): number {
    return i >= 0 && i < this.n ? this.text.charCodeAt(i) : -1;
  }

  /** First position at or after `p` not in `cls` (the end of the run of `cls` starting at `p`). */
  runEnd(cls: Cls, p: number): number {
    const { n, text } = this;
    if (p >= n) return n;
    let memo = this.fwd.get(cls);
    if (!memo) this.fwd.set(cls, (memo = new Int32Array(n)));
    if (memo[p]! !== 0) return memo[p]! - 1;
    let q = p;
    let end = n;
    while (q < n) {
      this.steps++;
      const known = memo[q]!;
      if (known !== 0) {
        end = known - 1;
        break;
      }
      if (!cls(text.charCodeAt(q))) {
        end = q;
        break;
      }
      q++;
    }
    for (let k = p; k < q; k++) memo[k] = end + 1;
    if (q === end && q < n) memo[q] = end + 1;
    return end;
  }

  /** First position of the run of `cls` that ends just before `p` (`p` when `text[p-1]` is not in `cls`). */
  runStart(cls: Cls, p: number): number {
    const { text } = this;
    if (p <= 0) return 0;
    let memo = this.back.get(cls);
    if (!memo) this.back.set(cls, (memo = new Int32Array(this.n + 1)));
    if (memo[p]! !== 0) return memo[p]! - 1;
    let k = p;
    let start = 0;
    while (k > 0) {
      this.steps++;
      const known = memo[k]!;
      if (known !== 0) {
        start = known - 1;
        break;
      }
      if (!cls(text.charCodeAt(k - 1))) {
        start = k;
        break;
      }
      k--;
    }
    for (let x = p; x >= k; x--) memo[x] = start + 1;
    return start;
  }

  /** True when a digit occurs in `[from, to)`. */
  hasDigit(from: number, to: number): boolean {
    return from < to && this.runEnd(NON_DIGIT, from) < to;
  }

  /** Position of the next `-----END` at or after `from`, or -1; memoized so dense BEGINs stay linear. */
  pemEnd(from: number): number {
    if (this.pemEndAt !== -2 && from >= this.pemEndFrom && (this.pemEndAt === -1 || this.pemEndAt >= from))
      return this.pemEndAt;
    this.pemEndFrom = from;
    this.pemEndAt = this.text.indexOf("-----END", from);
    return this.pemEndAt;
  }

  /** Index of `-----` within `limit` characters after `from`, or -1 (a bounded search). */
  dashesWithin(from: number, limit: number): number {
    const stop = Math.min(this.n - 4, from + limit);
    for (let i = from; i <= stop; i++) {
      if (this.text.startsWith("-----", i)) return i;
    }
    return -1;
  }
}

/** True when `[from, to)` is exactly the redaction marker (constant time). */
const isRedacted = (s: Scan, from: number, to: number) =>
  to - from === REDACTED.length && s.text.startsWith(REDACTED, from);

const isWordAt = (s: Scan, i: number) => {
  const c = s.code(i);
  return c >= 0 && WORD(c);
};

function prefixToken(s: Scan, i: number, prefix: string, rule: PrefixRule): SecretSpan | null {
  if (isWordAt(s, i - 1)) return null;
  const from = i + prefix.length;
  const end = s.runEnd(rule.cls, from);
  const len = end - from;
  if (rule.exact) {
    if (len !== rule.min || isWordAt(s, end)) return null;
  } else if (len < rule.min) {
    return null;
  }
  return { start: i, end, kind: rule.kind };
}

function awsKeyId(s: Scan, i: number): SecretSpan | null {
  if (isWordAt(s, i - 1)) return null;
  const end = s.runEnd(UPALNUM, i + 4);
  if (end - (i + 4) !== 16 || isWordAt(s, end)) return null;
  return { start: i, end, kind: "aws_access_key_id" };
}

function pem(s: Scan, i: number): SecretSpan | null {
  const headerEnd = s.dashesWithin(i + 11, 80);
  if (headerEnd < 0 || !s.text.slice(i + 11, headerEnd).includes("PRIVATE KEY")) return null;
  const endAt = s.pemEnd(headerEnd + 5);
  if (endAt < 0) return { start: i, end: s.n, kind: "pem_private_key" };
  const close = s.dashesWithin(endAt + 8, 80);
  return { start: i, end: close < 0 ? s.n : close + 5, kind: "pem_private_key" };
}

function jwt(s: Scan, i: number): SecretSpan | null {
  if (s.code(i - 1) >= 0 && B64URL(s.code(i - 1))) return null;
  const e1 = s.runEnd(B64URL, i);
  if (e1 - i < 11 || s.code(e1) !== 46 || !s.text.startsWith("eyJ", e1 + 1)) return null;
  const e2 = s.runEnd(B64URL, e1 + 1);
  if (e2 - (e1 + 1) < 11 || s.code(e2) !== 46) return null;
  const e3 = s.runEnd(B64URL, e2 + 1);
  if (e3 - (e2 + 1) < 8) return null;
  return { start: i, end: s.runEnd(EQUALS, e3), kind: "jwt" };
}

/** `Bearer <token>`, `Token <token>`, `Basic <base64>`: the word and the space stay, the credential goes. */
function scheme(s: Scan, i: number, word: string): SecretSpan | null {
  if (isWordAt(s, i - 1)) return null;
  const afterWord = i + word.length;
  const tokenStart = s.runEnd(SPACE, afterWord);
  if (tokenStart === afterWord) return null;
  return schemeCredential(s, tokenStart, word.toLowerCase() === "basic" ? "basic" : "bearer");
}

function schemeCredential(s: Scan, from: number, kind: "basic" | "bearer"): SecretSpan | null {
  if (s.text.startsWith(REDACTED, from)) return null;
  const cls = kind === "basic" ? B64 : TOKEN68;
  const end = s.runEnd(cls, from);
  if (end - from < 12) return null;
  const withPadding = s.runEnd(EQUALS, end);
  if (kind === "bearer") {
    if (!s.hasDigit(from, end)) return null;
    return { start: from, end: withPadding, kind: "bearer_token" };
  }
  // base64 of user:password holds a digit, '+', '/' or '=' somewhere; "Basic authentication" does not.
  let marked = withPadding > end || s.hasDigit(from, end);
  for (let k = from; !marked && k < end; k++) marked = s.text.charCodeAt(k) === 43 || s.text.charCodeAt(k) === 47;
  return marked ? { start: from, end: withPadding, kind: "basic_credentials" } : null;
}

/** `scheme://user:password@host` (the password goes) or `scheme://<long token>@host` (the token goes). */
function urlUserInfo(s: Scan, i: number): SecretSpan | null {
  const schemeChar = s.code(i - 1);
  if (!(schemeChar >= 0 && (B62(schemeChar) || schemeChar === 43 || schemeChar === 46 || schemeChar === 45)))
    return null;
  const userStart = i + 3;
  const userEnd = s.runEnd(URL_USER, userStart);
  const after = s.code(userEnd);
  if (after === 58) {
    const passEnd = s.runEnd(URL_PASS, userEnd + 1);
    if (passEnd > userEnd + 1 && s.code(passEnd) === 64 && !isRedacted(s, userEnd + 1, passEnd)) {
      return { start: userEnd + 1, end: passEnd, kind: "url_password" };
    }
    return null;
  }
  if (after === 64 && userEnd - userStart >= 20 && s.hasDigit(userStart, userEnd)) {
    return { start: userStart, end: userEnd, kind: "url_token" };
  }
  return null;
}

function sendgrid(s: Scan, i: number): SecretSpan | null {
  if (isWordAt(s, i - 1)) return null;
  const e1 = s.runEnd(B64URL, i + 3);
  if (e1 - (i + 3) < 16 || s.code(e1) !== 46) return null;
  const e2 = s.runEnd(B64URL, e1 + 1);
  return e2 - (e1 + 1) >= 16 ? { start: i, end: e2, kind: "api_key" } : null;
}

function webhook(s: Scan, i: number, literal: string, kind: string): SecretSpan | null {
  const from = i + literal.length;
  const end = s.runEnd(WEBHOOK_PATH, from);
  return end - from >= 16 ? { start: from, end, kind } : null;
}

/**
 * `name=value`, `name: value`, `"name": "value"`, `Cookie: a=1; b=2`, `?access_token=…` where the name is a
 * secret name. An unquoted value after `:` must be 6+ characters with a digit ("password: required" is prose); an
 * unquoted value after `=` 3+ characters; a quoted one anything. Header names (cookie, authorization) take the
 * rest of the line, keeping an auth scheme word.
 */
function assignment(s: Scan, q: number): SecretSpan | null {
  const nameEnd = s.runStart(NAME_GAP, q);
  const nameStart = s.runStart(NAME, nameEnd);
  if (nameEnd === nameStart) return null;
  const name = s.text.slice(Math.max(nameStart, nameEnd - 64), nameEnd);
  const strength = secretNameKind(name);
  if (!strength) return null;
  const weak = strength === "weak";
  const sep = s.code(q);
  let v = s.runEnd(SPACE, q + 1);
  if (sep === 58 && isSecretHeaderName(name) && s.code(v) !== 34 && s.code(v) !== 39) {
    // A header line quoted as a whole ('Authorization: Bearer …' in a curl command) ends at that quote.
    const before = s.code(nameStart - 1);
    return headerValue(s, v, before === 34 ? LINE_IN_DQUOTES : before === 39 ? LINE_IN_SQUOTES : LINE);
  }
  while (s.code(v) === 92) v++;
  const quote = s.code(v);
  if (quote === 34 || quote === 39) {
    const from = v + 1;
    const end = s.runEnd(quote === 34 ? IN_DQUOTES : IN_SQUOTES, from);
    if (end === from || s.text.startsWith(REDACTED, from)) return null;
    if (weak && !weakValueAt(s, from, end)) return null;
    return { start: from, end, kind: "assigned_secret" };
  }
  if (s.text.startsWith(REDACTED, v)) return null;
  // ODBC and ADO.NET quote a value holding `;` in braces: `Pwd={a;b}`.
  if (quote === 123 && s.text.startsWith(REDACTED, v + 1)) return null;
  if (sep === 61 && quote === 123 && s.code(v + 1) !== 123) {
    const close = s.runEnd(NOT_LINE_CLOSE_BRACE, v + 1);
    if (s.code(close) === 125 && close > v + 1 && (!weak || weakValueAt(s, v + 1, close)))
      return { start: v + 1, end: close, kind: "assigned_secret" };
  }
  const end = s.runEnd(VALUE, v);
  const len = end - v;
  if (weak) return weakValueAt(s, v, end) ? { start: v, end, kind: "assigned_secret" } : null;
  if (sep === 58 ? len < 6 || !s.hasDigit(v, end) : len < 3) return null;
  return { start: v, end, kind: "assigned_secret" };
}

function headerValue(s: Scan, from: number, line: Cls): SecretSpan | null {
  let end = s.runEnd(line, from);
  while (end > from && isSpace(s.text.charCodeAt(end - 1))) end--;
  if (end <= from) return null;
  const wordEnd = s.runEnd(B62, from);
  const word = wordEnd - from <= 6 ? s.text.slice(from, wordEnd).toLowerCase() : "";
  if ((word === "bearer" || word === "basic" || word === "token" || word === "digest") && isSpace(s.code(wordEnd))) {
    const credStart = s.runEnd(SPACE, wordEnd);
    if (s.text.startsWith(REDACTED, credStart)) return null;
    if (credStart >= end) return null;
    return { start: credStart, end, kind: word === "basic" ? "basic_credentials" : "bearer_token" };
  }
  if (isRedacted(s, from, end)) return null;
  return { start: from, end, kind: "header_secret" };
}

/**
 * The value of a weak secret name (`pass`, `pwd`, `auth` …) in `[from, to)`, judged as
 * {@link weakValueVerdict} says, with memoized run lookups (a dense `pass=pass=…` stays linear).
 */
function weakValueAt(s: Scan, from: number, to: number): boolean {
  const len = to - from;
  if (len < 6) return false;
  if (s.runEnd(NOT_SPACE, from) < to) return false;
  const hasNonPlain = s.runEnd(PLAIN_VALUE, from) < to;
  const head = len <= WEAK_VALUE_CHECKED ? s.text.slice(from, to) : "";
  return weakValueVerdict(len, hasNonPlain, head);
}

/** `{{ vault:… }}`, `${secrets.X}`, `${{ secrets.X }}`, `{{resolve:secretsmanager:…}}`: a template whose first word names a secret source. */
const PLACEHOLDER_HEADS: ReadonlySet<string> = new Set([
  "vault",
  "secret",
  "secrets",
  "op",
  "kv",
  "ssm",
  "keyvault",
  "credential",
  "credentials",
  "resolve",
  "doppler",
  "infisical",
  "bitwarden",
  "onepassword",
  "onepasswordread",
  "onepassworddetailsfields",
  "awssecretsmanager",
  "azurekeyvault",
  "gopass",
  "keepassxc",
]);
const HEAD_WORD = ascii(UPPER + LOWER + "_");

function template(s: Scan, i: number): SecretSpan | null {
  let j = i + 2;
  while (j < i + 4 && s.code(j) === 123) j++;
  j = s.runEnd(HSPACE, j);
  const wordEnd = s.runEnd(HEAD_WORD, j);
  if (wordEnd === j || wordEnd - j > 32) return null;
  const head = s.text.slice(j, wordEnd).toLowerCase();
  if (!PLACEHOLDER_HEADS.has(head) && !(s.vaultLane && head === "env")) return null;
  const close = s.runEnd(NOT_LINE_CLOSE_BRACE, wordEnd);
  let end: number;
  if (s.code(close) === 125) {
    end = close + 1;
    while (end < close + 3 && s.code(end) === 125) end++;
  } else {
    end = s.runEnd(VAULT, wordEnd);
  }
  return { start: i, end, kind: "vault_placeholder" };
}

/** `op://vault/item/field`, `vault://…`, `doppler://project/config`, `sm://project/secret`: a reference a secret manager fills in. */
function reference(s: Scan, i: number, word: string): SecretSpan | null {
  if (isWordAt(s, i - 1)) return null;
  const from = i + word.length;
  const end = s.runEnd(VAULT, from);
  if (end === from) return null;
  // `vault:secret/data/app#password` (bank-vaults); a bare `vault:` must be followed by a path.
  if (word === "vault:" && !s.text.startsWith("//", from) && (end - from < 3 || s.runEnd(REF_NO_SLASH, from) >= end))
    return null;
  return { start: i, end, kind: "vault_placeholder" };
}

/** `arn:aws:secretsmanager:…`, `resolve:secretsmanager:…`, `gcp:secretmanager:…`, `resolve:ssm-secure:…`: the whole reference. */
function managerReference(s: Scan, i: number, word: string): SecretSpan | null {
  const end = s.runEnd(VAULT, i + word.length);
  if (end === i + word.length) return null;
  return { start: Math.max(s.floor, s.runStart(VAULT, i)), end, kind: "vault_placeholder" };
}

/** `@Microsoft.KeyVault(SecretUri=…)` (Azure App Service Key Vault references). */
function keyVaultReference(s: Scan, i: number, word: string): SecretSpan | null {
  const close = s.runEnd(NOT_LINE_CLOSE_PAREN, i + word.length);
  return s.code(close) === 41 ? { start: i, end: close + 1, kind: "vault_placeholder" } : null;
}

/** `jdbc:oracle:thin:scott/tiger@db`, `sqlplus scott/tiger@db`: the password between `/` and `@`. */
function userSlashPassword(s: Scan, i: number, word: string): SecretSpan | null {
  const userStart = word === "sqlplus" ? s.runEnd(HSPACE, i + word.length) : i + word.length;
  if (word === "sqlplus" && (userStart === i + word.length || isWordAt(s, i - 1))) return null;
  const userEnd = s.runEnd(USER_PART, userStart);
  if (userEnd === userStart || s.code(userEnd) !== 47) return null;
  const passEnd = s.runEnd(NOT_AT, userEnd + 1);
  if (passEnd === userEnd + 1 || s.code(passEnd) !== 64 || isRedacted(s, userEnd + 1, passEnd)) return null;
  return { start: userEnd + 1, end: passEnd, kind: "connection_password" };
}

/**
 * Short flags that carry a password on a command line, by the command that must come earlier on the same line.
 * `attached`: the value follows the flag directly (`mysql -pS3cret`; `mysql -p db` prompts and names a database).
 * `spaced`: the value is the next argument; `strict` spaced values must look like a credential (weak rule), so that
 * `ssh -p 2222 login@host` or prose stays. `userPass`: the value is `user:password` and the password goes.
 */
type FlagUse = { command: string; attached: boolean; spaced: boolean; strict?: boolean; userPass?: boolean };
const COMMAND_FLAGS: Record<string, FlagUse[]> = {
  "-p": [
    { command: "mysql", attached: true, spaced: false },
    { command: "mariadb", attached: true, spaced: false },
    { command: "sshpass", attached: true, spaced: true },
    { command: "mongo", attached: false, spaced: true, strict: true },
    { command: " login", attached: false, spaced: true, strict: true },
  ],
  "-u": [{ command: "curl", attached: true, spaced: true, userPass: true }],
  "-U": [{ command: "curl", attached: true, spaced: true, userPass: true }],
  "-a": [{ command: "redis-cli", attached: false, spaced: true }],
};
/** Long flags whose value is `user:password` on a curl line. */
const CURL_USER_FLAGS = new Set(["user", "proxy-user"]);

/** What may stand before a flag: the start, a space, a quote or `=` (`sh -c "mysql -p…"`). */
const flagStartsAt = (s: Scan, i: number) => {
  const c = s.code(i - 1);
  return c === -1 || isSpace(c) || c === 34 || c === 39;
};

/** A flag's value starting at `v` (quoted or a run of non-spaces): `[start, end)` of what goes, or null. */
function flagValue(s: Scan, v: number, strict: boolean, userPass: boolean): SecretSpan | null {
  const q = s.code(v);
  let from = v;
  let end: number;
  if (q === 34 || q === 39) {
    from = v + 1;
    end = s.runEnd(q === 34 ? IN_DQUOTES : IN_SQUOTES, from);
  } else {
    end = s.runEnd(ARG, v);
  }
  if (end === from || s.code(from) === 45 || s.text.startsWith(REDACTED, from)) return null;
  if (userPass) {
    const colon = s.runEnd(USER_PART, from);
    if (s.code(colon) !== 58 || colon + 1 >= end || isRedacted(s, colon + 1, end)) return null;
    return { start: colon + 1, end, kind: "command_line_password" };
  }
  if (strict && !weakValueAt(s, from, end)) return null;
  return { start: from, end, kind: "command_line_password" };
}

function shortFlag(s: Scan, i: number, flag: string): SecretSpan | null {
  if (!flagStartsAt(s, i)) return null;
  const after = i + 2;
  const next = s.code(after);
  const attached = next !== -1 && !isSpace(next);
  for (const use of COMMAND_FLAGS[flag]!) {
    if (attached ? !use.attached : !use.spaced) continue;
    if (!s.onLineBefore(use.command, i)) continue;
    const v = attached ? after : s.runEnd(HSPACE, after);
    if (!attached && (v === after || v >= s.n || isSpace(s.code(v)))) continue;
    const span = flagValue(s, v, !attached && use.strict === true, use.userPass === true);
    if (span) return span;
  }
  return null;
}

/** `--password S3cret`, `--api-key "…"`, `curl --user u:p`: a long flag named like a secret and its next argument. */
function longFlag(s: Scan, i: number): SecretSpan | null {
  if (!flagStartsAt(s, i)) return null;
  const nameEnd = s.runEnd(NAME, i + 2);
  if (nameEnd - (i + 2) < 2 || nameEnd - (i + 2) > 64) return null;
  const name = s.text.slice(i + 2, nameEnd);
  // `--user=u:p` too (other `--name=value` flags are assignments).
  if (CURL_USER_FLAGS.has(name) && s.code(nameEnd) === 61)
    return s.onLineBefore("curl", i) ? flagValue(s, nameEnd + 1, false, true) : null;
  if (!HSPACE(s.code(nameEnd))) return null;
  const v = s.runEnd(HSPACE, nameEnd);
  if (v >= s.n) return null;
  if (CURL_USER_FLAGS.has(name)) return s.onLineBefore("curl", i) ? flagValue(s, v, false, true) : null;
  const kind = secretNameKind(name);
  if (!kind) return null;
  const quoted = s.code(v) === 34 || s.code(v) === 39;
  return flagValue(s, v, !quoted || kind === "weak", false);
}

/**
 * Path segments that name what follows as a credential: the next segment of 16+ letters, digits, `_` and `-` (with
 * both letters and digits, not a UUID) is a token. After `api`, a namespace word that ids also follow, only 32+
 * letters and digits without separators count. Everything else in a path is an id (decision 0027).
 */
const PATH_WORDS: ReadonlyMap<string, "credential" | "api"> = new Map([
  ["api", "api"],
  ...[
    "token",
    "tokens",
    "key",
    "keys",
    "apikey",
    "apikeys",
    "api-key",
    "api-keys",
    "api_key",
    "api_keys",
    "secret",
    "secrets",
    "password",
    "passwd",
    "hook",
    "hooks",
    "webhook",
    "webhooks",
    "webhookb2",
    "incomingwebhook",
    "auth",
    "access-token",
    "access_token",
    "accesstoken",
    "sig",
    "signature",
  ].map((w) => [w, "credential"] as const),
]);

function isUuidAt(s: Scan, from: number, end: number): boolean {
  if (end - from !== 36) return false;
  let p = from;
  for (const len of [8, 4, 4, 4, 12]) {
    if (s.runEnd(HEX, p) < p + len) return false;
    p += len;
    if (p < end && s.code(p) !== 45) return false;
    p++;
  }
  return true;
}

function pathSegment(s: Scan, i: number): SecretSpan | null {
  const prevStart = s.runStart(B64URL, i);
  if (i - prevStart < 3 || i - prevStart > 16 || s.code(prevStart - 1) !== 47) return null;
  const kind = PATH_WORDS.get(s.text.slice(prevStart, i).toLowerCase());
  if (!kind) return null;
  const from = i + 1;
  const end = s.runEnd(B64URL, from);
  if (end - from < (kind === "api" ? 32 : 16)) return null;
  if (!s.hasDigit(from, end) || s.runEnd(NON_LETTER, from) >= end) return null;
  if (kind === "api" && s.runEnd(B62, from) < end) return null;
  if (isUuidAt(s, from, end)) return null;
  return { start: from, end, kind: "url_path_token" };
}

/** `/bot123456789:AA…/sendMessage`: a Telegram bot token in a URL path. */
function telegramBot(s: Scan, i: number): SecretSpan | null {
  const from = i + 4;
  const digitsEnd = s.runEnd(DIGIT, from);
  if (digitsEnd - from < 8 || digitsEnd - from > 10 || s.code(digitsEnd) !== 58) return null;
  const end = s.runEnd(B64URL, digitsEnd + 1);
  return end - (digitsEnd + 1) >= 35 ? { start: from, end, kind: "telegram_bot_token" } : null;
}

/** The rule for one candidate word at `i`, or null when it is not a credential there. */
function candidateRule(s: Scan, i: number, word: string): SecretSpan | null {
  switch (word) {
    case "-----BEGIN ":
      return pem(s, i);
    case "eyJ":
      return jwt(s, i);
    case "=":
    case ":":
      return assignment(s, i);
    case "://":
      return urlUserInfo(s, i);
    case "vault:":
    case "op://":
    case "doppler://":
    case "infisical://":
    case "sm://":
    case "berglas://":
      return reference(s, i, word);
    case "secretsmanager:":
    case "secretmanager:":
    case "ssm-secure:":
      return managerReference(s, i, word);
    case "@Microsoft.KeyVault(":
      return keyVaultReference(s, i, word);
    case "{{":
    case "${":
      return template(s, i);
    case "jdbc:oracle:thin:":
    case "sqlplus":
      return userSlashPassword(s, i, word);
    case "/bot":
      return telegramBot(s, i) ?? pathSegment(s, i);
    case "/":
      return pathSegment(s, i);
    case "--":
      return longFlag(s, i);
    case "-p":
    case "-u":
    case "-U":
    case "-a":
      return shortFlag(s, i, word);
    case "SG.":
      return sendgrid(s, i);
    case "hooks.slack.com/services/":
      return webhook(s, i, word, "slack_webhook");
    case "/api/webhooks/":
      return webhook(s, i, word, "discord_webhook");
  }
  const rule = PREFIX_RULES[word];
  if (rule) return prefixToken(s, i, word, rule);
  if (AWS_PREFIXES.has(word) || (word === "A3T" && UPALNUM(s.code(i + 3)))) return awsKeyId(s, i);
  if (word === "bearer" || word === "basic" || word === "token") return scheme(s, i, word);
  return null;
}

/**
 * Every credential in `text`, left to right, not overlapping. Linear in `text.length` (see the module comment).
 * @param text any string (an attribute value, a key, free text).
 */
export function findSecretSpans(text: string): SecretSpan[] {
  return scanWithCost(text).spans;
}

/**
 * {@link findSecretSpans} with what it cost: candidate words found, and characters looked at by the rules (each
 * bounded by a constant times the text length: the linearity test counts them instead of timing).
 */
export function scanWithCost(
  text: string,
  vaultLane = false,
): { spans: SecretSpan[]; candidates: number; steps: number } {
  const spans: SecretSpan[] = [];
  const s = new Scan(text, vaultLane);
  let candidates = 0;
  let i = 0;
  while (i < text.length) {
    const word = candidateAt(text, i);
    if (word === null || (vaultLane && !PLACEHOLDER_WORDS.has(word))) {
      i++;
      continue;
    }
    candidates++;
    const span = candidateRule(s, i, word);
    if (span && span.end > span.start) {
      spans.push(span);
      s.floor = span.end;
      i = Math.max(span.end, i + 1);
    } else {
      i++;
    }
  }
  return { spans, candidates, steps: s.steps };
}

/** The candidate words of placeholders (the vault lane's own pass reads only these). */
const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set([
  "{{",
  "${",
  "vault:",
  "op://",
  "doppler://",
  "infisical://",
  "sm://",
  "berglas://",
  "secretsmanager:",
  "secretmanager:",
  "ssm-secure:",
  "@Microsoft.KeyVault(",
]);

/**
 * Placeholders of secret managers and templates in `text` as the vault lane reads them (./vault.ts): those every
 * scan finds, and `${env:X}` / `{{ env.X }}` too. Left to right; linear, like {@link findSecretSpans}.
 */
export function findVaultLanePlaceholders(text: string): SecretSpan[] {
  return scanWithCost(text, true).spans;
}

/** `text` with each span replaced by {@link REDACTED}. */
export function applySpans(text: string, spans: SecretSpan[]): string {
  if (!spans.length) return text;
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + REDACTED;
    at = span.end;
  }
  return out + text.slice(at);
}
