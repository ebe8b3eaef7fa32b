/**
 * Server-side sessions of signed-in people (table `sessions`, db/schema/access.ts). The session cookie carries a
 * random id; the row says which workspace the session works in and whether it still counts. Sign-out, removal
 * from the workspace and a password change end rows, and {@link actorForSession} reads the row and the
 * membership on every request, so each takes effect on the very next request, pages and API alike.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import type { UserActor } from "../authz";
import { sha256Hex } from "../crypto/canonical";

/** How long a session lasts after sign-in (the cookie's lifetime too). */
export const SESSION_HOURS = 12;

const NO_TENANT = "00000000-0000-0000-0000-000000000000";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The stored form of a session id (its sha256); the id itself is only ever in the encrypted cookie. */
export function sessionHash(sessionId: string): string {
  return sha256Hex(sessionId);
}

/**
 * Starts a session for a person who just proved their password, in one of their active workspaces: `tenantId`
 * when given and active, else the one they chose most recently, else their oldest membership.
 * @returns the session id (for the cookie) and the workspace, or null when the person has no active membership.
 */
export async function startSession(
  db: Db,
  userId: string,
  opts: { tenantId?: string | null } = {},
): Promise<{ sessionId: string; tenantId: string } | null> {
  const preferred = opts.tenantId && UUID.test(opts.tenantId) ? opts.tenantId : NO_TENANT;
  const sessionId = randomBytes(32).toString("base64url");
  const rows = await queryRows<{ tenant_id: string }>(
    db,
    sql`insert into sessions (id_hash, user_id, tenant_id, expires_at)
        select ${sessionHash(sessionId)}, ${userId}, m.tenant_id, now() + make_interval(hours => ${SESSION_HOURS})
        from memberships m
        where m.user_id = ${userId} and m.revoked_at is null
        order by (m.tenant_id = ${preferred}::uuid) desc,
                 (select max(s.selected_at) from sessions s where s.user_id = m.user_id and s.tenant_id = m.tenant_id) desc nulls last,
                 m.created_at
        limit 1
        returning tenant_id`,
  );
  const row = rows[0];
  return row ? { sessionId, tenantId: row.tenant_id } : null;
}

/**
 * The person behind a session, in the session's workspace with their current role there; null when the session
 * is unknown, ended or expired, or the membership is no longer active. Read on every request (no cache), so a
 * role change applies to the next request and a removal ends access at once.
 */
export async function actorForSession(db: Db, sessionId: string): Promise<UserActor | null> {
  const [row] = await queryRows<{ tenant_id: string; user_id: string; email: string; role: Role; read_only: boolean }>(
    db,
    sql`select s.tenant_id, s.user_id, u.email, m.role, (t.read_only_since is not null) as read_only
        from sessions s
        join memberships m on m.tenant_id = s.tenant_id and m.user_id = s.user_id and m.revoked_at is null
        join users u on u.id = s.user_id
        join tenants t on t.id = s.tenant_id
        where s.id_hash = ${sessionHash(sessionId)} and s.ended_at is null and s.expires_at > now()`,
  );
  if (!row) return null;
  return {
    kind: "user",
    tenantId: row.tenant_id,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    sessionHash: sessionHash(sessionId),
    ...(row.read_only ? { readOnly: true } : {}),
  };
}

/** Ends one session (sign-out). Ending an already ended or unknown session is a no-op. */
export async function endSession(db: Db, sessionId: string, reason = "signed_out"): Promise<void> {
  await db.execute(sql`update sessions set ended_at = now(), ended_reason = ${reason}
                       where id_hash = ${sessionHash(sessionId)} and ended_at is null`);
}

/**
 * Ends every live session of a person that works in `tenantId` (their removal from that workspace).
 * @returns how many were ended.
 */
export async function endSessionsInTenant(db: Db, tenantId: string, userId: string, reason: string): Promise<number> {
  const rows = await queryRows(
    db,
    sql`update sessions set ended_at = now(), ended_reason = ${reason}
        where tenant_id = ${tenantId} and user_id = ${userId} and ended_at is null and expires_at > now()
        returning 1`,
  );
  return rows.length;
}

/**
 * Ends every live session of a person except `keepHash` (after a password change).
 * @returns how many were ended.
 */
export async function endOtherSessions(
  db: Db,
  userId: string,
  keepHash: string | undefined,
  reason: string,
): Promise<number> {
  const rows = await queryRows(
    db,
    sql`update sessions set ended_at = now(), ended_reason = ${reason}
        where user_id = ${userId} and ended_at is null and expires_at > now() and id_hash <> ${keepHash ?? ""}
        returning 1`,
  );
  return rows.length;
}
