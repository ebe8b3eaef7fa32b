/**
 * Cheap superset tests: false means "no rule can find a credential here", so the scan (./scan.ts) and the JSON walk
 * (./redact-json.ts) can be skipped. Used on every string before scanning it, and by the ingest hot path on the
 * serialized attrs of every event (lib/domain/events/ingest.ts `fastPrepare`).
 *
 * Linear: alternations of fixed words, each followed at most by fixed-length classes, a look-behind of at most eight
 * characters, or a run of one class that its word cannot start (so runs of different matches never overlap); the
 * long-flag test is such a pattern plus a substring search for `--`.
 *
 * Sound on JSON text because every word below is free of characters JSON escapes, so it survives `JSON.stringify`
 * unchanged; where a rule needs a word boundary that an escape could hide (`\nsk-…` is written `\nsk-`), the
 * escapes count as boundaries; and a string that holds JSON with `\u` or `\/` escapes (which could spell a word
 * the raw text does not show) always counts. A unit test (tests/unit/ingest-fast-path.test.ts) checks the superset
 * property on every shape of the corpus, in keys, values, embedded JSON and behind escapes.
 */
import { SECRET_ENDINGS, WEAK_SECRET_ENDINGS } from "./names";

/** Start of text, a character that is not a word character, or a JSON escape that stands for one. */
const L = String.raw`(?:^|[^A-Za-z0-9_]|\\[bfnrt]|\\u00[0-9a-fA-F]{2})`;

/** Token prefixes with the fewest characters each rule needs after them (case-insensitive, classes widened). */
const PREFIXED = [
  String.raw`eyJ[a-z0-9_-]{8}`,
  String.raw`sk-[a-z0-9_-]{20}`,
  String.raw`[sr]k_(?:live|test)_[a-z0-9]{16}`,
  String.raw`whsec_[a-z0-9]{24}`,
  String.raw`gh[pousr]_[a-z0-9_]{30}`,
  String.raw`github_pat_[a-z0-9_]{22}`,
  String.raw`gl(?:pat|dt|rt|ptt)-[a-z0-9_-]{20}`,
  String.raw`rck_[a-z0-9_-]{20}`,
  String.raw`(?:xox[abprse]|xapp)-[a-z0-9-]{10}`,
  String.raw`aiza[a-z0-9_-]{35}`,
  String.raw`a(?:3t[a-z0-9]|kia|sia|gpa|ida|roa|ipa|npa|nva)[a-z0-9]{16}`,
  String.raw`npm_[a-z0-9]{36}`,
  String.raw`hf_[a-z]{34}`,
  String.raw`sg\.[a-z0-9_-]{16}`,
  String.raw`do[por]_v1_[0-9a-f]{64}`,
  String.raw`shp(?:at|ca|pa|ss)_[0-9a-f]{32}`,
  String.raw`hv[sbr]\.[a-z0-9_-]{24}`,
  String.raw`ya29\.[a-z0-9_-]{20}`,
  String.raw`age-secret-key-1[a-z0-9]{58}`,
  String.raw`pypi-AgEIcHlwaS5vcmc`,
  String.raw`lin_api_[a-z0-9]{32}`,
  String.raw`gsk_[a-z0-9]{52}`,
  String.raw`(?:dapi|sk|key-)[0-9a-f]{32}`,
  String.raw`rci_[a-z0-9_-]{20}`,
  String.raw`dp\.(?:pt|st|ct|sa|scim|audit)\.`,
  String.raw`ops_eyJ`,
  String.raw`gl(?:sa|c)_`,
  String.raw`sntry[su]_`,
  String.raw`pmak-`,
  String.raw`atatt3`,
  String.raw`fo1_`,
  String.raw`dt0c01\.`,
  String.raw`ez[at]k`,
  String.raw`akcp`,
  String.raw`pul-[0-9a-f]{40}`,
  String.raw`nrak-`,
  String.raw`(?:vault|op|doppler|infisical|sm|berglas):`,
  String.raw`sqlplus`,
  String.raw`(?:bearer|basic|token)(?:\s|\\[bfnrt]|\\u00)`,
];

/** Where a command-line flag may start: the start, a space, a quote, or a JSON escape that stands for a space. */
const F = String.raw`(?:^|[\s"']|\\[bfnrt]|\\u00[0-9a-fA-F]{2})`;

/** Prefixed tokens after a word boundary. */
const MAYBE_PREFIXED_VALUE = new RegExp(`${L}(?:${PREFIXED.join("|")})`, "i");

/**
 * Other value shapes: PEM keys, user info in URLs, webhook URLs, placeholders, path segments, command-line flags. Each
 * alternative starts with a fixed character, so the search skips ahead to those (a separate pattern from
 * {@link MAYBE_PREFIXED_VALUE}, whose leading boundary matches almost anywhere).
 */
const MAYBE_OTHER_VALUE = new RegExp(
  [
    String.raw`-----BEGIN `,
    String.raw`:\/\/[^\s/?#@:]*[:@]`,
    String.raw`hooks\.slack\.com\/services\/`,
    String.raw`\/api\/webhooks\/`,
    // placeholders of secret managers and templates
    String.raw`\{\{|\$\{|secrets?manager:|ssm-secure:|@microsoft\.keyvault\(|jdbc:oracle:thin:`,
    // a path segment named like a credential (the next segment may be a token), a Telegram bot token
    String.raw`\/(?:api|tokens?|keys?|api[-_]?keys?|secrets?|passw(?:or)?d|hooks?|webhooks?|webhookb2|incomingwebhook|auth|access[-_]?token|sig|signature)\/`,
    String.raw`\/bot[0-9]{8}`,
    // short flags that carry a password (mysql -p…, sshpass -p, curl -u, redis-cli -a) and curl --user
    // (the fixed `-` first and the boundary looked at behind it, so the search skips ahead to each `-`)
    `-[pua](?<=${F}-[pua])`,
    String.raw`--(?:proxy-)?user(?:[ \t="]|\\t)`,
  ].join("|"),
  "i",
);

const pattern = (endings: readonly (readonly string[])[]) => endings.map((words) => words.join("[-_. ]*")).join("|");
/** Every secret name ending (./names.ts), strong and weak, as a pattern of its words. */
const ENDINGS = pattern([...SECRET_ENDINGS, ...WEAK_SECRET_ENDINGS]);
/** What may stand between a name and its separator: quotes, spaces, backslashes, JSON escapes. */
const GAP = "(?:[\\s\"'`\\\\]|\\\\[bfnrt]|\\\\u00[0-9a-fA-F]{2})*";

/**
 * A long flag named like a secret followed by its value (`--password S3cret`, or the next argument of an argv array:
 * `"--pass", "…"`): with {@link hasDoubleDash}.
 */
const MAYBE_SECRET_FLAG = new RegExp(`(?:${ENDINGS})(?:[ \\t"]|\\\\t)`, "iu");
const hasDoubleDash = (text: string) => text.includes("--");

/**
 * A secret name (./names.ts) where a rule reads it: before `=` or `:` (assignments, headers, `"name": …` inside a
 * string), or, for strong names, closing a JSON string (a key `"password":`, a header pair `["Cookie", …]`; weak
 * names make no header pairs, so `"result": "pass"` stays on the hot path). Quotes, spaces and backslashes may stand
 * between. Unicode case-insensitive, as `toLowerCase` is (a Kelvin sign reads as `k`).
 */
const MAYBE_SECRET_NAME = new RegExp(
  `(?:${pattern(SECRET_ENDINGS)})${GAP}[=:"]|(?:${pattern(WEAK_SECRET_ENDINGS)})${GAP}[=:]`,
  "iu",
);

/** JSON inside a JSON string that uses `\u` or `\/` escapes: the words it spells are not visible in the text. */
const ESCAPED_EMBEDDED = /\\\\(?:u|\/)/;

/** A JSON document's own text uses `\u` or `\/` escapes. */
const ESCAPED_TEXT = /\\(?:u|\/)/;

/** Superset test for one string: false when no value rule and no assignment can match in it. */
export function maybeSecretText(text: string): boolean {
  return (
    MAYBE_PREFIXED_VALUE.test(text) ||
    MAYBE_OTHER_VALUE.test(text) ||
    MAYBE_SECRET_NAME.test(text) ||
    (hasDoubleDash(text) && MAYBE_SECRET_FLAG.test(text))
  );
}

/** Superset test for the raw text of a JSON document held in a string (its own escapes may spell any word). */
export function mayHoldSecretInDocument(text: string): boolean {
  return maybeSecretText(text) || ESCAPED_TEXT.test(text);
}

/**
 * A cheap superset test over the JSON text of a value (as `JSON.stringify` writes it): false means
 * `redactJson` (./redact-json.ts) would change nothing in that value, so the caller can keep the text as it is.
 */
export function mayHoldSecret(jsonText: string): boolean {
  return maybeSecretText(jsonText) || ESCAPED_EMBEDDED.test(jsonText);
}
