/**
 * Vitest global setup for the integration project:
 * 1. resolves the test database (TEST_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/custody_test),
 *    creates it when missing and applies the committed migrations;
 * 2. generates a signing key and session secret for this run;
 * 3. starts the BUILT app (`npm start`, build dir from NEXT_DIST_DIR or `.next`) on a free port
 *    (INTEGRATION_PORT when set) and waits for `/api/health`;
 * 4. provides `baseUrl`, `databaseUrl` and `signingKeyPem` to the tests (`inject`), and stops the server on teardown.
 * The server's output goes to test-results/integration-server.log and is printed when it never becomes healthy.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { openDatabase } from "@/db";
import {
  assertBuilt,
  ensureDatabase,
  freePort,
  serverCommand,
  redactUrl,
  serverEnv,
  testDatabaseUrl,
  testServerSecrets,
} from "../support/env";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the started server, e.g. http://localhost:3301 (no trailing slash). */
    baseUrl: string;
    /** PostgreSQL URL of the database the server uses. */
    databaseUrl: string;
    /** The server's signing key (PKCS#8 PEM), for tests that call a sealing verb in-process (decision 0035). */
    signingKeyPem: string;
  }
}

const HEALTH_TIMEOUT_MS = 90_000;

/** Starts the database and server; returns the teardown that stops the server. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = process.cwd();
  assertBuilt(root);

  const databaseUrl = testDatabaseUrl();
  await ensureDatabase(databaseUrl);
  const handle = await openDatabase({ url: databaseUrl, max: 1 });
  await handle.close();

  const port = process.env.INTEGRATION_PORT ? Number(process.env.INTEGRATION_PORT) : await freePort();
  const baseUrl = `http://localhost:${port}`;
  const logDir = path.join(root, "test-results");
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, "integration-server.log");
  const log = fs.openSync(logFile, "w");

  const { signingKeyPem, nextauthSecret } = testServerSecrets();
  const start = serverCommand(root, port);
  const child = spawn(start.command, start.args, {
    cwd: root,
    // The tests stand in for one reverse proxy that names each client in X-Forwarded-For (sign-in from several
    // addresses); a server without the setting ignores the header (tests/integration/sessions.test.ts).
    env: { ...serverEnv({ port, databaseUrl, signingKeyPem, nextauthSecret }), CUSTODY_TRUSTED_PROXY_HOPS: "1" },
    stdio: ["ignore", log, log],
    detached: true,
  });
  fs.closeSync(log);

  try {
    await waitForHealth(baseUrl, child);
  } catch (err) {
    await stop(child);
    const output = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "(no log)";
    console.error(`\n--- server output (${logFile}) ---\n${output}\n--- end of server output ---`);
    throw err;
  }

  project.provide("baseUrl", baseUrl);
  project.provide("databaseUrl", databaseUrl);
  project.provide("signingKeyPem", signingKeyPem);
  console.log(`[integration] server ${baseUrl} on ${redactUrl(databaseUrl)} (log: ${path.relative(root, logFile)})`);

  return async () => {
    await stop(child);
  };
}

async function waitForHealth(baseUrl: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the server exited (code ${child.exitCode}, signal ${child.signalCode}) before /api/health answered.`,
      );
    }
    try {
      const res = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(5_000) });
      const body = await res.text();
      if (res.status === 200 && JSON.parse(body)?.ok === true) return;
      last = `${res.status} ${body.slice(0, 200)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(
    `${baseUrl}/api/health did not answer 200 {"ok": true} within ${HEALTH_TIMEOUT_MS / 1000} s (last: ${last}).`,
  );
}

/** Stops the server's process group: SIGTERM, then SIGKILL after 5 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
