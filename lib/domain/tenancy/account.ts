/**
 * A signed-in person's own account: the workspaces they belong to, switching the one their session works in,
 * and changing their password (the current one required).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import { authorize, type Actor, type UserActor } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { givenPasswordSchema, hashPassword, newPasswordSchema, verifyPassword, weakPasswordReason } from "./passwords";
import { endOtherSessions } from "./sessions";
import { claimSignInCheck, recordSignInSuccess, throttleMessage } from "./sign-in-throttle";
import type { VerbContext } from "../context";

export type WorkspaceView = { tenant_id: string; slug: string; name: string; role: Role; current: boolean };

export type AccountView = {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  workspace: WorkspaceView;
  workspaces: WorkspaceView[];
};

/** The session's person must be a person (runtime keys have no account). */
function person(actor: Actor): UserActor {
  authorize(actor, "account.manage");
  return actor as UserActor;
}

/** The workspaces `userId` is an active member of, by name. */
export async function listWorkspaces(db: Db, userId: string, currentTenantId?: string): Promise<WorkspaceView[]> {
  const rows = await queryRows<{ tenant_id: string; slug: string; name: string; role: Role }>(
    db,
    sql`select t.id as tenant_id, t.slug, t.name, m.role from memberships m join tenants t on t.id = m.tenant_id
        where m.user_id = ${userId} and m.revoked_at is null order by lower(t.name), t.slug limit 200`,
  );
  return rows.map((r) => ({ ...r, current: r.tenant_id === currentTenantId }));
}

/**
 * The actor's account: who they are, the workspace this session works in, and every workspace they may switch to.
 * @throws DomainError forbidden (a runtime key).
 */
export async function accountFor({ db, actor }: VerbContext): Promise<AccountView> {
  const me = person(actor);
  const [user] = await queryRows<{ name: string }>(db, sql`select name from users where id = ${me.userId}`);
  const workspaces = await listWorkspaces(db, me.userId, me.tenantId);
  const current = workspaces.find((w) => w.current)!;
  return {
    user_id: me.userId,
    email: me.email,
    name: user?.name ?? me.email,
    role: me.role,
    workspace: current,
    workspaces,
  };
}

/** Body of `PUT /api/v1/me/workspace`: the workspace's slug. */
export const switchWorkspaceBodySchema = z.strictObject({
  workspace: z
    .string({ error: () => "workspace is required (the slug of a workspace you belong to)" })
    .trim()
    .min(1, "workspace must not be empty")
    .max(100),
});

/**
 * Makes this session work in another workspace the person belongs to (every later page and API call of the
 * session then works there). Changes no workspace's data, so no audit entry.
 * @throws DomainError forbidden (a runtime key, or an actor without a session), validation_failed, not_found
 *   (no active membership in a workspace with that slug).
 */
export async function switchWorkspace({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<WorkspaceView> {
  const me = person(actor);
  if (!me.sessionHash) throw new DomainError("forbidden", "Switching workspace needs a signed-in session.");
  const parsed = switchWorkspaceBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const [row] = await queryRows<{ tenant_id: string; slug: string; name: string; role: Role }>(
    db,
    sql`update sessions s set tenant_id = m.tenant_id, selected_at = now()
        from memberships m join tenants t on t.id = m.tenant_id
        where s.id_hash = ${me.sessionHash} and s.ended_at is null and s.expires_at > now() and s.user_id = ${me.userId}
          and m.user_id = s.user_id and m.revoked_at is null and t.slug = ${parsed.data.workspace}
        returning t.id as tenant_id, t.slug, t.name, m.role`,
  );
  if (!row) throw notFound(`Workspace "${parsed.data.workspace}"`);
  return { ...row, current: true };
}

/** Body of `POST /api/v1/me/password`. */
export const changePasswordBodySchema = z.strictObject({
  current_password: givenPasswordSchema("current_password"),
  new_password: newPasswordSchema("new_password"),
});

export type PasswordChangeResult = { changed: true; sessions_ended: number; audit_seq: number };

/**
 * Changes the actor's own password. The current password is checked through the sign-in throttle (so a stolen
 * session cannot guess it faster than the sign-in form); every other session of the person ends; writes
 * `user.password_changed` to the current workspace's audit log (never a password or hash).
 * @param opts.source the client address, for the throttle.
 * @throws DomainError forbidden (a runtime key), validation_failed (422: rules of the new password; a wrong
 *   current password names `current_password`), too_many_attempts (429), conflict (changed meanwhile).
 */
export async function changePassword(
  { db, actor }: VerbContext,
  { body, ...opts }: { body: unknown; source: string },
): Promise<PasswordChangeResult> {
  const me = person(actor);
  const parsed = changePasswordBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { current_password, new_password } = parsed.data;
  const weak = weakPasswordReason(new_password, me.email);
  if (weak) throw validationError([{ path: ["new_password"], message: `new_password ${weak}` }]);
  if (new_password === current_password) {
    throw validationError([
      { path: ["new_password"], message: "new_password is the same as the current one; choose another" },
    ]);
  }
  const claim = await claimSignInCheck(db, me.email, opts.source);
  if (!claim.ok)
    throw new DomainError("too_many_attempts", throttleMessage(claim), {
      retry_after_seconds: claim.retryAfterSeconds,
    });
  const [user] = await queryRows<{ password_hash: string }>(
    db,
    sql`select password_hash from users where id = ${me.userId}`,
  );
  if (!user || !(await verifyPassword(user.password_hash, current_password))) {
    throw validationError([{ path: ["current_password"], message: "current_password is not right" }]);
  }
  await recordSignInSuccess(db, me.email, opts.source);
  const newHash = await hashPassword(new_password);
  return db.transaction(async (tx) => {
    const updated = await queryRows(
      tx,
      sql`update users set password_hash = ${newHash} where id = ${me.userId} and password_hash = ${user.password_hash} returning 1`,
    );
    if (!updated.length)
      throw new DomainError("conflict", "Your password was changed meanwhile (another tab?); sign in again.");
    const ended = await endOtherSessions(tx, me.userId, me.sessionHash, "password_changed");
    const audit = await appendAudit(tx, me, {
      action: "user.password_changed",
      target: `user:${me.userId}`,
      details: { email: me.email, sessions_ended: ended },
    });
    return { changed: true, sessions_ended: ended, audit_seq: audit.seq };
  });
}
