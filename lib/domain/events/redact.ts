/**
 * Secret redaction and storability checks for what runtimes and people send (docs/concepts.md#redaction: secrets
 * are redacted before storage and the redaction is counted). The rules live in lib/domain/secrets/ (names, the
 * linear-time scan, the superset prefilter, the JSON walk); this module keeps the names the rest of the code
 * imports.
 */
export { mayHoldSecret } from "../secrets/prefilter";
export { findSecrets, redactJson, redactString, refuseSecrets } from "../secrets/redact";

/** Largest nesting depth of JSON accepted in events and records. */
export const MAX_JSON_DEPTH = 32;

/** A NUL, or a UTF-16 surrogate half without its partner (each lookaround looks at one character: linear). */
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why a JSON value cannot be stored as PostgreSQL text/jsonb, or null when it can: NUL characters, unpaired
 * UTF-16 surrogates, or nesting deeper than {@link MAX_JSON_DEPTH}. Checks keys and values; never recurses
 * deeper than the limit.
 */
export function unstorableJson(value: unknown): string | null {
  const bad = (s: string) => {
    const m = UNSTORABLE_CHAR.exec(s);
    if (!m) return null;
    return m[0] === "\u0000"
      ? "contains a NUL character (\\u0000), which cannot be stored"
      : "contains an unpaired UTF-16 surrogate, which is not valid Unicode";
  };
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
    for (const k of Object.keys(node as Record<string, unknown>)) {
      const why = bad(k) ?? walk((node as Record<string, unknown>)[k], depth + 1);
      if (why) return why;
    }
    return null;
  };
  return walk(value, 0);
}
