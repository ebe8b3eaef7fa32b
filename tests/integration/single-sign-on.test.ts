/**
 * Single sign-on's rule on real PostgreSQL (decision 0041): the identity provider's verified email gets the
 * memberships it was invited to, nothing else does. The browser flow against a real provider, with the id token
 * refusals, is e2e/single-sign-on.spec.ts; this covers the claims the provider may send.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import { createInvitation } from "@/lib/domain/tenancy/invitations";
import { signInWithIdentityProvider } from "@/lib/domain/tenancy/single-sign-on";
import { auditRows } from "./support/stored-rows";
import { createTestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();
const ISSUER = "https://idp.example.test";

const newEmail = () => `sso-${Math.random().toString(36).slice(2, 10)}@example.test`;

async function invite(db: Db, tenantId: string, email: string, role: Role): Promise<void> {
  await db.transaction((tx) =>
    createInvitation(tx, { kind: "system", tenantId, label: "test" }, email, role, "http://x.test"),
  );
}

async function openInvitations(db: Db, email: string): Promise<number> {
  const rows = await queryRows(
    db,
    sql`select 1 from invitations where email = ${email} and accepted_at is null and withdrawn_at is null`,
  );
  return rows.length;
}

async function accountExists(db: Db, email: string): Promise<boolean> {
  return (await queryRows(db, sql`select 1 from users where email = ${email}`)).length > 0;
}

describe("signing in through the identity provider", () => {
  it("turns a verified email's open invitations, in every workspace, into memberships (no name claim needed)", async () => {
    const db = handle.db;
    const [a, b] = [await createTestTenant(db, { roles: ["owner"] }), await createTestTenant(db, { roles: ["owner"] })];
    const email = newEmail();
    await invite(db, a.tenantId, email, "approver");
    await invite(db, b.tenantId, email, "viewer");

    const result = await signInWithIdentityProvider(
      db,
      { sub: "x", email: email.toUpperCase(), email_verified: true },
      ISSUER,
    );
    expect(result).toMatchObject({ ok: true, email, name: email.split("@")[0] });
    if (!result.ok) return;
    expect(result.joined).toEqual(
      expect.arrayContaining([
        { tenantId: a.tenantId, role: "approver" },
        { tenantId: b.tenantId, role: "viewer" },
      ]),
    );
    expect(await openInvitations(db, email)).toBe(0);
    const [audit] = await auditRows(db, a.tenantId, "invitation.accepted");
    expect(audit?.details).toMatchObject({ email, via: "single_sign_on", issuer: ISSUER, account_created: true });

    // Again: no invitation left, the memberships carry the sign-in.
    const again = await signInWithIdentityProvider(db, { email, email_verified: true }, ISSUER);
    expect(again).toMatchObject({ ok: true, userId: result.userId, joined: [] });
  });

  it("refuses an email the provider does not vouch for, and writes nothing", async () => {
    const db = handle.db;
    const t = await createTestTenant(db, { roles: ["owner"] });
    const email = newEmail();
    await invite(db, t.tenantId, email, "responder");
    for (const verified of [false, "true", undefined, 1]) {
      const claims = { email, ...(verified === undefined ? {} : { email_verified: verified }) };
      expect(await signInWithIdentityProvider(db, claims, ISSUER)).toEqual({ ok: false, reason: "email_unverified" });
    }
    for (const claims of [{ email_verified: true }, { email: "not an address", email_verified: true }, null, "x"]) {
      expect(await signInWithIdentityProvider(db, claims, ISSUER)).toEqual({ ok: false, reason: "email_missing" });
    }
    expect(await openInvitations(db, email)).toBe(1);
    expect(await accountExists(db, email)).toBe(false);
  });

  it("refuses a verified email that no workspace invited, or whose memberships were all removed", async () => {
    const db = handle.db;
    const email = newEmail();
    expect(await signInWithIdentityProvider(db, { email, email_verified: true }, ISSUER)).toEqual({
      ok: false,
      reason: "not_invited",
    });
    expect(await accountExists(db, email)).toBe(false);

    const t = await createTestTenant(db, { roles: ["viewer"] });
    const viewer = t.users.viewer!;
    expect(await signInWithIdentityProvider(db, { email: viewer.email, email_verified: true }, ISSUER)).toMatchObject({
      ok: true,
      userId: viewer.userId,
    });
    await db.execute(sql`update memberships set revoked_at = now() where user_id = ${viewer.userId}`);
    expect(await signInWithIdentityProvider(db, { email: viewer.email, email_verified: true }, ISSUER)).toEqual({
      ok: false,
      reason: "not_invited",
    });
  });

  it("makes one account and one membership when two sign-ins of the same email race", async () => {
    const db = handle.db;
    const t = await createTestTenant(db, { roles: ["owner"] });
    const email = newEmail();
    await invite(db, t.tenantId, email, "responder");
    const results = await Promise.all(
      [1, 2, 3].map(() => signInWithIdentityProvider(db, { email, email_verified: true }, ISSUER)),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(new Set(results.map((r) => (r.ok ? r.userId : null))).size).toBe(1);
    expect(results.flatMap((r) => (r.ok ? r.joined : []))).toHaveLength(1);
    expect(await auditRows(db, t.tenantId, "invitation.accepted")).toHaveLength(1);
  });
});
