/**
 * Rules about members that the permissions table cannot say alone, shared by inviting, role changes, removal
 * and setup:
 * - owners and admins manage members (`members.manage` in lib/domain/authz.ts);
 * - only an owner grants the owner role, or changes or removes an owner (`not_allowed`): otherwise an admin could
 *   demote every owner and take the workspace over;
 * - a workspace always keeps one active owner (`last_owner`);
 * - an email that is an active member cannot be invited again (`already_member`).
 * Changes to one workspace's memberships are serialised by locking its `tenants` row, so the last-owner check
 * cannot race (two owners demoting each other at once: one wins, the other gets `last_owner`).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { ROLES, type Role } from "@/db/schema/enums";
import type { Actor } from "../authz";
import { DomainError } from "../errors";

/** A role field in a body, with a message that lists the roles. */
export const roleSchema = z.enum(ROLES, { error: () => `role must be one of ${ROLES.join(", ")}` });

/** An email field: trimmed, lower-cased, a plausible address of at most 254 characters. */
export const emailSchema = z
  .string({
    error: (iss) =>
      iss.input === undefined ? "email is required (the person's email address)" : "email must be a string",
  })
  .trim()
  .toLowerCase()
  .max(254, "email is too long (at most 254 characters)")
  .pipe(z.email({ error: "email is not an email address (name@example.com)" }));

/**
 * Locks the workspace's row for the rest of the transaction: every change to its memberships takes this lock
 * first. @throws DomainError not_found when the tenant does not exist.
 */
export async function lockWorkspace(tx: Db, tenantId: string): Promise<{ slug: string; name: string }> {
  const [row] = await queryRows<{ slug: string; name: string }>(
    tx,
    sql`select slug, name from tenants where id = ${tenantId} for update`,
  );
  if (!row) throw new DomainError("not_found", "This workspace was not found.");
  return row;
}

/** True when the tenant has an active owner other than `userId`. Call with the workspace locked. */
export async function hasOtherOwner(tx: Db, tenantId: string, userId: string): Promise<boolean> {
  const rows = await queryRows(
    tx,
    sql`select 1 from memberships where tenant_id = ${tenantId} and role = 'owner' and revoked_at is null and user_id <> ${userId} limit 1`,
  );
  return rows.length > 0;
}

/**
 * @throws DomainError not_allowed when `actor` is not an owner (nor the system) and the change touches the owner
 *   role: granting it, or changing or removing someone who holds it.
 */
export function assertMayTouchOwnerRole(actor: Actor, touches: { from?: Role; to?: Role }, what: string): void {
  if (actor.kind === "system" || (actor.kind === "user" && actor.role === "owner")) return;
  if (touches.from === "owner" || touches.to === "owner") {
    throw new DomainError(
      "not_allowed",
      `Only an owner can ${what} (rule not_allowed: admins manage every role except owner).`,
      {
        rule: "not_allowed",
      },
    );
  }
}

/** The `last_owner` refusal. */
export function lastOwnerError(what: string): DomainError {
  return new DomainError(
    "last_owner",
    `${what}: a workspace must keep at least one owner (rule last_owner). Make someone else an owner first.`,
    {
      rule: "last_owner",
    },
  );
}
