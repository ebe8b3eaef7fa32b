/**
 * First-run setup (`npm run setup`): creates a workspace and its owner on an empty database, and is safe to run
 * again. The owner gets either a one-time link to set their password (the default; the same invitation links
 * members get) or a password given by the operator (`CUSTODY_SETUP_PASSWORD`) or generated and printed once. No
 * password is ever stored in clear. Every change is in the new workspace's audit log, by the system actor `setup`.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { appendAudit } from "../audit/append";
import type { SystemActor } from "../authz";
import { DomainError, validationError } from "../errors";
import { typedText } from "../typed-text";
import { createInvitation } from "./invitations";
import { lockWorkspace } from "./member-rules";
import { hashPassword, weakPasswordReason } from "./passwords";

/** The command that creates the first workspace, as the sign-in page and the README show it. */
export const SETUP_COMMAND = 'npm run setup -- --workspace <slug> --name "<name>" --owner <email>';

/** What setup is asked for (from the command line). */
export const setupInputSchema = z.strictObject({
  workspace: z
    .string({ error: () => "--workspace is required: a short slug such as acme-ops" })
    .trim()
    .regex(
      /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
      "--workspace must be a slug: 1–63 lower-case letters, digits and dashes, not starting or ending with a dash",
    ),
  name: typedText("--name", { max: 100, hint: 'the workspace\'s name people see, e.g. "Acme operations"' }),
  owner: z
    .string({ error: () => "--owner is required: the email of the workspace's first owner" })
    .trim()
    .toLowerCase()
    .max(254, "--owner is too long (at most 254 characters)")
    .pipe(z.email({ error: "--owner must be an email address (name@example.com)" })),
  owner_name: typedText("--owner-name", { max: 100 }).optional(),
});

export type SetupInput = z.input<typeof setupInputSchema>;

export type SetupResult = {
  workspace: { id: string; slug: string; name: string; created: boolean };
  owner: {
    email: string;
    /**
     * `invited`: a link was made (printed once); `created`: the account was made with the given or generated
     * password; `added`: an existing account became owner here (its password unchanged); `already_owner`: nothing to do.
     */
    state: "invited" | "created" | "added" | "already_owner";
  };
  invitation_url?: string;
  expires_at?: string;
  /** Only when setup generated the password: shown once, never stored in clear. */
  generated_password?: string;
};

/** A password to print once: 24 random characters (about 143 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}

/**
 * Makes sure workspace `workspace` exists and `owner` is its owner.
 * @param opts.password the owner's password when the account is new (else a link is made); `"generate"` makes one.
 * @param opts.baseUrl the site's address, for the link.
 * @throws DomainError validation_failed (input, password rules).
 */
export async function setupWorkspace(
  db: Db,
  input: SetupInput,
  opts: { password?: string | "generate"; baseUrl: string },
): Promise<SetupResult> {
  const parsed = setupInputSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { workspace, name, owner } = parsed.data;
  const ownerName = parsed.data.owner_name ?? owner.split("@")[0]!;
  const generated = opts.password === "generate" ? generatePassword() : undefined;
  const password = generated ?? (opts.password === "generate" ? undefined : opts.password);
  if (password !== undefined) {
    const weak = weakPasswordReason(password, owner);
    if (weak) throw new DomainError("validation_failed", `CUSTODY_SETUP_PASSWORD ${weak}.`);
  }
  const passwordHash = password !== undefined ? await hashPassword(password) : undefined;

  return db.transaction(async (tx) => {
    const inserted = await queryRows<{ id: string }>(
      tx,
      sql`insert into tenants (slug, name) values (${workspace}, ${name}) on conflict (slug) do nothing returning id`,
    );
    const [tenant] = await queryRows<{ id: string; name: string }>(
      tx,
      sql`select id, name from tenants where slug = ${workspace}`,
    );
    const tenantId = tenant!.id;
    const actor: SystemActor = { kind: "system", tenantId, label: "setup" };
    await lockWorkspace(tx, tenantId);
    const created = inserted.length > 0;
    if (created)
      await appendAudit(tx, actor, {
        action: "workspace.created",
        target: `workspace:${workspace}`,
        details: { slug: workspace, name },
      });
    const ws = { id: tenantId, slug: workspace, name: tenant!.name, created };

    const [user] = await queryRows<{ id: string; role: Role | null; revoked: boolean | null }>(
      tx,
      sql`select u.id, m.role, (m.revoked_at is not null) as revoked
          from users u left join memberships m on m.user_id = u.id and m.tenant_id = ${tenantId}
          where u.email = ${owner}`,
    );
    if (user && user.role === "owner" && user.revoked === false) {
      return { workspace: ws, owner: { email: owner, state: "already_owner" as const } };
    }
    if (user) {
      // An existing account (another workspace, or a member here with another role) becomes owner; its password stays.
      await tx.execute(sql`
        insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${user.id}, 'owner')
        on conflict (tenant_id, user_id) do update set role = 'owner', revoked_at = null`);
      await appendAudit(tx, actor, {
        action: user.role && !user.revoked ? "member.role_changed" : "member.added",
        target: `user:${user.id}`,
        details:
          user.role && !user.revoked ? { email: owner, from: user.role, to: "owner" } : { email: owner, role: "owner" },
      });
      return { workspace: ws, owner: { email: owner, state: "added" as const } };
    }
    if (passwordHash) {
      const [u] = await queryRows<{ id: string }>(
        tx,
        sql`insert into users (email, name, password_hash) values (${owner}, ${ownerName}, ${passwordHash}) returning id`,
      );
      await tx.execute(sql`insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${u!.id}, 'owner')`);
      await appendAudit(tx, actor, {
        action: "member.added",
        target: `user:${u!.id}`,
        details: { email: owner, role: "owner" },
      });
      return {
        workspace: ws,
        owner: { email: owner, state: "created" as const },
        ...(generated ? { generated_password: generated } : {}),
      };
    }
    const inv = await createInvitation(tx, actor, owner, "owner", opts.baseUrl);
    return {
      workspace: ws,
      owner: { email: owner, state: "invited" as const },
      invitation_url: inv.invitation_url,
      expires_at: inv.expires_at,
    };
  });
}

/** True when the database holds at least one workspace (else the sign-in page shows how to run setup). */
export async function hasWorkspace(db: Db): Promise<boolean> {
  const rows = await queryRows(db, sql`select 1 from tenants limit 1`);
  return rows.length > 0;
}
