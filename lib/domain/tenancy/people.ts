/**
 * Tenants, users and memberships: creation (seed, settings), password check for sign-in, and the
 * membership lookup that turns a session into an actor.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { hashPassword, verifyPassword } from "./passwords";
import {
  claimSignInCheck,
  pruneSignInThrottle,
  recordSignInSuccess,
  throttleEmail,
  throttleMessage,
} from "./sign-in-throttle";

export { hashPassword };

/** Creates a tenant, or returns the existing one with this slug. */
export async function ensureTenant(db: Db, slug: string, name: string): Promise<string> {
  await db.execute(sql`insert into tenants (slug, name) values (${slug}, ${name}) on conflict (slug) do nothing`);
  const [row] = await queryRows<{ id: string }>(db, sql`select id from tenants where slug = ${slug}`);
  return row!.id;
}

/** Creates a user or updates the password of an existing one (email is case-insensitive). */
export async function ensureUser(db: Db, email: string, name: string, password: string): Promise<string> {
  const passwordHash = await hashPassword(password);
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`insert into users (email, name, password_hash) values (${email.toLowerCase()}, ${name}, ${passwordHash})
        on conflict (email) do update set password_hash = excluded.password_hash
        returning id`,
  );
  return row!.id;
}

/** Grants (or re-grants, clearing a revocation) a role in a tenant. */
export async function ensureMembership(db: Db, tenantId: string, userId: string, role: Role): Promise<void> {
  await db.execute(sql`
    insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${userId}, ${role})
    on conflict (tenant_id, user_id) do update set role = excluded.role, revoked_at = null`);
}

export type SignInResult =
  | { ok: true; userId: string; email: string; name: string }
  | { ok: false; reason: "bad_credentials" | "no_membership" }
  | { ok: false; reason: "throttled"; message: string; retryAfterSeconds: number };

/**
 * Checks an email + password and that the user still has an active membership somewhere. Each try first claims a
 * check from the sign-in throttle for this email and `source` (lib/domain/tenancy/sign-in-throttle.ts: one guarded
 * statement, counted in the database so every server sees it); a refused claim answers `throttled` without
 * verifying the password. Otherwise exactly one argon2 verification runs (against a dummy hash when the email is
 * unknown), and a right password gives the claimed failure back.
 * @param source the client address (lib/server/client-address.ts).
 */
export async function checkSignIn(db: Db, email: string, password: string, source = "unknown"): Promise<SignInResult> {
  const who = throttleEmail(email);
  const claim = await claimSignInCheck(db, who, source);
  if (!claim.ok)
    return {
      ok: false,
      reason: "throttled",
      message: throttleMessage(claim),
      retryAfterSeconds: claim.retryAfterSeconds,
    };
  const result = await verifySignIn(db, who, password);
  if (result.ok || result.reason === "no_membership") {
    // The password was right: the try was not a guess.
    await recordSignInSuccess(db, who, source);
  } else {
    await pruneSignInThrottle(db);
  }
  return result;
}

async function verifySignIn(db: Db, email: string, password: string): Promise<SignInResult> {
  const rows = await queryRows<{
    id: string;
    email: string;
    name: string;
    password_hash: string;
    active: number | string;
  }>(
    db,
    sql`select u.id, u.email, u.name, u.password_hash,
               (select count(*) from memberships m where m.user_id = u.id and m.revoked_at is null) as active
        from users u where u.email = ${email}`,
  );
  const user = rows[0];
  const ok = await verifyPassword(user?.password_hash, password);
  if (!user || !ok) return { ok: false, reason: "bad_credentials" };
  if (Number(user.active) === 0) return { ok: false, reason: "no_membership" };
  return { ok: true, userId: user.id, email: user.email, name: user.name };
}
