/**
 * Seeding a tenant with people and a runtime key (the demo, and tests that need a fresh tenant).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { sha256Hex } from "../crypto/canonical";
import { displayPrefix, isAcceptableKey, newApiKey } from "./api-keys";
import { ensureMembership, ensureTenant, ensureUser } from "./people";

export type SeedInput = {
  slug: string;
  name: string;
  users: ReadonlyArray<{ email: string; name: string; role: Role }>;
  password: string;
  /** A key to register (e.g. a saved demo key); when absent or of another tenant, a new one is made. */
  apiKey?: string;
  apiKeyName?: string;
};

/**
 * Idempotently creates the tenant, users (password set to `password`) and memberships, and makes sure the
 * runtime key is registered. Returns the tenant id, user ids by email and the key in clear (to hand to a runtime).
 */
export async function seedTenant(
  db: Db,
  input: SeedInput,
): Promise<{ tenantId: string; userIds: Record<string, string>; apiKey: string }> {
  const tenantId = await ensureTenant(db, input.slug, input.name);
  const userIds: Record<string, string> = {};
  for (const u of input.users) {
    const id = await ensureUser(db, u.email, u.name, input.password);
    await ensureMembership(db, tenantId, id, u.role);
    userIds[u.email] = id;
  }
  if (input.apiKey && !isAcceptableKey(input.apiKey)) {
    throw new Error("The runtime API key must be 20–200 printable characters without spaces.");
  }
  const apiKey = input.apiKey ?? newApiKey();
  const hash = sha256Hex(apiKey);
  const existing = await queryRows<{ tenant_id: string }>(
    db,
    sql`select tenant_id from api_keys where key_hash = ${hash}`,
  );
  if (existing[0] && existing[0].tenant_id !== tenantId) {
    throw new Error("This runtime API key is already registered for another tenant.");
  }
  if (existing.length === 0) {
    await db.execute(sql`
      insert into api_keys (tenant_id, name, display_prefix, key_hash)
      values (${tenantId}, ${input.apiKeyName ?? "runtime"}, ${displayPrefix(apiKey)}, ${hash})`);
  } else {
    await db.execute(sql`update api_keys set revoked_at = null where tenant_id = ${tenantId} and key_hash = ${hash}`);
  }
  return { tenantId, userIds, apiKey };
}
