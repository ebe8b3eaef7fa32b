/**
 * Secret detection and redaction for event attributes and task records (DESIGN.md "Event": secrets are
 * redacted before storage and the redaction is counted).
 *
 * Two kinds of rule:
 * - value patterns, matched inside any string (and any object key): bearer and basic credentials, OpenAI/
 *   Anthropic-style `sk-` keys, Stripe keys, Google API keys, GitHub and Slack tokens, AWS access key ids, PEM
 *   private keys, JWTs, passwords in URLs, `name=value` assignments of secret names, vault placeholders;
 * - field names whose value is a secret whatever it looks like (`password`, `client_secret`,
 *   `aws_secret_access_key`, `authorization`, vault `placeholder` …). Names that merely contain such a word
 *   (`token_count`, `secret_name`, `credential_id`) are kept.
 */

export const REDACTED = "[REDACTED]";

type ValueRule = { kind: string; pattern: RegExp; replace: (match: string, ...groups: string[]) => string };

const VALUE_RULES: ValueRule[] = [
  {
    kind: "pem_private_key",
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g,
    replace: () => REDACTED,
  },
  {
    kind: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    replace: () => REDACTED,
  },
  {
    kind: "bearer_token",
    // A token has at least one digit: "Bearer authentication" is prose, "Bearer eyJ0eXAi…9" is a token.
    pattern: /\b([Bb]earer|BEARER|Token)(\s+)(?!\[REDACTED\])(?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{12,}=*/g,
    replace: (_m, word, space) => `${word}${space}${REDACTED}`,
  },
  {
    kind: "api_key",
    pattern: /\bsk-(?:[a-z]+-)*[A-Za-z0-9_-]{20,}/g,
    replace: () => REDACTED,
  },
  {
    kind: "github_token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b/g,
    replace: () => REDACTED,
  },
  {
    kind: "api_key",
    pattern: /\brck_[A-Za-z0-9_-]{20,}/g,
    replace: () => REDACTED,
  },
  {
    kind: "slack_token",
    pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
    replace: () => REDACTED,
  },
  {
    kind: "basic_credentials",
    // base64 of user:password always holds a digit, '+', '/' or '=' somewhere; "Basic authentication" does not.
    pattern: /\b(Basic)(\s+)(?!\[REDACTED\])(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2}/g,
    replace: (_m, word, space) => `${word}${space}${REDACTED}`,
  },
  {
    kind: "url_password",
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@]+):(?!\[REDACTED\])([^\s/@]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`,
  },
  {
    kind: "assigned_secret",
    // password=…, client_secret: "…", aws_secret_access_key=… (the value has a digit: "password: required" stays)
    pattern:
      /\b((?:aws_)?secret_access_key|client_secret|password|passwd|api[_-]?key|access[_-]?token|refresh[_-]?token)(\s*[=:]\s*)(["']?)(?!\[REDACTED\])(?=[^\s"'&,;]*\d)[^\s"'&,;]{6,}/gi,
    replace: (_m, name, sep, quote) => `${name}${sep}${quote}${REDACTED}`,
  },
  {
    kind: "api_key",
    pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g,
    replace: () => REDACTED,
  },
  {
    kind: "api_key",
    pattern: /\bAIza[0-9A-Za-z_-]{35}/g,
    replace: () => REDACTED,
  },
  {
    kind: "vault_placeholder",
    pattern: /\bvault:\/\/[^\s"'<>]+/g,
    replace: () => REDACTED,
  },
  {
    kind: "aws_access_key_id",
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g,
    replace: () => REDACTED,
  },
];

/** Field names (case-insensitive, `-` and `_` equivalent) whose values are always secrets. */
const SECRET_FIELD_NAMES = new Set(
  [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "client_secret",
    "secret_value",
    "api_key",
    "apikey",
    "access_token",
    "refresh_token",
    "id_token",
    "session_token",
    "auth_token",
    "bearer_token",
    "private_key",
    "authorization",
    "proxy_authorization",
    "cookie",
    "set_cookie",
    "aws_secret_access_key",
    "aws_session_token",
    "placeholder",
    "vault_placeholder",
    "token",
  ].map(normalizeName),
);

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/-/g, "_");
}

export type Redaction = { path: string; kind: string };

/**
 * A cheap superset test of every value rule: a string that does not match cannot contain a secret the rules
 * would replace, so most strings (ids, digests, hosts) skip the eight rule scans. Keep in step with VALUE_RULES.
 */
const MAYBE_SECRET =
  /-----BEGIN|eyJ|bearer|token(?:\s|\\[bfnrt]|\\u00)|(?:access|refresh)[_-]?token|basic|:\/\/[^\s/:@]+:[^\s/@]+@|vault:\/\/|(?:^|[^a-z0-9_]|\\[bfnrt]|\\u00[0-9a-f]{2})sk-|[rs]k_|AIza|secret|passw|api[_-]?key|gh[pousr]_|github_pat_|rck_|xox[abprs]-|AKIA|ASIA|AGPA|AIDA|AROA/i;
/** Shorter than the shortest string any value rule matches ("a://b:c@", "passwd=1xxxx" are longer). */
const MIN_SECRET_LENGTH = 8;
const NO_KINDS: string[] = [];

/**
 * Field names as a superset pattern over serialized JSON: matches every key (`"name":`) that is one of the
 * secret field names in any case (Unicode case folding, so a Kelvin sign counts as `k`) and with `-` or `_`.
 */
const SECRET_FIELD_TEXT = new RegExp(`"(?:${[...SECRET_FIELD_NAMES].map((n) => n.replace(/_/g, "[-_]")).join("|")})":`, "iu");

/**
 * A cheap superset test over the JSON text of a value (as `JSON.stringify` writes it): false means
 * {@link redactJson} would change nothing in that value, so the caller can keep the text as it is. True means
 * "maybe": run redactJson. Sound because every value rule and every field name contains a fixed word free of
 * characters JSON escapes, and that word survives serialization unchanged.
 */
export function mayHoldSecret(jsonText: string): boolean {
  return MAYBE_SECRET.test(jsonText) || SECRET_FIELD_TEXT.test(jsonText);
}

/** Redacts secrets in one string. Returns the new string and the kinds found (one entry per replacement). */
export function redactString(input: string): { value: string; kinds: string[] } {
  if (input.length < MIN_SECRET_LENGTH || !MAYBE_SECRET.test(input)) return { value: input, kinds: NO_KINDS };
  let value = input;
  const kinds: string[] = [];
  for (const rule of VALUE_RULES) {
    value = value.replace(rule.pattern, (...args: unknown[]) => {
      kinds.push(rule.kind);
      const match = args[0] as string;
      const groups = args.slice(1, -2).map((g) => (typeof g === "string" ? g : ""));
      return rule.replace(match, ...groups);
    });
  }
  return { value, kinds };
}

/**
 * Field-name check, cached (the same attribute names repeat across events).
 */
const secretFieldCache = new Map<string, boolean>();
function isSecretField(name: string): boolean {
  let hit = secretFieldCache.get(name);
  if (hit === undefined) {
    hit = SECRET_FIELD_NAMES.has(normalizeName(name));
    if (secretFieldCache.size < 10_000) secretFieldCache.set(name, hit);
  }
  return hit;
}

/**
 * A JSON value with secrets replaced by `[REDACTED]`, and where they were. The input is never modified: changed
 * objects and arrays are copied, unchanged subtrees are shared with the input.
 * @param value any JSON value (objects, arrays, strings, numbers, booleans, null).
 */
export function redactJson<T>(value: T): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  // Paths are built only when something is redacted; unchanged subtrees are returned as they are.
  const segments: Array<string | number> = [];
  const pathNow = () =>
    segments.reduce<string>((p, s) => (typeof s === "number" ? `${p}[${s}]` : p ? `${p}.${s}` : s), "");
  const walk = (node: unknown, fieldName: string | null): unknown => {
    if (typeof node === "string") {
      if (fieldName && node.length > 0 && node !== REDACTED && isSecretField(fieldName)) {
        redactions.push({ path: pathNow(), kind: "secret_field" });
        return REDACTED;
      }
      const { value: out, kinds } = redactString(node);
      if (kinds.length) {
        const path = pathNow();
        for (const kind of kinds) redactions.push({ path, kind });
      }
      return out;
    }
    if (Array.isArray(node)) {
      let copy: unknown[] | null = null;
      for (let i = 0; i < node.length; i++) {
        segments.push(i);
        const v = walk(node[i], fieldName);
        segments.pop();
        if (v !== node[i] && !copy) copy = node.slice();
        if (copy) copy[i] = v;
      }
      return copy ?? node;
    }
    if (node && typeof node === "object") {
      let copy: Record<string, unknown> | null = null;
      const obj = node as Record<string, unknown>;
      for (const k in obj) {
        if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
        segments.push(k);
        const v = walk(obj[k], k);
        // A secret can arrive as a key too ({"Bearer abc…": "x"}): rename it.
        const keyCheck = redactString(k);
        let key = k;
        if (keyCheck.kinds.length) {
          for (const kind of keyCheck.kinds) redactions.push({ path: pathNow(), kind: `${kind}_in_key` });
          key = keyCheck.value;
          for (let n = 2; Object.prototype.hasOwnProperty.call(obj, key) || (copy && Object.prototype.hasOwnProperty.call(copy, key)); n++) {
            key = `${keyCheck.value}#${n}`;
          }
        }
        segments.pop();
        if ((v !== obj[k] || key !== k) && !copy) copy = { ...obj };
        if (copy) {
          if (key !== k) delete copy[k];
          copy[key] = v;
        }
      }
      return copy ?? node;
    }
    return node;
  };
  const out = walk(value, null) as T;
  return { value: out, redactions };
}

/** Paths of values that look like credentials, without changing anything (used to reject task records). */
export function findSecrets(value: unknown): Redaction[] {
  return redactJson(value).redactions;
}

/** Largest nesting depth of JSON accepted in events and records. */
export const MAX_JSON_DEPTH = 32;

/**
 * Why a JSON value cannot be stored as PostgreSQL text/jsonb, or null when it can: NUL characters, unpaired
 * UTF-16 surrogates, or nesting deeper than {@link MAX_JSON_DEPTH}. Checks keys and values.
 */
export function unstorableJson(value: unknown): string | null {
  const bad = (s: string) =>
    s.includes("\u0000")
      ? "contains a NUL character (\\u0000), which cannot be stored"
      : /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)
        ? "contains an unpaired UTF-16 surrogate, which is not valid Unicode"
        : null;
  const walk = (node: unknown, depth: number): string | null => {
    if (typeof node === "string") return bad(node);
    if (node === null || typeof node !== "object") return null;
    if (depth > MAX_JSON_DEPTH) return `is nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (const item of node) {
        const why = walk(item, depth + 1);
        if (why) return why;
      }
      return null;
    }
    for (const k in node as Record<string, unknown>) {
      const why = bad(k) ?? walk((node as Record<string, unknown>)[k], depth + 1);
      if (why) return why;
    }
    return null;
  };
  return walk(value, 0);
}
