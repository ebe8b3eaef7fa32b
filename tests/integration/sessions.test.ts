/**
 * Sessions and sign-in, over HTTP against the built server:
 * - the session cookie is not enough on its own: signing out (and an expired server-side session) stops it on the
 *   very next request, for the API and for pages;
 * - the sign-in throttle counts per email and source together, claims each password check with one guarded
 *   statement (40 concurrent bad guesses get at most the allowed number of checks), grows the wait between tries,
 *   and never stops the same email at another address;
 * - the client address is the socket's peer unless a proxy count is configured: 100 failures with forged
 *   X-Forwarded-For headers never lock out the person at their own address, with or without that setting.
 */
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { queryRows } from "@/db";
import {
  FREE_SIGN_IN_FAILURES,
  MAX_EMAIL_SIGN_IN_FAILURES,
  MAX_SIGN_IN_FAILURES,
  signInDelaySeconds,
} from "@/lib/domain/tenancy/sign-in-limits";
import { expectError } from "./support/responses";
import { api, createTestTenant, rid, signIn, signOut, trySignIn, testDbForFile } from "./helpers";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";

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

  it(`locks one address after ${MAX_SIGN_IN_FAILURES} failures until the window ends; past ${MAX_EMAIL_SIGN_IN_FAILURES} across all, only the addresses that failed`, async () => {
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

    // Guesses spread over many addresses past the email's ceiling: an address that failed gets no further check,
    // even with the right password; an address with no failures still signs in.
    const failed = address();
    await handle.db.execute(sql`
      insert into sign_in_throttle (email, source, failures, window_started_at, last_failure_at, next_allowed_at)
      values (${email}, '*', ${MAX_EMAIL_SIGN_IN_FAILURES}, now(), now(), now()),
             (${email}, ${failed}, 1, now(), now(), now())
      on conflict (email, source) do update set failures = excluded.failures, window_started_at = now()`);
    const again = await trySignIn(email, t.password, { source: failed });
    expect(again.cookie).toBeNull();
    expect(refusal(again.url)).toMatch(/Too many failed sign-ins for this email\. Try again in 1[45] minutes/);
    expect((await throttleRow(email, failed))!.failures).toBe(1);
    expect((await trySignIn(email, t.password, { source: address() })).cookie).not.toBeNull();
  });
});

/** Runs `job` for 0…n-1 with at most `width` at once. */
async function inPool<T>(n: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

async function throttleSources(email: string): Promise<Map<string, number>> {
  const rows = await queryRows<{ source: string; failures: number }>(
    handle.db,
    sql`select source, failures from sign_in_throttle where email = ${email}`,
  );
  return new Map(rows.map((r) => [r.source, Number(r.failures)]));
}

describe("the client address behind X-Forwarded-For", () => {
  it("with one proxy configured, is the entry that proxy appended; 100 failures from other addresses slow those, not the person", async () => {
    // The suite's server runs with CUSTODY_TRUSTED_PROXY_HOPS=1 (tests/integration/global-setup.ts).
    const t = await createTestTenant(handle.db, { roles: ["owner"] });
    const email = t.users.owner!.email;
    const sources = Array.from({ length: MAX_EMAIL_SIGN_IN_FAILURES }, (_, i) => `198.18.${i >> 8}.${i & 255}`);
    const tries = await inPool(sources.length, 6, (i) =>
      trySignIn(email, `guess-${i}`, { source: `192.0.2.66, ${sources[i]}` }),
    );
    expect(tries.every((r) => r.cookie === null && refusal(r.url).includes(NOT_RIGHT))).toBe(true);
    const rows = await throttleSources(email);
    // The header is read as configured: the last entry, never the one the client wrote before it.
    expect(rows.get("192.0.2.66")).toBeUndefined();
    expect(sources.every((s) => rows.get(s) === 1)).toBe(true);
    expect(rows.get("*")).toBe(MAX_EMAIL_SIGN_IN_FAILURES);

    // Past the ceiling, an address that failed is not checked again, even with the right password.
    const failed = await trySignIn(email, t.password, { source: sources[0] });
    expect(failed.cookie).toBeNull();
    expect(refusal(failed.url)).toContain(THROTTLED);
    // The person at their own address signs in with the right password at once.
    const home = address();
    expect((await trySignIn(email, t.password, { source: home })).cookie).not.toBeNull();
    expect((await throttleSources(email)).get(home)).toBeUndefined();
  });

  describe("with no proxy configured", () => {
    let server: NextServer;
    beforeAll(async () => {
      const port = await freePort();
      const env = serverEnv({ port, databaseUrl: inject("databaseUrl"), ...testServerSecrets() });
      delete env.CUSTODY_TRUSTED_PROXY_HOPS;
      server = new NextServer({
        root: process.cwd(),
        port,
        env,
        logFile: path.join(process.cwd(), "test-results", "sessions-no-proxy-server.log"),
      });
      await server.start();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("ignores X-Forwarded-For: 100 forged-header failures count against the sender's own address, and the real person signs in", async () => {
      const t = await createTestTenant(handle.db, { roles: ["owner"] });
      const email = t.users.owner!.email;
      const port = new URL(server.baseUrl).port;
      // Two real peers of one machine: the attacker over IPv4, the person over IPv6 loopback.
      const attacker = `http://127.0.0.1:${port}`;
      const person = `http://[::1]:${port}`;
      const forged = Array.from({ length: 100 }, () => address());
      const tries = await inPool(forged.length, 6, (i) =>
        trySignIn(email, `guess-${i}`, { source: forged[i], base: attacker }),
      );
      expect(tries.every((r) => r.cookie === null)).toBe(true);

      const rows = await throttleSources(email);
      expect(forged.some((f) => rows.has(f))).toBe(false);
      expect([...rows.keys()].sort()).toEqual(["*", "127.0.0.1"]);
      // The attacker's own address is what got slowed (growing waits, then its lock), the email's count with it: at
      // most the pair's allowance was checked, every other try was refused unchecked.
      expect(rows.get("127.0.0.1")!).toBeGreaterThanOrEqual(FREE_SIGN_IN_FAILURES);
      expect(rows.get("127.0.0.1")!).toBeLessThanOrEqual(MAX_SIGN_IN_FAILURES);
      expect(rows.get("*")).toBe(rows.get("127.0.0.1"));
      const throttled = tries.filter((r) => refusal(r.url).includes(THROTTLED)).length;
      expect(throttled).toBe(forged.length - rows.get("127.0.0.1")!);
      // The person, at another address, signs in with the right password; a header they might send changes nothing.
      expect((await trySignIn(email, t.password, { base: person })).cookie).not.toBeNull();
      expect((await trySignIn(email, t.password, { base: person, source: "127.0.0.1" })).cookie).not.toBeNull();
    });
  });
});
