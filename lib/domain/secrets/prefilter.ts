/**
 * Cheap superset tests: false means "no rule can find a credential here", so the scan (./scan.ts) and the JSON walk
 * (./redact-json.ts) can be skipped. Used on every string before scanning it, and by the ingest hot path on the
 * serialized attrs of every event (lib/domain/events/ingest.ts `fastPrepare`).
 *
 * Linear: alternations of fixed words, each followed at most by fixed-length classes or by a run of one class
 * that its word cannot start (so runs of different matches never overlap).
 *
 * Sound on JSON text because every word below is free of characters JSON escapes, so it survives `JSON.stringify`
 * unchanged; where a rule needs a word boundary that an escape could hide (`\nsk-…` is written `\nsk-`), the
 * escapes count as boundaries; and a string that holds JSON with `\u` or `\/` escapes (which could spell a word
 * the raw text does not show) always counts. A unit test (tests/unit/ingest-fast-path.test.ts) checks the superset
 * property on every shape of the corpus, in keys, values, embedded JSON and behind escapes.
 */
import { SECRET_ENDINGS } from "./names";

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
  String.raw`vault:\/\/`,
  String.raw`(?:bearer|basic|token)(?:\s|\\[bfnrt]|\\u00)`,
];

/** Value shapes: prefixed tokens, PEM keys, user info in URLs, webhook URLs. */
export const MAYBE_SECRET_VALUE = new RegExp(
  [
    `${L}(?:${PREFIXED.join("|")})`,
    String.raw`-----BEGIN `,
    String.raw`:\/\/[^\s/?#@:]*[:@]`,
    String.raw`hooks\.slack\.com\/services\/`,
    String.raw`\/api\/webhooks\/`,
  ].join("|"),
  "i",
);

/**
 * A secret name (./names.ts) where a rule reads it: before `=` or `:` (assignments, headers, `"name": …` inside a
 * string), or closing a JSON string (a key `"password":`, a header pair `["Cookie", …]`). Quotes, spaces and
 * backslashes may stand between. Unicode case-insensitive, as `toLowerCase` is (a Kelvin sign reads as `k`).
 */
export const MAYBE_SECRET_NAME = new RegExp(
  `(?:${SECRET_ENDINGS.map((words) => words.join("[-_. ]*")).join("|")})(?:[\\s"'\`\\\\]|\\\\[bfnrt]|\\\\u00[0-9a-fA-F]{2})*[=:"]`,
  "iu",
);

/** JSON inside a JSON string that uses `\u` or `\/` escapes: the words it spells are not visible in the text. */
const ESCAPED_EMBEDDED = /\\\\(?:u|\/)/;

/** A JSON document's own text uses `\u` or `\/` escapes. */
const ESCAPED_TEXT = /\\(?:u|\/)/;

/** Superset test for one string: false when no value rule and no assignment can match in it. */
export function maybeSecretText(text: string): boolean {
  return MAYBE_SECRET_VALUE.test(text) || MAYBE_SECRET_NAME.test(text);
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
  return MAYBE_SECRET_VALUE.test(jsonText) || MAYBE_SECRET_NAME.test(jsonText) || ESCAPED_EMBEDDED.test(jsonText);
}
