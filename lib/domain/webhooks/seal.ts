/**
 * Signing secrets of webhook sources and notification endpoints (decision 0040). Standard Webhooks signs with
 * HMAC-SHA256, so the server must hold the secret itself, not a hash of it: it is kept sealed with AES-256-GCM under a
 * server key (lib/config/webhook-key.ts), bound to its row (tenant, kind, owner) as additional data, so a sealed value
 * copied to another row or workspace does not open. Shown once when created; never listed, logged or audited.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** 32 bytes. */
export type SealKey = Buffer;

/** A new `whsec_…` secret: 24 random bytes, base64 (the Standard Webhooks format). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** `v1.<iv>.<tag>.<ciphertext>` (base64url) of `plain`, bound to `binding` (e.g. `<tenant>:source:<name>`). */
export function sealSecret(key: SealKey, binding: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(binding, "utf8"));
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

/** The secret sealed by {@link sealSecret} under the same key and binding, or null when it does not open. */
export function openSecret(key: SealKey, binding: string, sealed: string): string | null {
  const [v, iv, tag, ct] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || ct === undefined) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(binding, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** The binding of a webhook source's secret. */
export const sourceBinding = (tenantId: string, source: string) => `${tenantId}:webhook_source:${source}`;
/** The binding of a notification endpoint's secret. */
export const endpointBinding = (tenantId: string, endpointId: string) =>
  `${tenantId}:notification_endpoint:${endpointId}`;
