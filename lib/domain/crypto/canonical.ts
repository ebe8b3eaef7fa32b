/**
 * RFC 8785 (JSON Canonicalization Scheme) and digests. The `canonicalize` package implements RFC 8785;
 * hashing is node:crypto.
 */
import { createHash } from "node:crypto";
import canonicalizeImpl from "canonicalize";

/**
 * RFC 8785 canonical JSON of a JSON value.
 * @throws TypeError when the value cannot be represented (undefined at top level, non-finite numbers).
 */
export function canonicalJson(value: unknown): string {
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
