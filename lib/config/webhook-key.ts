/**
 * The key that seals webhook and notification signing secrets at rest (decision 0040): `CUSTODY_SECRETS_KEY` (32
 * bytes, base64 or base64url), else derived with HKDF-SHA256 from the session secret (`NEXTAUTH_SECRET`, or the
 * embedded database's generated one), so every server of a deployment derives the same key without more set-up.
 */
import { hkdfSync } from "node:crypto";
import { authSecret } from "./secrets";

/** @throws Error when `CUSTODY_SECRETS_KEY` is set but is not 32 bytes, or no session secret can be found. */
export function secretsSealKey(): Buffer {
  const env = process.env.CUSTODY_SECRETS_KEY;
  if (env) {
    const key = Buffer.from(env.trim(), "base64");
    if (key.length !== 32) throw new Error("CUSTODY_SECRETS_KEY must be 32 bytes, base64-encoded.");
    return key;
  }
  return Buffer.from(hkdfSync("sha256", authSecret(), "run-custody", "webhook secrets v1", 32));
}
