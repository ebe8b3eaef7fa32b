/**
 * Members of a tenant as Settings shows them, with the sign-in lock the throttle in people.ts may have put on
 * them, and the owner's way out of that lock: anyone who knows an email can lock its account for
 * {@link SIGN_IN_WINDOW_MINUTES} minutes by guessing wrong, so an owner must be able to see it and lift it.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { DomainError, notFound } from "../errors";
import { MAX_SIGN_IN_FAILURES, SIGN_IN_WINDOW_MINUTES } from "./sign-in-limits";

/** A member is locked while {@link MAX_SIGN_IN_FAILURES} failures lie in the window; it ends when the oldest of them leaves it. */
export type SignInLock = { failures: number; locked_until: string };

export type MemberView = {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  revoked: boolean;
  /** Set while sign-in is refused for this member's email (even with the right password). */
  locked: SignInLock | null;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Members of the actor's tenant with their roles and sign-in lock, active ones first.
 * @throws DomainError forbidden
 */
export async function listMembersForActor(db: Db, actor: Actor): Promise<MemberView[]> {
  authorize(actor, "settings.read");
  const rows = await queryRows<{
    user_id: string;
    email: string;
    name: string;
    role: Role;
    revoked: boolean;
    failures: string | number;
    locked_until: string | null;
  }>(
    db,
    sql`select u.id as user_id, u.email, u.name, m.role, (m.revoked_at is not null) as revoked,
               f.failures, ${isoUtc(sql`(f.nth_newest + make_interval(mins => ${SIGN_IN_WINDOW_MINUTES}))`)} as locked_until
        from memberships m join users u on u.id = m.user_id
        left join lateral (
          select count(*) as failures,
                 (array_agg(s.failed_at order by s.failed_at desc))[${MAX_SIGN_IN_FAILURES}] as nth_newest
          from sign_in_failures s
          where s.email = u.email and s.failed_at > now() - make_interval(mins => ${SIGN_IN_WINDOW_MINUTES})
        ) f on true
        where m.tenant_id = ${actor.tenantId}
        order by m.revoked_at nulls first, u.email
        limit 1000`,
  );
  return rows.map((r) => {
    const failures = Number(r.failures ?? 0);
    return {
      user_id: r.user_id,
      email: r.email,
      name: r.name,
      role: r.role,
      revoked: r.revoked,
      locked: !r.revoked && failures >= MAX_SIGN_IN_FAILURES && r.locked_until ? { failures, locked_until: r.locked_until } : null,
    };
  });
}

export type UnlockResult = { unlocked: true; user_id: string; email: string; failures: number; audit_seq: number };

/**
 * Lifts the sign-in lock of an active member of the actor's tenant: forgets the failed sign-ins recorded for
 * their email, so the right password works again at once. The throttle itself stays. Writes `member.unlock`
 * to the audit log in the same transaction.
 * @throws DomainError forbidden (role), not_found (no active member with this id in the tenant — also another
 *   tenant's member), conflict (the member is not locked; nothing changed).
 */
export async function unlockMember(db: Db, actor: Actor, userId: string): Promise<UnlockResult> {
  authorize(actor, "members.unlock");
  if (!UUID.test(userId)) throw notFound("Member");
  return db.transaction(async (tx) => {
    const [member] = await queryRows<{ email: string }>(
      tx,
      sql`select u.email from memberships m join users u on u.id = m.user_id
          where m.tenant_id = ${actor.tenantId} and m.user_id = ${userId} and m.revoked_at is null`,
    );
    if (!member) throw notFound("Member");
    const removed = await queryRows<{ recent: boolean; failed_at: string }>(
      tx,
      sql`delete from sign_in_failures where email = ${member.email}
          returning (failed_at > now() - make_interval(mins => ${SIGN_IN_WINDOW_MINUTES})) as recent, ${isoUtc("failed_at")} as failed_at`,
    );
    const recent = removed.filter((r) => r.recent);
    if (recent.length < MAX_SIGN_IN_FAILURES) {
      // Rolls the delete back: a member who is not locked keeps their (few) recorded failures.
      throw new DomainError("conflict", `${member.email} is not locked out (${recent.length} failed sign-ins in the last ${SIGN_IN_WINDOW_MINUTES} minutes); there is nothing to unlock.`);
    }
    const newest = recent.map((r) => r.failed_at).sort().reverse();
    const lockedUntil = new Date(Date.parse(newest[MAX_SIGN_IN_FAILURES - 1]!) + SIGN_IN_WINDOW_MINUTES * 60_000).toISOString();
    const audit = await appendAudit(tx, actor, {
      action: "member.unlock",
      target: `user:${userId}`,
      details: { email: member.email, failures: recent.length, locked_until: lockedUntil },
    });
    return { unlocked: true, user_id: userId, email: member.email, failures: recent.length, audit_seq: audit.seq };
  });
}
