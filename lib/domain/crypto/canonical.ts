/**
 * RFC 8785 (JSON Canonicalization Scheme) and digests. The `canonicalize` package implements RFC 8785;
 * hashing is node:crypto.
 */
import { createHash } from "node:crypto";
import canonicalizeImpl from "canonicalize";

/** Deepest nesting {@link canonicalJson} accepts: the `canonicalize` package recurses. */
export const MAX_CANONICAL_DEPTH = 64;

/** True when `value` nests containers deeper than `limit` levels (walked with an explicit stack, no recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node as Record<string, unknown>)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * RFC 8785 canonical JSON of a JSON value.
 * @throws TypeError when the value cannot be represented (undefined at top level, non-finite numbers, nesting deeper
 *   than {@link MAX_CANONICAL_DEPTH}).
 */
export function canonicalJson(value: unknown): string {
  if (nestsDeeperThan(value, MAX_CANONICAL_DEPTH))
    throw new TypeError(`value nests deeper than ${MAX_CANONICAL_DEPTH} levels`);
  const out = canonicalizeImpl(value);
  if (typeof out !== "string") throw new TypeError("value has no canonical JSON form");
  return out;
}

/** Lower-case hex sha256 of a UTF-8 string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** sha256 hex of the RFC 8785 canonical JSON of `value`. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The payload digest of a tool call: sha256 hex of the RFC 8785 JSON of `{"tool": <tool>, "arguments": <arguments>}`
 * (arguments absent → null). The formula runtimes use for an intent's `payload_digest` (lib/sdk `toolPayloadDigest`
 * computes the same), that approvals bind to, and that the intent route checks a sent `payload` against
 * (docs/concepts.md#payload-digest).
 * @throws TypeError when the arguments have no canonical JSON form.
 */
export function toolCallDigest(tool: string, args: unknown): string {
  return canonicalDigest({ tool, arguments: args ?? null });
}

/**
 * A payload digest as compared: lower case, without a `sha256:` prefix (`sha256:AB…` and `ab…` are one digest).
 */
export function normalDigest(digest: string): string {
  return digest.replace(/^sha256:/i, "").toLowerCase();
}
