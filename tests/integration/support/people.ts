/**
 * People of a test tenant: signing one in by role, adding one more.
 * Everything is per test: no shared mutable state.
 */
import type { Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { ensureMembership, ensureUser } from "@/lib/domain/tenancy/people";
import { rid, signIn, type TestTenant } from "../helpers";

/** The cookie auth of the tenant's user with `role`, signed in through next-auth. */
export async function signInAs(t: TestTenant, role: Role): Promise<{ cookie: string }> {
  const user = t.users[role];
  if (!user) throw new Error(`tenant ${t.slug} has no ${role}`);
  return { cookie: await signIn(user.email, t.password) };
}

/**
 * Adds one more person with `role` to a test tenant (same password as the tenant's other users), e.g. a second
 * responder. @returns the new user's email.
 */
export async function addPerson(db: Db, t: TestTenant, role: Role): Promise<string> {
  const email = `${role}-extra-${rid()}@${t.slug}.test`;
  const userId = await ensureUser(db, email, `Extra ${role}`, t.password);
  await ensureMembership(db, t.tenantId, userId, role);
  return email;
}
