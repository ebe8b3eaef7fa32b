/**
 * Playwright global setup: creates the test database when missing, applies the committed migrations, and
 * waits until the server started by `webServer` answers `/api/health` with `{"ok": true}`.
 * (Playwright starts the web server before this runs; the server opens the database lazily, on the first
 * request, so nothing touches the database before it exists.)
 */
import type { FullConfig } from "@playwright/test";
import { openDatabase } from "@/db";
import { ensureDatabase, redactUrl, testDatabaseUrl } from "../tests/support/env";

const HEALTH_TIMEOUT_MS = 60_000;

/** Prepares the database and waits for the server. @throws Error when the server never becomes healthy. */
export default async function globalSetup(config: FullConfig): Promise<void> {
  const databaseUrl = testDatabaseUrl();
  await ensureDatabase(databaseUrl);
  const handle = await openDatabase({ url: databaseUrl, max: 1 });
  await handle.close();

  const baseURL = config.projects[0]?.use.baseURL ?? process.env.E2E_BASE_URL;
  if (!baseURL) throw new Error("playwright.config.ts sets no baseURL");
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseURL}/api/health`, { signal: AbortSignal.timeout(5_000) });
      const text = await res.text();
      if (res.status === 200) {
        console.log(`[e2e] server ${baseURL} on ${redactUrl(databaseUrl)}`);
        return;
      }
      last = `${res.status} ${text.slice(0, 200)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${baseURL}/api/health did not answer 200 within ${HEALTH_TIMEOUT_MS / 1000} s (last: ${last}).`);
}
