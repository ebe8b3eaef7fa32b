/**
 * What the integration and end-to-end suites share: which database they use, creating it, the secrets a
 * test server runs with, and where the build lives. No test framework imports here, so both Vitest and
 * Playwright can load it.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { generateSigningKey } from "@/lib/domain/crypto/signing";

/** Default test database when neither TEST_DATABASE_URL nor DATABASE_URL is set. */
export const DEFAULT_TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/custody_test";

/** The PostgreSQL URL the tests use: `TEST_DATABASE_URL`, else `DATABASE_URL`, else the local default. */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

/** The same server with another database name (e.g. `postgres` for CREATE DATABASE). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** The database name of a PostgreSQL URL. */
export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  if (!name) throw new Error(`The database URL ${redactUrl(url)} names no database.`);
  return name;
}

/** The URL with any password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

/**
 * Creates the database named in `url` when it does not exist (connecting to the server's `postgres` database).
 * @throws Error with the URL (password hidden) when the server cannot be reached.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const { default: postgres } = await import("postgres");
  const name = databaseName(url);
  const admin = postgres(withDatabase(url, "postgres"), { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) {
      try {
        await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another process may have created it between the check and the CREATE (42P04 duplicate_database).
        if ((err as { code?: string }).code !== "42P04") throw err;
      }
    }
  } catch (err) {
    throw new Error(
      `Cannot prepare the test database ${redactUrl(url)}: ${err instanceof Error ? err.message : String(err)}. ` +
        "Is PostgreSQL running? Set TEST_DATABASE_URL to a server you can create databases on.",
      { cause: err },
    );
  } finally {
    await admin.end();
  }
}

/** Drops a database (used for scratch databases made by tests). */
export async function dropDatabase(url: string): Promise<void> {
  const { default: postgres } = await import("postgres");
  const name = databaseName(url);
  const admin = postgres(withDatabase(url, "postgres"), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await admin.end();
  }
}

/** Fresh secrets for one test run: an Ed25519 signing key (PKCS#8 PEM) and a session secret. */
export function testServerSecrets(): { signingKeyPem: string; nextauthSecret: string } {
  return { signingKeyPem: generateSigningKey().pem, nextauthSecret: randomBytes(32).toString("base64url") };
}

/**
 * How to start the production server (`npm start`, scripts/serve.ts: the lean layer for the runtime's hot routes in
 * front of Next) on `port` from the build in `root`: the program and its arguments for `spawn`, in one process.
 * Idle connections stay open for `keepAliveMs` (default ten minutes: a test busy elsewhere for a while must not meet a
 * socket the server just closed).
 */
export function serverCommand(root: string, port: number, keepAliveMs = 600_000): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      path.join(root, "scripts", "serve.ts"),
      "-p",
      String(port),
      "--keepAliveTimeout",
      String(keepAliveMs),
    ],
  };
}

/** The build directory the server serves: `NEXT_DIST_DIR` (see next.config.ts) or `.next`. */
export function distDir(root = process.cwd()): string {
  return path.resolve(root, process.env.NEXT_DIST_DIR || ".next");
}

/** @throws Error telling the reader to build first when `<distDir>/BUILD_ID` is missing. */
export function assertBuilt(root = process.cwd()): void {
  const dir = distDir(root);
  if (!fs.existsSync(path.join(dir, "BUILD_ID"))) {
    throw new Error(
      `No production build in ${dir} (BUILD_ID is missing). Run \`npm run build\` first` +
        (process.env.NEXT_DIST_DIR ? ` with NEXT_DIST_DIR=${process.env.NEXT_DIST_DIR}.` : "."),
    );
  }
}

/** A TCP port nobody listens on: `preferred` when given, else one the OS picks. */
export async function freePort(preferred?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(preferred ?? 0, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The environment a test server runs with (production mode, PostgreSQL, the run's secrets). */
export function serverEnv(opts: {
  port: number;
  databaseUrl: string;
  signingKeyPem: string;
  nextauthSecret: string;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(opts.port),
    DATABASE_URL: opts.databaseUrl,
    CUSTODY_SIGNING_KEY: opts.signingKeyPem,
    NEXTAUTH_SECRET: opts.nextauthSecret,
    NEXTAUTH_URL: `http://localhost:${opts.port}`,
    // The notification worker delivers only in the test that starts its own servers for it (webhooks.test.ts): a
    // worker with another session secret could not open the endpoints' secrets.
    CUSTODY_NOTIFICATIONS: "off",
  };
  // The server must not fall back to an embedded data directory of the developer.
  delete env.CUSTODY_DATA_DIR;
  return env;
}
