/**
 * First run, as a new operator does it: a server on an empty PostgreSQL database shows how to create the first
 * workspace instead of a sign-in form nobody can use; `npm run setup` (the real script, run as a child process)
 * creates the workspace and a one-time link for its owner, and is safe to run again; the owner sets a password
 * through the link, invites an approver and a responder, creates a runtime key — a team at work. Also: the
 * automation path (`CUSTODY_SETUP_PASSWORD`), and setup on the embedded database (PGlite).
 * The database is created for this test and dropped after it; the server is a second `npm start` of the build.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, queryRows } from "@/db";
import { verifyPassword } from "@/lib/domain/tenancy/passwords";
import { setupWorkspace } from "@/lib/domain/tenancy/setup";
import {
  dropDatabase,
  ensureDatabase,
  freePort,
  serverCommand,
  serverEnv,
  testServerSecrets,
  withDatabase,
} from "../support/env";
import { rid } from "./helpers";

const run = promisify(execFile);
const ROOT = process.cwd();

type Server = { url: string; child: ChildProcess; log: string };

/** Starts the production server of the build on `databaseUrl` and waits for /api/health. */
async function startServer(databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const secrets = testServerSecrets();
  const log = path.join(ROOT, "test-results", `setup-server-${port}.log`);
  fs.mkdirSync(path.dirname(log), { recursive: true });
  const fd = fs.openSync(log, "w");
  const start = serverCommand(ROOT, port);
  const child = spawn(start.command, start.args, {
    cwd: ROOT,
    env: serverEnv({ port, databaseUrl, ...secrets }),
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  const url = `http://localhost:${port}`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${fs.readFileSync(log, "utf8")}`);
    try {
      if ((await fetch(`${url}/api/health`)).status === 200) return { url, child, log };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the setup test's server did not become healthy: ${fs.readFileSync(log, "utf8")}`);
}

async function stopServer(server: Server | undefined): Promise<void> {
  const child = server?.child;
  if (!child || child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(-child.pid, "SIGTERM");
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** `npm run setup -- <args>` with `env` (the script itself, through tsx). Never throws: returns the exit code. */
async function setup(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const base = { ...process.env, ...env };
  delete base.CUSTODY_SETUP_PASSWORD;
  if (env.CUSTODY_SETUP_PASSWORD) base.CUSTODY_SETUP_PASSWORD = env.CUSTODY_SETUP_PASSWORD;
  try {
    const { stdout, stderr } = await run(
      path.join(ROOT, "node_modules", ".bin", "tsx"),
      ["scripts/setup.ts", ...args],
      { cwd: ROOT, env: base },
    );
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

function linkIn(out: string): string {
  const m = /(http:\/\/\S+\/invitations\/(rci_[A-Za-z0-9_-]+))/.exec(out);
  if (!m) throw new Error(`no link in the setup output:\n${out}`);
  return m[1]!;
}

/** A small cookie-aware client for the second server (sign-in through next-auth's HTTP flow). */
function client(base: string) {
  const call = async (method: string, p: string, opts: { json?: unknown; cookie?: string } = {}) => {
    const res = await fetch(`${base}${p}`, {
      method,
      redirect: "manual",
      headers: {
        ...(opts.json !== undefined ? { "content-type": "application/json" } : {}),
        ...(opts.cookie ? { cookie: opts.cookie } : {}),
      },
      body: opts.json !== undefined ? JSON.stringify(opts.json) : undefined,
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // a page
    }
    return { status: res.status, text, body: body as Record<string, unknown>, headers: res.headers };
  };
  const signIn = async (email: string, password: string): Promise<string | null> => {
    const csrf = await fetch(`${base}/api/auth/csrf`);
    const jar = csrf.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const res = await fetch(`${base}/api/auth/callback/credentials`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar },
      body: new URLSearchParams({ csrfToken, email, password, json: "true" }).toString(),
    });
    await res.text();
    const session = res.headers.getSetCookie().find((c) => c.split("=")[0]!.endsWith("next-auth.session-token"));
    return session ? session.split(";")[0]! : null;
  };
  return { call, signIn };
}

describe("first run on an empty PostgreSQL database", () => {
  const databaseUrl = withDatabase(inject("databaseUrl"), `custody_test_setup_${rid()}`);
  let server: Server | undefined;

  beforeAll(async () => {
    await ensureDatabase(databaseUrl);
    server = await startServer(databaseUrl);
  });
  afterAll(async () => {
    await stopServer(server);
    await dropDatabase(databaseUrl);
  });

  it("shows the setup command, then a team of owner, approver and responder gets to work; setup runs again safely", async () => {
    const { call, signIn } = client(server!.url);
    // No workspace: the sign-in page says exactly what to run, and pages lead there.
    const empty = await call("GET", "/login");
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('data-testid="setup-needed"');
    expect(empty.text).toContain(
      "npm run setup -- --workspace &lt;slug&gt; --name &quot;&lt;name&gt;&quot; --owner &lt;email&gt;",
    );
    expect(empty.text).not.toContain('id="password"');
    expect((await call("GET", "/tasks")).headers.get("location")).toContain("/login");

    const env = { DATABASE_URL: databaseUrl, NEXTAUTH_URL: server!.url };
    const args = ["--workspace", "first-team", "--name", "First team", "--owner", "Olivia@Example.test"];
    const bad = await setup(["--workspace", "First Team", "--name", "x", "--owner", "nope"], env);
    expect(bad.code).toBe(2);
    expect(bad.out).toContain("--workspace must be a slug");
    expect(bad.out).toContain("--owner must be an email address");

    const first = await setup(args, env);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain('workspace "first-team" (First team): created');
    const firstLink = linkIn(first.out);
    expect(firstLink.startsWith(`${server!.url}/invitations/`)).toBe(true);
    // Run again: the workspace is kept, the unused link is replaced by a new one.
    const second = await setup(args, env);
    expect(second.code, second.out).toBe(0);
    expect(second.out).toContain("already there");
    const link = linkIn(second.out);
    expect(link).not.toBe(firstLink);

    const db = await openDatabase({ url: databaseUrl, max: 1 });
    try {
      expect(await queryRows(db.db, sql`select slug from tenants`)).toEqual([{ slug: "first-team" }]);
      const stored = JSON.stringify(await queryRows(db.db, sql`select * from invitations`));
      expect(stored).not.toContain(link.split("/").at(-1)!);
    } finally {
      await db.close();
    }

    // The server now offers the sign-in form; the owner uses the newest link.
    expect((await call("GET", "/login")).text).toContain('id="password"');
    const token = (u: string) => u.slice(u.lastIndexOf("/") + 1);
    expect(
      (
        await call("POST", `/api/v1/invitations/${token(firstLink)}/accept`, {
          json: { password: "olivia-owner-pw-1" },
        })
      ).status,
    ).toBe(410);
    const accepted = await call("POST", `/api/v1/invitations/${token(link)}/accept`, {
      json: { password: "olivia-owner-pw-1", name: "Olivia" },
    });
    expect(accepted.status, accepted.text).toBe(200);
    const owner = await signIn("olivia@example.test", "olivia-owner-pw-1");
    expect(owner).not.toBeNull();
    expect((await call("GET", "/api/v1/me", { cookie: owner! })).body).toMatchObject({
      role: "owner",
      workspace: { slug: "first-team" },
    });

    // The owner adds an approver and a responder, and creates a runtime key.
    const people: Record<string, string> = {};
    for (const role of ["approver", "responder"] as const) {
      const email = `${role}@example.test`;
      const inv = await call("POST", "/api/v1/settings/invitations", { cookie: owner!, json: { email, role } });
      expect(inv.status, inv.text).toBe(200);
      const joined = await call("POST", `/api/v1/invitations/${token(String(inv.body.invitation_url))}/accept`, {
        json: { password: `${role}-password-1` },
      });
      expect(joined.status, joined.text).toBe(200);
      const session = await signIn(email, `${role}-password-1`);
      expect((await call("GET", "/api/v1/me", { cookie: session! })).body).toMatchObject({ role });
      people[role] = session!;
    }
    const key = await call("POST", "/api/v1/settings/api-keys", { cookie: owner!, json: { name: "first runtime" } });
    expect(key.status, key.text).toBe(200);
    const runtime = await fetch(`${server!.url}/api/v1/tasks`, {
      headers: { authorization: `Bearer ${String(key.body.key)}` },
    });
    expect(runtime.status).toBe(200);
    const listed = await call("GET", "/api/v1/settings/members", { cookie: people.responder! });
    expect((listed.body.members as Array<{ role: string }>).map((m) => m.role).sort()).toEqual([
      "approver",
      "owner",
      "responder",
    ]);

    // A third run finds the owner in place and changes nothing.
    const third = await setup(args, env);
    expect(third.code, third.out).toBe(0);
    expect(third.out).toContain("already an owner here; nothing to do");
    expect(third.out).not.toContain("/invitations/");
    expect((await call("GET", "/api/v1/me", { cookie: owner! })).status).toBe(200);
  });

  it("takes the owner's password from CUSTODY_SETUP_PASSWORD for automation, storing only its hash", async () => {
    const { call, signIn } = client(server!.url);
    const password = `automation-${rid(6)}`;
    const res = await setup(["--workspace", "robots", "--name", "Robots", "--owner", "ops@example.test"], {
      DATABASE_URL: databaseUrl,
      CUSTODY_SETUP_PASSWORD: password,
    });
    expect(res.code, res.out).toBe(0);
    expect(res.out).toContain("account created with the password from CUSTODY_SETUP_PASSWORD");
    expect(res.out).not.toContain(password);
    const cookie = await signIn("ops@example.test", password);
    expect((await call("GET", "/api/v1/me", { cookie: cookie! })).body).toMatchObject({
      role: "owner",
      workspace: { slug: "robots" },
    });
    const db = await openDatabase({ url: databaseUrl, max: 1 });
    try {
      const everything = JSON.stringify([
        await queryRows(db.db, sql`select * from users`),
        await queryRows(db.db, sql`select * from audit_log`),
      ]);
      expect(everything).not.toContain(password);
      const [user] = await queryRows<{ password_hash: string }>(
        db.db,
        sql`select password_hash from users where email = 'ops@example.test'`,
      );
      expect(user!.password_hash).toMatch(/^\$argon2id\$/);
    } finally {
      await db.close();
    }
  });
});

describe("first run on the embedded database", () => {
  // One PGlite in this process (the command line itself is exercised on PostgreSQL above; only the driver differs).
  it(
    "creates the workspace and owner on PGlite with a generated password shown once, and runs again safely",
    { timeout: 180_000 },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-setup-"));
      try {
        const db = await openDatabase({ dir });
        try {
          const input = { workspace: "solo", name: "Solo", owner: "me@example.test" };
          const first = await setupWorkspace(db.db, input, { password: "generate", baseUrl: "http://localhost:3000" });
          expect(first).toMatchObject({ workspace: { slug: "solo", created: true }, owner: { state: "created" } });
          const password = first.generated_password!;
          expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
          const again = await setupWorkspace(db.db, input, { password: "generate", baseUrl: "http://localhost:3000" });
          expect(again).toEqual({
            workspace: { id: first.workspace.id, slug: "solo", name: "Solo", created: false },
            owner: { email: "me@example.test", state: "already_owner" },
          });
          const rows = await queryRows<{ slug: string; role: string; password_hash: string }>(
            db.db,
            sql`select t.slug, m.role, u.password_hash from tenants t join memberships m on m.tenant_id = t.id join users u on u.id = m.user_id`,
          );
          expect(rows).toHaveLength(1);
          expect(rows[0]).toMatchObject({ slug: "solo", role: "owner" });
          expect(rows[0]!.password_hash).not.toContain(password);
          expect(await verifyPassword(rows[0]!.password_hash, password)).toBe(true);
        } finally {
          await db.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
