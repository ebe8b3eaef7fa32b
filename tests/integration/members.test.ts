/**
 * Settings → Members: the sign-in throttle can lock a member out at an address (anyone who knows the email can
 * trigger it there), so an owner sees the lock and lifts it. The throttle itself stays; only owners and admins of
 * the member's tenant may unlock (wrong role → 403, another tenant → 404), and every unlock is in the audit log.
 * (Growing delays and concurrency of the throttle itself: sessions.test.ts.)
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { MAX_SIGN_IN_FAILURES, SIGN_IN_WINDOW_MINUTES } from "@/lib/domain/tenancy/sign-in-limits";
import type { MemberView } from "@/lib/domain/tenancy/members";
import { signInAs } from "./support/people";
import { expectError } from "./support/responses";
import { auditRows } from "./support/stored-rows";
import { api, baseUrl, createTestTenant, trySignIn, type FullTestTenant, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** The address the lock-outs here come from (RFC 5737 documentation range). */
const SOURCE = "192.0.2.44";
const signInFrom = (email: string, password: string) => trySignIn(email, password, { source: SOURCE });

/**
 * Locks `email` out at {@link SOURCE}: the throttle's row as it stands after MAX_SIGN_IN_FAILURES - 1 failures whose
 * waits have passed (written here, instead of waiting them out), then the last failure through the real sign-in flow.
 */
async function lockOut(email: string): Promise<void> {
  await handle.db.execute(sql`
    insert into sign_in_throttle (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
    values (${email}, ${SOURCE}, ${MAX_SIGN_IN_FAILURES - 1}, now(), now(), now())
    on conflict (email, source) do update set failures = excluded.failures, window_started_at = now(), next_allowed_at = now()`);
  expect((await signInFrom(email, "wrong-last")).cookie).toBeNull();
}

/** Failures counted for `email` at {@link SOURCE} (0 when none). */
async function failureRows(email: string): Promise<number> {
  const [row] = await queryRows<{ failures: number }>(
    handle.db,
    sql`select failures from sign_in_throttle where email = ${email} and source = ${SOURCE}`,
  );
  return Number(row?.failures ?? 0);
}

const unlockPath = (userId: string) => `/api/v1/settings/members/${userId}/unlock`;

async function members(auth: { cookie: string }): Promise<MemberView[]> {
  const res = await api(auth).get<{ members: MemberView[] }>("/api/v1/settings/members");
  expect(res.status, res.text).toBe(200);
  return res.body.members;
}

describe("unlocking a member locked out by failed sign-ins", () => {
  let t: FullTestTenant;
  beforeAll(async () => {
    t = await createTestTenant(handle.db);
  });

  it("shows the lock to the owner, who unlocks it: the right password works again and the audit log says so", async () => {
    const viewer = t.users.viewer;
    const owner = await signInAs(t, "owner");
    const before = Date.now();
    await lockOut(viewer.email);
    expect(
      (await signInFrom(viewer.email, t.password)).cookie,
      "locked: even the right password is refused",
    ).toBeNull();

    const listed = (await members(owner)).find((m) => m.user_id === viewer.userId)!;
    expect(listed.locked).toMatchObject({ failures: MAX_SIGN_IN_FAILURES });
    const until = Date.parse(listed.locked!.locked_until);
    expect(until).toBeGreaterThan(before + (SIGN_IN_WINDOW_MINUTES - 1) * 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + SIGN_IN_WINDOW_MINUTES * 60_000 + 1000);
    expect((await members(owner)).find((m) => m.user_id === t.users.owner.userId)!.locked).toBeNull();

    // The settings page itself shows the lock in the members table.
    const page = await fetch(`${baseUrl()}/settings`, { headers: { cookie: owner.cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("locked out until");
    expect(html).toContain('data-testid="member-lock"');
    // React separates adjacent text nodes with `<!-- -->` in server-rendered HTML.
    expect(html.replaceAll("<!-- -->", "")).toContain(`after ${MAX_SIGN_IN_FAILURES} failed sign-ins`);

    const res = await api(owner).post<{ unlocked: boolean; email: string; failures: number; audit_seq: number }>(
      unlockPath(viewer.userId),
      {},
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ unlocked: true, email: viewer.email, failures: MAX_SIGN_IN_FAILURES });

    const [audit] = await auditRows(handle.db, t.tenantId, "member.unlocked");
    expect(audit).toMatchObject({
      seq: res.body.audit_seq,
      target: `user:${viewer.userId}`,
      actor_kind: "user",
      actor_label: t.users.owner.email,
      details: { email: viewer.email, failures: MAX_SIGN_IN_FAILURES, locked_until: expect.any(String) },
    });
    expect((await members(owner)).find((m) => m.user_id === viewer.userId)!.locked).toBeNull();
    expect((await signInFrom(viewer.email, t.password)).cookie, "the right password works again").not.toBeNull();

    // The throttle stays: a fresh run of failures locks the account again.
    await lockOut(viewer.email);
    expect((await signInFrom(viewer.email, t.password)).cookie).toBeNull();
    // Clean up for the next test in this tenant.
    expect((await api(owner).post(unlockPath(viewer.userId), {})).status).toBe(200);
  });

  it("refuses other roles and runtime keys (403) and writes nothing", async () => {
    const locked = t.users.approver;
    await lockOut(locked.email);
    const auditBefore = (await auditRows(handle.db, t.tenantId)).length;
    for (const role of ["viewer", "responder"] as const) {
      const res = await api(await signInAs(t, role)).post(unlockPath(locked.userId), {});
      expectError(res, 403, "forbidden");
      expect(JSON.stringify(res.body)).toMatch(/owner/);
    }
    expectError(await api(t.apiKey).post(unlockPath(locked.userId), {}), 403, "forbidden");
    expect(await failureRows(locked.email)).toBe(MAX_SIGN_IN_FAILURES);
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(auditBefore);
    expect((await signInFrom(locked.email, t.password)).cookie).toBeNull();

    // An admin may, like an owner.
    expect((await api(await signInAs(t, "admin")).post(unlockPath(locked.userId), {})).status).toBe(200);
    expect((await signInFrom(locked.email, t.password)).cookie).not.toBeNull();
  });

  it("answers 404 to another tenant's owner and leaves the lock in place", async () => {
    const other = await createTestTenant(handle.db, { roles: ["owner"] });
    const otherOwner = await signInAs(other, "owner");
    const locked = t.users.responder;
    await lockOut(locked.email);
    const res = await api(otherOwner).post(unlockPath(locked.userId), {});
    expectError(res, 404, "not_found");
    expect(await failureRows(locked.email)).toBe(MAX_SIGN_IN_FAILURES);
    expect(await auditRows(handle.db, other.tenantId, "member.unlocked")).toEqual([]);
    expect((await members(otherOwner)).map((m) => m.user_id)).not.toContain(locked.userId);
    // Unknown and malformed ids are 404 too.
    expectError(await api(otherOwner).post(unlockPath("00000000-0000-4000-8000-000000000000"), {}), 404, "not_found");
    expectError(await api(otherOwner).post(unlockPath("not-a-uuid"), {}), 404, "not_found");
    // Its own owner still can.
    expect((await api(await signInAs(t, "owner")).post(unlockPath(locked.userId), {})).status).toBe(200);
  });

  it("answers 409 when the member is not locked, keeping the few failures recorded", async () => {
    const owner = await signInAs(t, "owner");
    const member = t.users.admin;
    expect((await signInFrom(member.email, "wrong-once")).cookie).toBeNull();
    const auditBefore = (await auditRows(handle.db, t.tenantId)).length;
    const res = await api(owner).post(unlockPath(member.userId), {});
    expectError(res, 409, "conflict");
    expect(JSON.stringify(res.body)).toContain("not locked");
    expect(await failureRows(member.email)).toBe(1);
    expect((await auditRows(handle.db, t.tenantId)).length).toBe(auditBefore);
  });
});
