/**
 * A fresh tenant for one test: random slug, one user per requested role (random emails, one shared random
 * password) and a runtime API key. Used by the integration helpers and the Playwright fixtures.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db";
import { ROLES, type Role } from "@/db/schema/enums";
import { seedTenant } from "@/lib/domain/tenancy/seed";
import { rid } from "./factories";

export type TestUser = { email: string; userId: string };

export type TestTenant = {
  tenantId: string;
  slug: string;
  /** The runtime API key in clear (send as `Authorization: Bearer <key>`). */
  apiKey: string;
  /** Password of every user of this tenant. */
  password: string;
  users: Partial<Record<Role, TestUser>>;
};

/** A tenant whose users include every role (what createTestTenant makes by default). */
export type FullTestTenant = TestTenant & { users: Record<Role, TestUser> };

/**
 * Seeds a new tenant through `seedTenant`.
 * @param opts.roles the roles to create one user for each; default every role.
 */
export async function createTestTenant(db: Db): Promise<FullTestTenant>;
export async function createTestTenant(db: Db, opts: { roles: readonly Role[] }): Promise<TestTenant>;
export async function createTestTenant(db: Db, opts: { roles?: readonly Role[] } = {}): Promise<TestTenant> {
  const roles = opts.roles ?? ROLES;
  const slug = `t-${rid()}`;
  const password = `pw-${rid(12)}`;
  const people = roles.map((role) => ({ role, email: `${role}-${rid()}@${slug}.test`, name: `Test ${role}` }));
  const seeded = await seedTenant(db, { slug, name: `Test tenant ${slug}`, users: people, password });
  const users: Partial<Record<Role, TestUser>> = {};
  for (const p of people) users[p.role] = { email: p.email, userId: seeded.userIds[p.email]! };
  return { tenantId: seeded.tenantId, slug, apiKey: seeded.apiKey, password, users };
}

/**
 * Revokes a membership in the database directly, as a setup step (the person can no longer sign in to this tenant).
 * The product revokes through removeMember (lib/domain/tenancy/members.ts), which also writes the audit row.
 */
export async function revokeMembership(db: Db, tenantId: string, userId: string): Promise<void> {
  await db.execute(
    sql`update memberships set revoked_at = now() where tenant_id = ${tenantId} and user_id = ${userId}`,
  );
}
