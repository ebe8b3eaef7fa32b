/**
 * The one redaction applied to everything a runtime or a person sends that is stored or shown
 * (docs/concepts.md#redaction: secrets never reach the database, the logs or a page; redacted and counted; decision
 * 0008).
 *
 * On a JSON value:
 * - every string (and every key) is scanned for credential shapes (./scan.ts);
 * - a field whose name is a secret name (./names.ts: `password`, `X-Api-Key`, `sessionToken` …) has its value
 *   redacted whatever its type: a string, a number, or every string and number inside an object or array
 *   (`{"password": 12345678}`, `{"cookie": {"sid": "…"}}`); true, false and null stay;
 * - a field whose name is a weak secret name (`pass`, `pwd`, `auth`, `credentials` …) has a string value (or each
 *   string of an array) redacted when it looks like a credential (./names.ts `weakValueLooksSecret`); its numbers
 *   stay, and objects under it are judged by their own field names (`{"credentials": [{"name": "records-api"}]}`);
 * - header pairs: `["Cookie", "sid=…"]` and `{"name": "X-Api-Key", "value": "…"}` (also `key`/`header`/`field`
 *   for the name) redact the value;
 * - an array of strings with flags is also read as one command line (`["mysql", "-pS3cret"]`, `["sshpass", "-p",
 *   "…"]`): what the command-line rules find inside one argument is redacted there;
 * - a string that holds a JSON document (model tool calls carry their arguments as a string:
 *   `{"arguments": "{\"password\": \"…\"}"}`) is parsed, redacted inside, and written back with `JSON.stringify`
 *   when anything changed (a document with numbers it could not keep exactly, repeated keys or deep nesting is
 *   scanned as text instead, so nothing else in it changes).
 * Places that are signed or chained refuse instead of redacting: {@link findSecrets} lists what would be redacted.
 */
import { DomainError } from "../errors";
import { EMBEDDED_JSON_SEGMENT, formatPath, parseJsonText } from "../json/text";
import { secretNameKind, weakValueLooksSecret } from "./names";
import { mayHoldSecretInDocument, maybeSecretText } from "./prefilter";
import { applySpans, findSecretSpans, REDACTED, type SecretSpan } from "./scan";

export { REDACTED };

export type Redaction = { path: string; kind: string };

/** Shorter than the shortest text any value rule matches (`a://b:c@`, `cookie:x`, `token=abc`). */
const MIN_SECRET_LENGTH = 8;
const NO_KINDS: string[] = [];
/** Deepest nesting a walk follows; the API refuses deeper JSON before it gets here (lib/server/route.ts). */
export const MAX_WALK_DEPTH = 256;
/** Levels of JSON-in-a-string-in-JSON that are parsed; deeper ones are scanned as text. */
const MAX_EMBEDDED_LEVELS = 3;
/** Deepest nesting of a JSON document inside a string that is parsed. */
const EMBEDDED_MAX_DEPTH = 32;

/**
 * Redacts credentials in one string. Returns the new string and the kinds found (one entry per replacement).
 * Linear in the length of the string.
 */
export function redactString(input: string): { value: string; kinds: string[] } {
  if (input.length < MIN_SECRET_LENGTH || !maybeSecretText(input)) return { value: input, kinds: NO_KINDS };
  const spans = findSecretSpans(input);
  if (!spans.length) return { value: input, kinds: NO_KINDS };
  return { value: applySpans(input, spans), kinds: spans.map((s) => s.kind) };
}

/** True when `s` (trimmed) starts with `{` or `[` and ends with `}` or `]`. */
function looksLikeJson(s: string): boolean {
  let a = 0;
  let b = s.length - 1;
  while (a <= b && s.charCodeAt(a) <= 32) a++;
  while (b >= a && s.charCodeAt(b) <= 32) b--;
  if (b - a < 1) return false;
  const first = s.charCodeAt(a);
  const last = s.charCodeAt(b);
  return (first === 123 && last === 125) || (first === 91 && last === 93);
}

/** Defines an own property, so that a key named `__proto__` stays a key. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

const NAME_FIELDS = ["name", "key", "header", "field"] as const;

/** 0: ordinary, 1: secret whatever it holds, 2: a weak secret name's value (strings judged by their look). */
type Secrecy = 0 | 1 | 2;
const secrecyOfName = (name: string): Secrecy => {
  const kind = secretNameKind(name);
  return kind === "strong" ? 1 : kind === "weak" ? 2 : 0;
};

/**
 * `{"name": "Cookie", "value": …}`: the header-pair object form, for strong secret names (a weak name such as
 * `pass` is far more often a value there: `{"name": "result", "value": "pass"}`).
 */
function isSecretPairObject(obj: Record<string, unknown>): boolean {
  if (!Object.prototype.hasOwnProperty.call(obj, "value")) return false;
  for (const f of NAME_FIELDS) {
    const v = Object.prototype.hasOwnProperty.call(obj, f) ? obj[f] : undefined;
    if (typeof v === "string" && secrecyOfName(v) === 1) return true;
  }
  return false;
}

/** Kinds of span that a command line spreads over its arguments. */
const COMMAND_KINDS = new Set(["command_line_password", "connection_password"]);

/**
 * Credentials in an argv array (`["mysql", "-pS3cret"]`, `["sshpass", "-p", "S3cret", "ssh", "host"]`, `["curl",
 * "-u", "admin:pw"]`) by element: the arguments are read as one command line (an argument holding whitespace is
 * quoted), and spans of the command-line rules that lie within one argument are returned for it. Null when the
 * array is not all strings or has no flag. Linear in the total length of the arguments.
 */
function commandSpans(args: unknown[]): Map<number, SecretSpan[]> | null {
  if (args.length < 2) return null;
  let flags = false;
  for (const a of args) {
    if (typeof a !== "string") return null;
    if (a.charCodeAt(0) === 45 || a === "sqlplus") flags = true;
  }
  if (!flags) return null;
  const starts: number[] = [];
  let line = "";
  for (const a of args as string[]) {
    const quote = WHITESPACE.test(a) ? (a.includes('"') ? "'" : '"') : "";
    line += (line ? " " : "") + quote;
    starts.push(line.length);
    line += a + quote;
  }
  let found: Map<number, SecretSpan[]> | null = null;
  let k = 0;
  for (const span of findSecretSpans(line)) {
    if (!COMMAND_KINDS.has(span.kind)) continue;
    while (k + 1 < starts.length && starts[k + 1]! <= span.start) k++;
    const from = starts[k]!;
    if (span.end > from + (args[k] as string).length) continue;
    found ??= new Map();
    const list = found.get(k) ?? [];
    list.push({ start: span.start - from, end: span.end - from, kind: span.kind });
    found.set(k, list);
  }
  return found;
}
const WHITESPACE = /\s/;

/**
 * A JSON value with secrets replaced by `[REDACTED]`, and where they were. The input is never modified: changed
 * objects and arrays are copied, unchanged subtrees are shared with the input.
 * @param value any JSON value (objects, arrays, strings, numbers, booleans, null).
 * @throws DomainError validation_failed when the value nests deeper than {@link MAX_WALK_DEPTH}.
 */
export function redactJson<T>(value: T): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const segments: Array<string | number> = [];
  const pathNow = () => formatPath(segments);

  const walkString = (node: string, secret: Secrecy, level: number): string => {
    if (secret === 1 || (secret === 2 && weakValueLooksSecret(node))) {
      if (node.length === 0 || node === REDACTED) return node;
      redactions.push({ path: pathNow(), kind: "secret_field" });
      return REDACTED;
    }
    if (level < MAX_EMBEDDED_LEVELS && looksLikeJson(node) && mayHoldSecretInDocument(node)) {
      const inner = embedded(node, level);
      if (inner !== null) return inner;
    }
    const { value: out, kinds } = redactString(node);
    if (kinds.length) {
      const path = pathNow();
      for (const kind of kinds) redactions.push({ path, kind });
    }
    return out;
  };

  /** The redacted text of a JSON document held in a string, or null to scan it as text. */
  const embedded = (text: string, level: number): string | null => {
    const read = parseJsonText(text, EMBEDDED_MAX_DEPTH);
    if (!("value" in read)) return null;
    const parsed = read.value;
    segments.push(EMBEDDED_JSON_SEGMENT);
    const before = redactions.length;
    const out = walk(parsed, 0, 0, level + 1);
    segments.pop();
    return redactions.length === before ? text : JSON.stringify(out);
  };

  const walk = (node: unknown, secret: Secrecy, depth: number, level: number): unknown => {
    if (typeof node === "string") return walkString(node, secret, level);
    if (typeof node === "number") {
      if (secret !== 1) return node;
      redactions.push({ path: pathNow(), kind: "secret_field" });
      return REDACTED;
    }
    if (node === null || typeof node !== "object") return node;
    if (depth >= MAX_WALK_DEPTH) {
      throw new DomainError(
        "validation_failed",
        `${pathNow() || "The value"} is nested deeper than ${MAX_WALK_DEPTH} levels.`,
      );
    }
    if (Array.isArray(node)) {
      // ["Cookie", "sid=…"]: a header name (a strong secret name) and its value.
      const pair = secret === 0 && node.length === 2 && typeof node[0] === "string" && secrecyOfName(node[0]) === 1;
      const argv = secret === 0 ? commandSpans(node) : null;
      let copy: unknown[] | null = null;
      for (let i = 0; i < node.length; i++) {
        segments.push(i);
        let item = node[i];
        const inArgv = argv?.get(i);
        if (inArgv) {
          const path = pathNow();
          for (const span of inArgv) redactions.push({ path, kind: span.kind });
          item = applySpans(item as string, inArgv);
        }
        const v = walk(item, secret !== 0 ? secret : pair && i === 1 ? 1 : 0, depth + 1, level);
        segments.pop();
        if (v !== node[i] && !copy) copy = node.slice();
        if (copy) copy[i] = v;
      }
      return copy ?? node;
    }
    const obj = node as Record<string, unknown>;
    // Under a weak name an object is judged by its own field names.
    const inherited: Secrecy = secret === 1 ? 1 : 0;
    const pairObject = inherited === 0 && isSecretPairObject(obj);
    let copy: Record<string, unknown> | null = null;
    for (const k of Object.keys(obj)) {
      segments.push(k);
      const named = secrecyOfName(k);
      const childSecret: Secrecy = inherited === 1 || named === 1 || (pairObject && k === "value") ? 1 : named;
      const v = walk(obj[k], childSecret, depth + 1, level);
      // A secret can arrive as a key too ({"Bearer abc…": "x"}): rename it.
      const keyCheck = redactString(k);
      let key = k;
      if (keyCheck.kinds.length) {
        for (const kind of keyCheck.kinds) redactions.push({ path: pathNow(), kind: `${kind}_in_key` });
        key = keyCheck.value;
        for (
          let n = 2;
          Object.prototype.hasOwnProperty.call(obj, key) || (copy && Object.prototype.hasOwnProperty.call(copy, key));
          n++
        ) {
          key = `${keyCheck.value}#${n}`;
        }
      }
      segments.pop();
      if ((v !== obj[k] || key !== k) && !copy) copy = { ...obj };
      if (copy) {
        if (key !== k) delete copy[k];
        setOwn(copy, key, v);
      }
    }
    return copy ?? node;
  };

  const out = walk(value, 0, 0, 0) as T;
  return { value: out, redactions };
}

/** Paths of values that look like credentials, without changing anything (for places that refuse them). */
export function findSecrets(value: unknown): Redaction[] {
  return redactJson(value).redactions;
}

/**
 * Throws a 422 naming every path that holds a credential: for what is signed (checkpoint records) or kept in the
 * audit chain (intents, receipts, reconcile evidence), where a secret must be refused rather than stored.
 * @param what how the message names the value, e.g. "The task record".
 * @param hint what to send instead.
 * @throws DomainError validation_failed with `details.fields[{path, message}]`.
 */
export function refuseSecrets(
  value: unknown,
  what: string,
  hint = "keep secrets in your vault and send a reference",
): void {
  const found = findSecrets(value);
  if (!found.length) return;
  const first = found[0]!;
  throw new DomainError(
    "validation_failed",
    `${first.path || what}: looks like a credential value (${first.kind}). ${what} is stored for good: ${hint}.`,
    { fields: found.map((s) => ({ path: s.path, message: `looks like a credential value (${s.kind})` })) },
  );
}
