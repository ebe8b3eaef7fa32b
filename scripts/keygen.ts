/**
 * `npm run keygen`: prints a new Ed25519 private key (PKCS#8 PEM) for `CUSTODY_SIGNING_KEY`, and its key id.
 * Give every server of one deployment the same key. The key id goes to stderr so stdout is just the PEM.
 */
import { generateSigningKey } from "@/lib/domain/crypto/signing";

const { key, pem } = generateSigningKey();
process.stdout.write(pem);
process.stderr.write(`key id (RFC 7638 thumbprint): ${key.kid}\n`);
