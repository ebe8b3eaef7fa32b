/**
 * RFC 8785 canonical JSON, sha256 digests, Ed25519 signatures over canonical JSON, and RFC 7638 key ids.
 * Vectors from RFC 8785 (§3.2.2, §3.2.3, Appendix B) and RFC 8037 (Appendix A).
 */
import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalDigest, canonicalJson, MAX_CANONICAL_DEPTH, sha256Hex } from "@/lib/domain/crypto/canonical";
import {
  generateSigningKey,
  publicJwk,
  signCanonical,
  signingKeyFromString,
  verifyCanonical,
} from "@/lib/domain/crypto/signing";

// RFC 8037 Appendix A.1: the Ed25519 example key.
const RFC8037_JWK = {
  kty: "OKP",
  crv: "Ed25519",
  d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
  x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
};
const RFC8037_PEM = createPrivateKey({ key: RFC8037_JWK, format: "jwk" })
  .export({ format: "pem", type: "pkcs8" })
  .toString();

describe("canonicalJson (RFC 8785)", () => {
  it("matches the RFC's primitive-data example", () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it("sorts keys by UTF-16 code units, recursively", () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`) as Record<string, string>;
    // Read the order from the text: JSON.parse would move the integer-like key "1" first again.
    const text = canonicalJson(input);
    const positions = [
      "Carriage Return",
      "One",
      "Control",
      "Latin Small Letter O With Diaeresis",
      "Euro Sign",
      "Emoji: Grinning Face",
      "Hebrew Letter Dalet With Dagesh",
    ].map((v) => text.indexOf(v));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);

    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it.each([
    [0, "0"],
    [-0, "0"],
    [1.0, "1"],
    [-1.5, "-1.5"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [9007199254740992, "9007199254740992"],
    [1e20, "100000000000000000000"],
    [1e21, "1e+21"],
    [0.000001, "0.000001"],
    [1e-7, "1e-7"],
    [295147905179352830000, "295147905179352830000"],
  ])("formats the number %s as %s", (n, text) => {
    expect(canonicalJson(n)).toBe(text);
    expect(canonicalJson({ n })).toBe(`{"n":${text}}`);
  });

  it("refuses values JSON cannot carry", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow();
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow();
    expect(() => canonicalJson(undefined)).toThrow();
  });

  it("drops undefined members like JSON does, and escapes only what it must", () => {
    expect(canonicalJson({ a: undefined, b: "é\u2028<" })).toBe('{"b":"é\u2028<"}');
  });
});

describe("digests", () => {
  it("hashes the canonical text with sha256 (hex)", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(canonicalDigest({ b: 2, a: 1 })).toBe(sha256Hex('{"a":1,"b":2}'));
    expect(canonicalDigest({ a: 1, b: 2 })).toBe(canonicalDigest({ b: 2, a: 1 }));
  });
});

describe("Ed25519 over canonical JSON", () => {
  const record = {
    task_id: "case-918",
    principal: "tenant/acme:user/42",
    phase: "writing",
    side_effects: { update_record: { idempotency_key: "rec-918-v1", status: "unknown" } },
  };

  it("reproduces the RFC 8037 A.4 signature with a key loaded from PEM", () => {
    const key = signingKeyFromString(RFC8037_PEM);
    const signingInput = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
    expect(sign(null, Buffer.from(signingInput), key.privateKey).toString("base64url")).toBe(
      "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
    );
  });

  it("has the RFC 8037 A.3 JWK thumbprint as key id, stable across loads and formats", () => {
    const fromPem = signingKeyFromString(RFC8037_PEM);
    expect(fromPem.kid).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    const der = createPrivateKey(RFC8037_PEM).export({ format: "der", type: "pkcs8" }).toString("base64");
    expect(signingKeyFromString(der).kid).toBe(fromPem.kid);
    expect(publicJwk(fromPem)).toEqual({
      kty: "OKP",
      crv: "Ed25519",
      x: RFC8037_JWK.x,
      kid: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k",
      alg: "EdDSA",
      use: "sig",
    });
    const other = generateSigningKey().key;
    expect(other.kid).not.toBe(fromPem.kid);
    expect(other.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("signs and verifies, with the public key object or the published JWK", () => {
    const { key } = generateSigningKey();
    const signed = signCanonical(record, key);
    expect(signed.canonical).toBe(canonicalJson(record));
    expect(signed.digest).toBe(canonicalDigest(record));
    expect(signed.kid).toBe(key.kid);
    expect(verifyCanonical(record, signed.signature, key.publicKey, signed.digest)).toBe(true);
    expect(verifyCanonical(record, signed.signature, publicJwk(key))).toBe(true);
    // key order of the value does not matter: the canonical form is signed
    const reordered = {
      side_effects: record.side_effects,
      phase: record.phase,
      principal: record.principal,
      task_id: record.task_id,
    };
    expect(verifyCanonical(reordered, signed.signature, publicJwk(key), signed.digest)).toBe(true);
  });

  it("fails when one byte of the record changes", () => {
    const { key } = generateSigningKey();
    const signed = signCanonical(record, key);
    const canonical = Buffer.from(signed.canonical, "utf8");
    for (const i of [0, 10, Math.floor(canonical.length / 2), canonical.length - 2]) {
      const changed = Buffer.from(canonical);
      changed[i] = changed[i]! ^ 0x01;
      let value: unknown;
      try {
        value = JSON.parse(changed.toString("utf8"));
      } catch {
        continue; // not JSON any more: nothing to verify
      }
      expect(verifyCanonical(value, signed.signature, key.publicKey), `byte ${i}`).toBe(false);
    }
    expect(verifyCanonical({ ...record, phase: "writinh" }, signed.signature, key.publicKey)).toBe(false);
    expect(verifyCanonical(record, signed.signature, key.publicKey, "0".repeat(64))).toBe(false);
  });

  it("fails when one byte of the signature changes, or with another key", () => {
    const { key } = generateSigningKey();
    const signed = signCanonical(record, key);
    const raw = Buffer.from(signed.signature, "base64url");
    expect(raw.length).toBe(64);
    for (const i of [0, 31, 63]) {
      const bad = Buffer.from(raw);
      bad[i] = bad[i]! ^ 0x80;
      expect(verifyCanonical(record, bad.toString("base64url"), key.publicKey), `byte ${i}`).toBe(false);
    }
    expect(verifyCanonical(record, "not-a-signature", key.publicKey)).toBe(false);
    expect(verifyCanonical(record, signed.signature, generateSigningKey().key.publicKey)).toBe(false);
  });

  it("refuses a key that is not Ed25519", () => {
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" })
      .privateKey.export({ format: "pem", type: "pkcs8" })
      .toString();
    expect(() => signingKeyFromString(ec)).toThrow(/Ed25519/);
  });
});

describe("canonical JSON of deep values", () => {
  it("refuses nesting past its limit before the recursive canonicalization, and accepts the limit", () => {
    const nest = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(() => canonicalJson(nest(100_000))).toThrow(/deeper than/);
    expect(canonicalJson(nest(MAX_CANONICAL_DEPTH + 1))).toBe(
      `${"[".repeat(MAX_CANONICAL_DEPTH + 1)}1${"]".repeat(MAX_CANONICAL_DEPTH + 1)}`,
    );
  });
});
