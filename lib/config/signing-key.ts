/**
 * Where the server's checkpoint-signing key comes from:
 * 1. `CUSTODY_SIGNING_KEY` (Ed25519 PKCS#8 PEM, or base64 DER);
 * 2. otherwise, only on the embedded database, `<CUSTODY_DATA_DIR>/signing-key.pem`, generated with mode 0600
 *    on first use.
 * With `DATABASE_URL` set and no `CUSTODY_SIGNING_KEY`, loading fails: a shared database needs a shared key.
 */
import fs from "node:fs";
import path from "node:path";
import { dataDir } from "@/db/paths";
import { generateSigningKey, signingKeyFromString, type SigningKey } from "@/lib/domain/crypto/signing";
import { createFileOnce } from "./files";

const cache = globalThis as unknown as { __custodySigningKey?: SigningKey };

/** The process-wide signing key. @throws Error when no key is configured for PostgreSQL. */
export function getSigningKey(): SigningKey {
  if (cache.__custodySigningKey) return cache.__custodySigningKey;
  const fromEnv = process.env.CUSTODY_SIGNING_KEY;
  let key: SigningKey;
  if (fromEnv && fromEnv.trim()) {
    key = signingKeyFromString(fromEnv);
  } else if (!process.env.DATABASE_URL) {
    key = loadOrCreateKeyFile(path.join(/*turbopackIgnore: true*/ dataDir(), "signing-key.pem"));
  } else {
    throw new Error(
      "CUSTODY_SIGNING_KEY is not set. Generate one with `npm run keygen` and set it (PKCS#8 PEM) for every server.",
    );
  }
  cache.__custodySigningKey = key;
  return key;
}

/** Reads an Ed25519 PEM from `file`, or generates one there (mode 0600) when absent. */
export function loadOrCreateKeyFile(file: string): SigningKey {
  if (fs.existsSync(file)) return signingKeyFromString(fs.readFileSync(file, "utf8"));
  const { key, pem } = generateSigningKey();
  // Created whole or not at all (a kill mid-write must not leave an unreadable key); another process may win the race.
  if (createFileOnce(file, pem)) return key;
  return signingKeyFromString(fs.readFileSync(file, "utf8"));
}
