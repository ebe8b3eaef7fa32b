/**
 * Sessions and sign-in, over HTTP against the built server:
 * - the session cookie is not enough on its own: signing out (and an expired server-side session) stops it on the
 *   very next request, for the API and for pages;
 * - the sign-in throttle counts per email and source together, claims each password check with one guarded
 *   statement (40 concurrent bad guesses get at most the allowed number of checks), grows the wait between tries,
 *   and never stops the same email at another address.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import {
  FREE_SIGN_IN_FAILURES,
  MAX_EMAIL_SIGN_IN_FAILURES,
  MAX_SIGN_IN_FAILURES,
  signInDelaySeconds,
} from "@/lib/domain/tenancy/sign-in-limits";
import { expectError } from "./support/responses";
import { api, createTestTenant, rid, signIn, signOut, trySignIn, testDbForFile } from "./helpers";

const handle = testDbForFile();

/** A documentation address (RFC 5737) unique to one test, so tests never share a throttle row. */
function address(): string {
  const b = Number.parseInt(rid(1), 16);
  const c = Number.parseInt(rid(1), 16);
  return `203.0.${b}.${c}`;
}

const NOT_RIGHT = "Email or password is not right";
const THROTTLED = "Too many failed sign-ins";

/** What the person read after a refused sign-in (next-auth puts the message in the error redirect). */
function refusal(url: string | null): string {
  return decodeURIComponent((url ?? "").replace(/\+/g, " "));
}

async function throttleRow(email: string, source: string) {
  const [row] = await queryRows<{ failures: number; wait: string | number }>(
    handle.db,
    sql`select failures, extract(epoch from (next_allowed_at - last_failure_at)) as wait
        from sign_in_throttle where email = ${email} and source = ${source}`,
  );
  return row ? { failures: Number(row.failures), wait: Math.round(Number(row.wait)) } : undefined;
}

describe("signing out", () => {
  it("ends the session on the next request, API and pages, while the person's other sessions go on", async () => {
    const t = await createTestTenant(handle.db, { roles: ["responder"] });
    const user = t.users.responder!;
    const cookie = await signIn(user.email, t.password);
    const other = await signIn(user.email, t.password);
    expect((await api({ cookie }).get("/api/v1/me")).status).toBe(200);
    expect((await api({ cookie }).get("/tasks")).status).toBe(200);

    expect(await signOut(cookie)).toBe(200);
    // The same cookie, sent again as a copy would be: refused.
    expectError(await api({ cookie }).get("/api/v1/me"), 401, "unauthorized");
    expectError(await api({ cookie }).get("/api/v1/tasks"), 401, "unauthorized");
    const page = await api({ cookie }).get("/tasks");
    expect(page.status).toBe(307);
    expect(page.headers.get("location")).toContain("/login");
    const rows = await queryRows<{ ended_reason: string | null }>(
      handle.db,
      sql`select ended_reason from sessions where user_id = ${user.userId} order by created_at`,
    );
    expect(rows.map((r) => r.ended_reason)).toEqual(["signed_out", null]);
    expect((await api({ cookie: other }).get("/api/v1/me")).status).toBe(200);
  });

  it("stops a session whose server-side record expired, whatever the cookie says", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const cookie = await signIn(t.users.viewer!.email, t.password);
    expect((await api({ cookie }).get("/api/v1/tasks")).status).toBe(200);
    await handle.db.execute(
      sql`update sessions set expires_at = now() - interval '1 second' where user_id = ${t.users.viewer!.userId}`,
    );
    expectError(await api({ cookie }).get("/api/v1/tasks"), 401, "unauthorized");
    expect((await api({ cookie }).get("/settings")).status).toBe(307);
  });
});

describe("the sign-in throttle", () => {
  it("gives 40 concurrent bad guesses at most the allowed number of password checks; another address still signs in", async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const owner = t.users.owner!;
    const attacker = address();
    const tries = await Promise.all(
      Array.from({ length: 40 }, (_, i) => trySignIn(owner.email, `guess-${i}`, { source: attacker })),
    );
    expect(tries.every((r) => r.cookie === null)).toBe(true);
    const messages = tries.map((r) => refusal(r.url));
    const checked = messages.filter((m) => m.includes(NOT_RIGHT)).length;
    const throttled = messages.filter((m) => m.includes(THROTTLED)).length;
    expect(checked + throttled).toBe(40);
    expect(checked).toBeGreaterThanOrEqual(1);
    expect(checked).toBeLessThanOrEqual(MAX_SIGN_IN_FAILURES);
    // Every claimed check is counted, and none more.
    expect((await throttleRow(owner.email, attacker))!.failures).toBe(checked);

    // The owner, at their own address, signs in at once.
    const home = address();
    const ok = await trySignIn(owner.email, t.password, { source: home });
    expect(ok.cookie).not.toBeNull();
    expect(await throttleRow(owner.email, home)).toBeUndefined();
  });

  it("grows the wait after each failure, refusing without checking while it lasts", async () => {
    const t = await createTestTenant(handle.db, { roles: ["viewer"] });
    const email = t.users.viewer!.email;
    const source = address();
    for (let i = 1; i <= FREE_SIGN_IN_FAILURES; i++) {
      const r = await trySignIn(email, `wrong-${i}`, { source });
      expect(refusal(r.url)).toContain(NOT_RIGHT);
      expect(await throttleRow(email, source)).toEqual({ failures: i, wait: 0 });
    }
    let failures = FREE_SIGN_IN_FAILURES;
    for (let round = 0; round < 3; round++) {
      const r = await trySignIn(email, `wrong-again-${round}`, { source });
      expect(refusal(r.url)).toContain(NOT_RIGHT);
      failures += 1;
      const row = (await throttleRow(email, source))!;
      expect(row).toEqual({ failures, wait: signInDelaySeconds(failures) });
      expect(row.wait).toBe(2 ** round);
      // While a wait lasts, even the right password is not checked, and the message says how long to wait. (The
      // wait is lengthened to 30 s here so that a slow machine cannot outlast it between two requests.)
      await handle.db.execute(
        sql`update sign_in_throttle set next_allowed_at = now() + interval '30 seconds' where email = ${email} and source = ${source}`,
      );
      const early = await trySignIn(email, t.password, { source });
      expect(early.cookie).toBeNull();
      expect(refusal(early.url)).toMatch(/wait (29|30) seconds before the next try/);
      expect((await throttleRow(email, source))!.failures).toBe(failures);
      // The wait passes (moved back here instead of sleeping).
      await handle.db.execute(
        sql`update sign_in_throttle set next_allowed_at = now() where email = ${email} and source = ${source}`,
      );
    }
    // The right password after the wait: signed in, and this address's failures are forgotten.
    expect((await trySignIn(email, t.password, { source })).cookie).not.toBeNull();
    expect(await throttleRow(email, source)).toBeUndefined();
  });

  it(`locks one address after ${MAX_SIGN_IN_FAILURES} failures until the window ends, and one email everywhere after ${MAX_EMAIL_SIGN_IN_FAILURES}`, async () => {
    const t = await createTestTenant(handle.db, { roles: ["owner", "approver"] });
    const email = t.users.approver!.email;
    const source = address();
    await handle.db.execute(sql`
      insert into sign_in_throttle (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
      values (${email}, ${source}, ${MAX_SIGN_IN_FAILURES - 1}, now(), now(), now())`);
    expect(refusal((await trySignIn(email, "wrong-last", { source })).url)).toContain(NOT_RIGHT);
    const locked = await trySignIn(email, t.password, { source });
    expect(locked.cookie).toBeNull();
    expect(refusal(locked.url)).toMatch(/Try again in 1[45] minutes, or ask an owner to unlock it/);
    expect((await trySignIn(email, t.password, { source: address() })).cookie).not.toBeNull();

    // The owner sees the lock and lifts it.
    const owner = { cookie: await signIn(t.users.owner!.email, t.password) };
    const listed = (
      await api(owner).get<{ members: Array<{ email: string; locked: { failures: number } | null }> }>(
        "/api/v1/settings/members",
      )
    ).body;
    expect(listed.members.find((m) => m.email === email)!.locked).toMatchObject({ failures: MAX_SIGN_IN_FAILURES });
    expect((await api(owner).post(`/api/v1/settings/members/${t.users.approver!.userId}/unlock`, {})).status).toBe(200);
    expect((await trySignIn(email, t.password, { source })).cookie).not.toBeNull();

    // Guesses spread over many (or forged) addresses: the email's own ceiling holds everywhere.
    await handle.db.execute(sql`
      insert into sign_in_throttle (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
      values (${email}, '*', ${MAX_EMAIL_SIGN_IN_FAILURES}, now(), now(), now())
      on conflict (email, source) do update set failures = excluded.failures, window_started_at = now()`);
    const everywhere = await trySignIn(email, t.password, { source: address() });
    expect(everywhere.cookie).toBeNull();
    expect(refusal(everywhere.url)).toContain(THROTTLED);
  });
});
