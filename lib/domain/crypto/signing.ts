/**
 * Ed25519 signatures over RFC 8785 canonical JSON (docs/concepts.md#checkpoints-and-signatures), with node:crypto.
 * Keys are identified by their RFC 7638 JWK thumbprint.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign, verify } from "node:crypto";
import { canonicalJson, sha256Hex } from "./canonical";

export type PublicJwk = { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; alg: "EdDSA"; use: "sig" };

export type SigningKey = {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** RFC 7638 thumbprint (base64url sha256 of the required JWK members). */
  kid: string;
};

/** Builds a signing key from a PKCS#8 PEM string or base64 PKCS#8 DER. @throws Error when not an Ed25519 key. */
export function signingKeyFromString(material: string): SigningKey {
  const trimmed = material.trim();
  const privateKey = trimmed.startsWith("-----BEGIN")
    ? createPrivateKey(trimmed)
    : createPrivateKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "pkcs8" });
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw new Error("CUSTODY_SIGNING_KEY must be an Ed25519 private key (PKCS#8 PEM)");
  }
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, kid: thumbprint(publicKey) };
}

/** A new Ed25519 key pair; returns the key and its PKCS#8 PEM for storage. */
export function generateSigningKey(): { key: SigningKey; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  return { key: { privateKey, publicKey, kid: thumbprint(publicKey) }, pem };
}

function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: "jwk" }) as { crv: string; kty: string; x: string };
  // RFC 7638 §3.2: required members in lexicographic order, no whitespace.
  const json = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return Buffer.from(sha256Hex(json), "hex").toString("base64url");
}

/** The public half as a JWK (RFC 8037 OKP), for `GET /api/v1/signing-keys`. */
export function publicJwk(key: SigningKey): PublicJwk {
  const jwk = key.publicKey.export({ format: "jwk" }) as { x: string };
  return { kty: "OKP", crv: "Ed25519", x: jwk.x, kid: key.kid, alg: "EdDSA", use: "sig" };
}

export type SignedDocument = { canonical: string; digest: string; signature: string; kid: string };

/** Signs the canonical JSON of `value`: returns canonical text, sha256 hex digest and base64url signature. */
export function signCanonical(value: unknown, key: SigningKey): SignedDocument {
  const canonical = canonicalJson(value);
  const signature = sign(null, Buffer.from(canonical, "utf8"), key.privateKey).toString("base64url");
  return { canonical, digest: sha256Hex(canonical), signature, kid: key.kid };
}

/**
 * Verifies a signature over the canonical JSON of `value` and, when given, that its digest matches.
 * @param publicKey a KeyObject or a public JWK (as served by `/api/v1/signing-keys`).
 * @returns false on any mismatch or malformed signature; never throws for bad input.
 */
export function verifyCanonical(
  value: unknown,
  signature: string,
  publicKey: KeyObject | { kty: string; crv: string; x: string },
  expectedDigest?: string,
): boolean {
  try {
    const canonical = canonicalJson(value);
    if (expectedDigest !== undefined && sha256Hex(canonical) !== expectedDigest) return false;
    const key =
      publicKey instanceof KeyObject
        ? publicKey
        : createPublicKey({ key: { kty: publicKey.kty, crv: publicKey.crv, x: publicKey.x }, format: "jwk" });
    return verify(null, Buffer.from(canonical, "utf8"), key, Buffer.from(signature, "base64url"));
  } catch {
    return false;
  }
}
