/**
 * Signing in through the identity provider (OpenID Connect, decision 0041). The provider vouches for an email
 * (`email_verified: true` in the id token, whose signature, audience, issuer and expiry openid-client has checked):
 * that email's open invitations become memberships, as if each link had been opened, and the person signs in with
 * the memberships that email holds. An email the provider does not vouch for, or one that no workspace invited,
 * gets no membership and no session. Nothing here knows about HTTP or next-auth.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import type { UserActor } from "../authz";
import { typedText } from "../typed-text";
import { emailSchema, lockWorkspace } from "./member-rules";
import { hashPassword } from "./passwords";

/** Why the provider's answer gave no session (the refusal page explains each). */
export type SingleSignOnRefusal = "email_missing" | "email_unverified" | "not_invited";

export type SingleSignOnResult =
  | {
      ok: true;
      userId: string;
      email: string;
      name: string;
      /** Workspaces this sign-in joined through open invitations (oldest invitation first). */
      joined: { tenantId: string; role: Role }[];
    }
  | { ok: false; reason: SingleSignOnRefusal };

const nameSchema = typedText("name", { max: 100, hint: "the name other members see" });

/** The id token's claims this needs; anything else in them is ignored. */
const claimsSchema = z.looseObject({
  email: z.unknown().optional(),
  email_verified: z.unknown().optional(),
  name: z.unknown().optional(),
});

/** Rolls back one invitation's transaction when its email is already an active member there. */
class AlreadyMember extends Error {}

/**
 * Turns the validated id token claims of the configured provider into a person with memberships.
 * - `email_verified` must be the boolean `true` (a string or a missing claim is not a verification);
 * - every open invitation of that email (any workspace, not used, withdrawn or expired) is consumed with the same
 *   guarded update as a link (decision 0007) and becomes a membership with its role, audited as
 *   `invitation.accepted` with `via: "single_sign_on"` and the issuer; an email without an account gets one
 *   whose password is random and never shown, so it signs in through the provider only;
 * - then the person needs at least one active membership.
 * @param db the owner's database (no tenant is known yet; decision 0016).
 * @param claims the id token's claims (`email`, `email_verified`, `name`).
 * @param issuer the provider's issuer URL, for the audit entry.
 * @returns the person, or the reason for refusal (nothing is written on refusal).
 */
export async function signInWithIdentityProvider(db: Db, claims: unknown, issuer: string): Promise<SingleSignOnResult> {
  const parsed = claimsSchema.safeParse(claims);
  if (!parsed.success) return { ok: false, reason: "email_missing" };
  const email = emailSchema.safeParse(parsed.data.email);
  if (!email.success) return { ok: false, reason: "email_missing" };
  if (parsed.data.email_verified !== true) return { ok: false, reason: "email_unverified" };
  const who = email.data;
  const givenName = nameSchema.safeParse(parsed.data.name);
  const name = givenName.success ? givenName.data : who.split("@")[0]!;

  const invitations = await queryRows<{ tenant_id: string; id: string }>(
    db,
    sql`select tenant_id, id from invitations
        where email = ${who} and accepted_at is null and withdrawn_at is null and expires_at > now()
        order by created_at limit 100`,
  );
  const joined: { tenantId: string; role: Role }[] = [];
  if (invitations.length) {
    const [existing] = await queryRows(db, sql`select 1 from users where email = ${who}`);
    // A password nobody knows: the account signs in through the provider (argon2 like any other, so a password
    // sign-in against it costs the same and fails).
    const unusableHash = existing ? null : await hashPassword(randomBytes(32).toString("base64url"));
    for (const inv of invitations) {
      const role = await acceptOne(db, inv, who, name, unusableHash, issuer);
      if (role) joined.push({ tenantId: inv.tenant_id, role });
    }
  }

  const [user] = await queryRows<{ id: string; name: string; active: number | string }>(
    db,
    sql`select u.id, u.name,
               (select count(*) from memberships m where m.user_id = u.id and m.revoked_at is null) as active
        from users u where u.email = ${who}`,
  );
  if (!user || Number(user.active) === 0) return { ok: false, reason: "not_invited" };
  return { ok: true, userId: user.id, email: who, name: user.name, joined };
}

/**
 * One invitation, in its own transaction with the workspace locked: consume it (guarded), make the account when
 * there is none, grant the membership, audit. @returns the role granted, or null when the invitation was used
 * meanwhile or the email is already an active member there (then nothing is written).
 */
async function acceptOne(
  db: Db,
  inv: { tenant_id: string; id: string },
  email: string,
  name: string,
  unusableHash: string | null,
  issuer: string,
): Promise<Role | null> {
  try {
    return await db.transaction(async (tx) => {
      await lockWorkspace(tx, inv.tenant_id);
      const [used] = await queryRows<{ role: Role }>(
        tx,
        sql`update invitations set accepted_at = now()
            where tenant_id = ${inv.tenant_id} and id = ${inv.id}
              and accepted_at is null and withdrawn_at is null and expires_at > now()
            returning role`,
      );
      if (!used) return null;
      let created = false;
      if (unusableHash) {
        const made = await queryRows(
          tx,
          sql`insert into users (email, name, password_hash) values (${email}, ${name}, ${unusableHash})
              on conflict (email) do nothing returning id`,
        );
        created = made.length > 0;
      }
      const [u] = await queryRows<{ id: string }>(tx, sql`select id from users where email = ${email}`);
      const userId = u!.id;
      const granted = await queryRows(
        tx,
        sql`insert into memberships (tenant_id, user_id, role) values (${inv.tenant_id}, ${userId}, ${used.role})
            on conflict (tenant_id, user_id) do update set role = excluded.role, revoked_at = null
            where memberships.revoked_at is not null
            returning 1`,
      );
      if (!granted.length) throw new AlreadyMember();
      await tx.execute(
        sql`update invitations set accepted_user_id = ${userId} where tenant_id = ${inv.tenant_id} and id = ${inv.id}`,
      );
      const member: UserActor = { kind: "user", tenantId: inv.tenant_id, userId, email, role: used.role };
      await appendAudit(tx, member, {
        action: "invitation.accepted",
        target: `user:${userId}`,
        details: {
          email,
          role: used.role,
          invitation_id: inv.id,
          account_created: created,
          via: "single_sign_on",
          issuer,
        },
      });
      return used.role;
    });
  } catch (err) {
    if (err instanceof AlreadyMember) return null;
    throw err;
  }
}
