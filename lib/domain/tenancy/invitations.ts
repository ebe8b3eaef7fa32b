/**
 * Invitations: an owner or admin adds a person by email with a role and gets a one-time link to hand over (no
 * mail server is assumed). The link's page sets the person's password (or, for an email that already has an
 * account, asks for that account's password) and makes them a member. Links are valid
 * {@link INVITATION_DAYS} days, single use, and only their sha256 is stored.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import { authorize, type Actor, type UserActor } from "../authz";
import { sha256Hex } from "../crypto/canonical";
import { DomainError, validationError } from "../errors";
import { typedText } from "../typed-text";
import { assertMayTouchOwnerRole, emailSchema, lockWorkspace, roleSchema } from "./member-rules";
import { givenPasswordSchema, hashPassword, verifyPassword, weakPasswordReason } from "./passwords";
import { claimSignInCheck, recordSignInSuccess, throttleMessage } from "./sign-in-throttle";
import type { VerbContext } from "../context";

/** How long a link stays valid. */
export const INVITATION_DAYS = 7;

/** Body of `POST /api/v1/settings/invitations` and `POST /api/v1/settings/members`. */
export const inviteBodySchema = z.strictObject({ email: emailSchema, role: roleSchema });

/** Body of `POST /api/v1/invitations/{token}/accept`. */
export const acceptBodySchema = z.strictObject({
  password: givenPasswordSchema("password"),
  name: typedText("name", { max: 100, hint: "the name other members see" }).optional(),
});

export type InvitationView = {
  id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: string;
  expires_at: string;
};

export type InviteResult = {
  invitation_url: string;
  expires_at: string;
  invitation: InvitationView;
  audit_seq: number;
};

/** A new link token: 256 random bits, prefixed so secret scanners and our redaction recognise it. */
function newToken(): string {
  return `rci_${randomBytes(32).toString("base64url")}`;
}

/** The link a person opens: `{baseUrl}/invitations/{token}`. */
export function invitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/invitations/${token}`;
}

/**
 * Invites `email` to the actor's workspace with `role` (a body `{email, role}`), withdrawing any earlier open
 * link for that email there. Writes `invitation.created` to the audit log (never the token).
 * @param opts.baseUrl the site's address people open (NEXTAUTH_URL or the request's origin).
 * @returns the link (shown once, to hand over) and when it expires.
 * @throws DomainError forbidden (role), validation_failed (422, naming the field), not_allowed (an admin inviting
 *   an owner), already_member (409: the email is an active member here).
 */
export async function inviteMember(
  { db, actor }: VerbContext,
  { body, ...opts }: { body: unknown; baseUrl: string },
): Promise<InviteResult> {
  authorize(actor, "members.manage");
  const parsed = inviteBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { email, role } = parsed.data;
  assertMayTouchOwnerRole(actor, { to: role }, "invite an owner");
  return db.transaction((tx) => createInvitation(tx, actor, email, role, opts.baseUrl));
}

/**
 * The invitation itself, inside an open transaction (also used by setup). Locks the workspace.
 * @throws DomainError already_member.
 */
export async function createInvitation(
  tx: Db,
  actor: Actor,
  email: string,
  role: Role,
  baseUrl: string,
): Promise<InviteResult> {
  await lockWorkspace(tx, actor.tenantId);
  const member = await queryRows(
    tx,
    sql`select 1 from memberships m join users u on u.id = m.user_id
        where m.tenant_id = ${actor.tenantId} and u.email = ${email} and m.revoked_at is null`,
  );
  if (member.length) {
    throw new DomainError(
      "already_member",
      `${email} is already a member of this workspace (rule already_member); change their role instead.`,
      {
        rule: "already_member",
      },
    );
  }
  await tx.execute(sql`update invitations set withdrawn_at = now()
                       where tenant_id = ${actor.tenantId} and email = ${email} and accepted_at is null and withdrawn_at is null`);
  const token = newToken();
  const invitedBy =
    actor.kind === "user" ? actor.email : actor.kind === "system" ? actor.label : `key:${actor.keyName}`;
  const [row] = await queryRows<InvitationView>(
    tx,
    sql`insert into invitations (tenant_id, email, role, token_hash, invited_by, expires_at)
        values (${actor.tenantId}, ${email}, ${role}, ${sha256Hex(token)}, ${invitedBy}, now() + make_interval(days => ${INVITATION_DAYS}))
        returning id, email, role, invited_by, ${isoUtc("created_at")} as created_at, ${isoUtc("expires_at")} as expires_at`,
  );
  const audit = await appendAudit(tx, actor, {
    action: "invitation.created",
    target: `invitation:${row!.id}`,
    details: { email, role, expires_at: row!.expires_at },
  });
  return {
    invitation_url: invitationUrl(baseUrl, token),
    expires_at: row!.expires_at,
    invitation: row!,
    audit_seq: audit.seq,
  };
}

/** Open invitations of the actor's workspace, newest first. @throws DomainError forbidden */
export async function listInvitations({ db, actor }: VerbContext): Promise<InvitationView[]> {
  authorize(actor, "settings.read");
  return queryRows<InvitationView>(
    db,
    sql`select id, email, role, invited_by, ${isoUtc("created_at")} as created_at, ${isoUtc("expires_at")} as expires_at
        from invitations
        where tenant_id = ${actor.tenantId} and accepted_at is null and withdrawn_at is null and expires_at > now()
        order by created_at desc limit 500`,
  );
}

export type InvitationState = "open" | "used" | "expired" | "withdrawn";

export type InvitationInfo = {
  state: InvitationState;
  email: string;
  role: Role;
  workspace: { id: string; slug: string; name: string };
  expires_at: string;
  /** True when the email already has an account: the link then asks for that account's password. */
  account_exists: boolean;
};

/** What the link's page shows: whose invitation, to which workspace, and whether it can still be used. Null when unknown. */
export async function invitationInfo(db: Db, token: string): Promise<InvitationInfo | null> {
  if (!/^[\x21-\x7e]{10,200}$/.test(token)) return null;
  const [row] = await queryRows<{
    email: string;
    role: Role;
    tenant_id: string;
    slug: string;
    name: string;
    expires_at: string;
    accepted: boolean;
    withdrawn: boolean;
    expired: boolean;
    account_exists: boolean;
  }>(
    db,
    sql`select i.email, i.role, i.tenant_id, t.slug, t.name, ${isoUtc("i.expires_at")} as expires_at,
               (i.accepted_at is not null) as accepted, (i.withdrawn_at is not null) as withdrawn, (i.expires_at <= now()) as expired,
               exists (select 1 from users u where u.email = i.email) as account_exists
        from invitations i join tenants t on t.id = i.tenant_id
        where i.token_hash = ${sha256Hex(token)}`,
  );
  if (!row) return null;
  const state: InvitationState = row.accepted ? "used" : row.withdrawn ? "withdrawn" : row.expired ? "expired" : "open";
  return {
    state,
    email: row.email,
    role: row.role,
    workspace: { id: row.tenant_id, slug: row.slug, name: row.name },
    expires_at: row.expires_at,
    account_exists: row.account_exists,
  };
}

const GONE: Record<Exclude<InvitationState, "open">, string> = {
  used: "This invitation link was already used. Sign in with your email and password.",
  expired: `This invitation link has expired (links are valid ${INVITATION_DAYS} days). Ask an owner or admin of the workspace for a new one.`,
  withdrawn:
    "This invitation link was replaced by a newer one or withdrawn. Use the newest link you were given, or ask for a new one.",
};

function gone(state: Exclude<InvitationState, "open">): DomainError {
  return new DomainError("gone", GONE[state], { reason: state });
}

export type AcceptResult = {
  user_id: string;
  email: string;
  role: Role;
  workspace: { id: string; slug: string; name: string };
  /** True when this created the account (false: an existing account joined the workspace). */
  account_created: boolean;
};

/**
 * Uses an invitation link (no session needed). For a new email the body's `password` becomes the account's
 * password (rules in ./passwords.ts); for an email that already has an account it must be that account's
 * password (a link never changes an existing account's password), checked through the sign-in throttle. The link
 * is consumed with one guarded update, so two uses at once make one member. Writes `invitation.accepted`.
 * @param opts.source the client address, for the throttle.
 * @throws DomainError not_found (unknown token), gone (410: used, expired or withdrawn; `details.reason`),
 *   validation_failed (422: password rules, name, unknown fields), forbidden (wrong password of an existing
 *   account), too_many_attempts (429), already_member (409).
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  body: unknown,
  opts: { source: string },
): Promise<AcceptResult> {
  const info = await invitationInfo(db, token);
  if (!info)
    throw new DomainError("not_found", "This invitation link is not valid. Check that you copied the whole link.");
  if (info.state !== "open") throw gone(info.state);
  const parsed = acceptBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { password } = parsed.data;

  let newHash: string | null = null;
  if (info.account_exists) {
    const claim = await claimSignInCheck(db, info.email, opts.source);
    if (!claim.ok)
      throw new DomainError("too_many_attempts", throttleMessage(claim), {
        retry_after_seconds: claim.retryAfterSeconds,
      });
    const [user] = await queryRows<{ password_hash: string }>(
      db,
      sql`select password_hash from users where email = ${info.email}`,
    );
    if (!(await verifyPassword(user?.password_hash, password))) {
      throw new DomainError(
        "forbidden",
        `${info.email} already has an account: enter that account's password to join ${info.workspace.name}. This link cannot change it.`,
      );
    }
    await recordSignInSuccess(db, info.email, opts.source);
  } else {
    const weak = weakPasswordReason(password, info.email);
    if (weak) throw validationError([{ path: ["password"], message: `password ${weak}` }]);
    newHash = await hashPassword(password);
  }
  const name = parsed.data.name ?? info.email.split("@")[0]!;

  return db.transaction(async (tx) => {
    await lockWorkspace(tx, info.workspace.id);
    const [inv] = await queryRows<{ id: string; tenant_id: string; email: string; role: Role }>(
      tx,
      sql`update invitations set accepted_at = now()
          where token_hash = ${sha256Hex(token)} and accepted_at is null and withdrawn_at is null and expires_at > now()
          returning id, tenant_id, email, role`,
    );
    if (!inv) {
      const now = await invitationInfo(tx, token);
      throw gone(now && now.state !== "open" ? now.state : "used");
    }
    let userId: string;
    let created = false;
    if (newHash) {
      const [u] = await queryRows<{ id: string }>(
        tx,
        sql`insert into users (email, name, password_hash) values (${inv.email}, ${name}, ${newHash})
            on conflict (email) do nothing returning id`,
      );
      if (!u)
        throw new DomainError(
          "conflict",
          `An account for ${inv.email} was created meanwhile; open the link again and enter its password.`,
        );
      userId = u.id;
      created = true;
    } else {
      const [u] = await queryRows<{ id: string }>(tx, sql`select id from users where email = ${inv.email}`);
      userId = u!.id;
    }
    const joined = await queryRows(
      tx,
      sql`insert into memberships (tenant_id, user_id, role) values (${inv.tenant_id}, ${userId}, ${inv.role})
          on conflict (tenant_id, user_id) do update set role = excluded.role, revoked_at = null
          where memberships.revoked_at is not null
          returning 1`,
    );
    if (!joined.length) {
      throw new DomainError(
        "already_member",
        `${inv.email} is already a member of ${info.workspace.name} (rule already_member); sign in instead.`,
        {
          rule: "already_member",
        },
      );
    }
    await tx.execute(
      sql`update invitations set accepted_user_id = ${userId} where tenant_id = ${inv.tenant_id} and id = ${inv.id}`,
    );
    const member: UserActor = { kind: "user", tenantId: inv.tenant_id, userId, email: inv.email, role: inv.role };
    await appendAudit(tx, member, {
      action: "invitation.accepted",
      target: `user:${userId}`,
      details: { email: inv.email, role: inv.role, invitation_id: inv.id, account_created: created },
    });
    return { user_id: userId, email: inv.email, role: inv.role, workspace: info.workspace, account_created: created };
  });
}
