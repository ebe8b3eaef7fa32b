/**
 * Members of a workspace as Settings shows them, and what owners and admins do with them: change a role, remove
 * a member (their sessions end at once; their past decisions stay in the audit log under their email), and lift
 * a sign-in lock — anyone who knows an email can lock it at their own address by guessing wrong, and an owner must
 * be able to see that and lift it. Invitations (adding people) are in ./invitations.ts; the rules shared by all of
 * these in ./member-rules.ts.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import { authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { assertMayTouchOwnerRole, hasOtherOwner, lastOwnerError, lockWorkspace, roleSchema } from "./member-rules";
import { endSessionsInTenant } from "./sessions";
import { MAX_EMAIL_SIGN_IN_FAILURES, MAX_SIGN_IN_FAILURES, SIGN_IN_WINDOW_MINUTES } from "./sign-in-limits";
import { ALL_SOURCES } from "./sign-in-throttle";
import type { VerbContext } from "../context";

/**
 * A member is locked while one of their email's throttle rows has used up its window: {@link MAX_SIGN_IN_FAILURES}
 * failures from one address (locked there), or {@link MAX_EMAIL_SIGN_IN_FAILURES} across all (locked at every address
 * that failed; an address with no failures is still checked). It ends with that window.
 */
export type SignInLock = { failures: number; locked_until: string };

export type MemberView = {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  /** True for a removed member (kept so their past decisions keep a name). */
  revoked: boolean;
  /** Set while sign-in is refused for this member's email from some address (even with the right password). */
  locked: SignInLock | null;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const WINDOW = sql`make_interval(mins => ${SIGN_IN_WINDOW_MINUTES})`;
/** A throttle row (alias `s`) that is locked now. */
const LOCKED_ROW = sql`s.window_started_at > now() - ${WINDOW}
  and s.failures >= case when s.source = ${ALL_SOURCES} then ${MAX_EMAIL_SIGN_IN_FAILURES}::int else ${MAX_SIGN_IN_FAILURES}::int end`;

/**
 * Members of the actor's tenant with their roles and sign-in lock, active ones first.
 * @throws DomainError forbidden
 */
export async function listMembersForActor({ db, actor }: VerbContext): Promise<MemberView[]> {
  authorize(actor, "settings.read");
  const rows = await queryRows<{
    user_id: string;
    email: string;
    name: string;
    role: Role;
    revoked: boolean;
    failures: string | number | null;
    locked_until: string | null;
  }>(
    db,
    sql`select u.id as user_id, u.email, u.name, m.role, (m.revoked_at is not null) as revoked,
               f.failures, ${isoUtc(sql`f.until`)} as locked_until
        from memberships m join users u on u.id = m.user_id
        left join lateral (
          select max(s.failures) as failures, max(s.window_started_at + ${WINDOW}) as until
          from sign_in_throttle s where s.email = u.email and ${LOCKED_ROW}
        ) f on true
        where m.tenant_id = ${actor.tenantId}
        order by m.revoked_at nulls first, u.email
        limit 1000`,
  );
  return rows.map((r) => ({
    user_id: r.user_id,
    email: r.email,
    name: r.name,
    role: r.role,
    revoked: r.revoked,
    locked:
      !r.revoked && r.failures != null && r.locked_until
        ? { failures: Number(r.failures), locked_until: r.locked_until }
        : null,
  }));
}

export type UnlockResult = { unlocked: true; user_id: string; email: string; failures: number; audit_seq: number };

/**
 * Lifts the sign-in lock of an active member of the actor's tenant: forgets the failed sign-ins recorded for
 * their email at every address, so the right password works again at once. The throttle itself stays. Writes
 * `member.unlocked` to the audit log in the same transaction.
 * @throws DomainError forbidden (role), not_found (no active member with this id in the tenant — also another
 *   tenant's member), conflict (the member is not locked; nothing changed).
 */
export async function unlockMember({ db, actor }: VerbContext, { userId }: { userId: string }): Promise<UnlockResult> {
  authorize(actor, "members.unlock");
  if (!UUID.test(userId)) throw notFound("Member");
  return db.transaction(async (tx) => {
    const [member] = await queryRows<{ email: string }>(
      tx,
      sql`select u.email from memberships m join users u on u.id = m.user_id
          where m.tenant_id = ${actor.tenantId} and m.user_id = ${userId} and m.revoked_at is null`,
    );
    if (!member) throw notFound("Member");
    const locked = await queryRows<{ failures: number; until: string }>(
      tx,
      sql`select s.failures, ${isoUtc(sql`(s.window_started_at + ${WINDOW})`)} as until
          from sign_in_throttle s where s.email = ${member.email} and ${LOCKED_ROW}`,
    );
    if (!locked.length) {
      throw new DomainError(
        "conflict",
        `${member.email} is not locked out (fewer than ${MAX_SIGN_IN_FAILURES} failed sign-ins from any address in the last ${SIGN_IN_WINDOW_MINUTES} minutes); there is nothing to unlock.`,
      );
    }
    await tx.execute(sql`delete from sign_in_throttle where email = ${member.email}`);
    const failures = Math.max(...locked.map((r) => Number(r.failures)));
    const lockedUntil = locked
      .map((r) => r.until)
      .sort()
      .at(-1)!;
    const audit = await appendAudit(tx, actor, {
      action: "member.unlocked",
      target: `user:${userId}`,
      details: { email: member.email, failures, locked_until: lockedUntil },
    });
    return { unlocked: true, user_id: userId, email: member.email, failures, audit_seq: audit.seq };
  });
}

/** Body of `PATCH /api/v1/settings/members/{user_id}`. */
export const changeRoleBodySchema = z.strictObject({ role: roleSchema });

export type RoleChangeResult = {
  user_id: string;
  email: string;
  role: Role;
  previous_role: Role;
  changed: boolean;
  audit_seq: number | null;
};

/**
 * Gives an active member another role (a body `{role}`). Takes effect on the member's next request (roles are
 * read per request). Writes `member.role_changed`; asking for the role they already have changes nothing.
 * @throws DomainError forbidden (role), validation_failed (422), not_found (no active member with this id here,
 *   also another tenant's), not_allowed (an admin touching the owner role), last_owner (409: demoting the only owner).
 */
export async function changeMemberRole(
  { db, actor }: VerbContext,
  { userId, body }: { userId: string; body: unknown },
): Promise<RoleChangeResult> {
  authorize(actor, "members.manage");
  if (!UUID.test(userId)) throw notFound("Member");
  const parsed = changeRoleBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { role } = parsed.data;
  return db.transaction(async (tx) => {
    await lockWorkspace(tx, actor.tenantId);
    const member = await activeMember(tx, actor.tenantId, userId);
    if (member.role === role) {
      return { user_id: userId, email: member.email, role, previous_role: role, changed: false, audit_seq: null };
    }
    assertMayTouchOwnerRole(
      actor,
      { from: member.role, to: role },
      member.role === "owner" ? "change an owner's role" : "make someone an owner",
    );
    if (member.role === "owner" && !(await hasOtherOwner(tx, actor.tenantId, userId))) {
      throw lastOwnerError(`${member.email} is the only owner and cannot become ${role}`);
    }
    const updated = await queryRows(
      tx,
      sql`update memberships set role = ${role}
          where tenant_id = ${actor.tenantId} and user_id = ${userId} and revoked_at is null and role = ${member.role}
          returning 1`,
    );
    if (!updated.length)
      throw new DomainError("conflict", `${member.email}'s membership changed meanwhile; reload and try again.`);
    const audit = await appendAudit(tx, actor, {
      action: "member.role_changed",
      target: `user:${userId}`,
      details: { email: member.email, from: member.role, to: role },
    });
    return {
      user_id: userId,
      email: member.email,
      role,
      previous_role: member.role,
      changed: true,
      audit_seq: audit.seq,
    };
  });
}

export type RemoveResult = {
  removed: true;
  user_id: string;
  email: string;
  role: Role;
  sessions_ended: number;
  audit_seq: number;
};

/**
 * Removes a member from the actor's workspace: the membership is marked removed (kept, so the audit log and past
 * decisions keep their name), their sessions in this workspace end at once, and open invitations for their email
 * here are withdrawn. Writes `member.removed`. A person may remove themselves unless they are the last owner.
 * @throws DomainError forbidden (role), not_found (no active member with this id here, also another tenant's),
 *   not_allowed (an admin removing an owner), last_owner (409).
 */
export async function removeMember({ db, actor }: VerbContext, { userId }: { userId: string }): Promise<RemoveResult> {
  authorize(actor, "members.manage");
  if (!UUID.test(userId)) throw notFound("Member");
  return db.transaction(async (tx) => {
    await lockWorkspace(tx, actor.tenantId);
    const member = await activeMember(tx, actor.tenantId, userId);
    assertMayTouchOwnerRole(actor, { from: member.role }, "remove an owner");
    if (member.role === "owner" && !(await hasOtherOwner(tx, actor.tenantId, userId))) {
      throw lastOwnerError(`${member.email} is the only owner and cannot be removed`);
    }
    const updated = await queryRows(
      tx,
      sql`update memberships set revoked_at = now()
          where tenant_id = ${actor.tenantId} and user_id = ${userId} and revoked_at is null
          returning 1`,
    );
    if (!updated.length) throw notFound("Member");
    const ended = await endSessionsInTenant(tx, actor.tenantId, userId, "member_removed");
    await tx.execute(sql`update invitations set withdrawn_at = now()
                         where tenant_id = ${actor.tenantId} and email = ${member.email} and accepted_at is null and withdrawn_at is null`);
    const audit = await appendAudit(tx, actor, {
      action: "member.removed",
      target: `user:${userId}`,
      details: { email: member.email, role: member.role, sessions_ended: ended },
    });
    return {
      removed: true,
      user_id: userId,
      email: member.email,
      role: member.role,
      sessions_ended: ended,
      audit_seq: audit.seq,
    };
  });
}

async function activeMember(tx: Db, tenantId: string, userId: string): Promise<{ email: string; role: Role }> {
  const [row] = await queryRows<{ email: string; role: Role }>(
    tx,
    sql`select u.email, m.role from memberships m join users u on u.id = m.user_id
        where m.tenant_id = ${tenantId} and m.user_id = ${userId} and m.revoked_at is null`,
  );
  if (!row) throw notFound("Member");
  return row;
}
