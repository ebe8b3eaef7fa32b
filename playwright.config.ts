/**
 * Playwright: end-to-end tests in Debian's Chromium against the production build (`next build`, then
 * `next start` here) on the PostgreSQL test database (TEST_DATABASE_URL, else DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/custody_test). e2e/global-setup.ts creates and migrates that database
 * before the first test; specs seed their own tenants through e2e/fixtures.ts.
 *
 * Env: E2E_PORT (default 3390), E2E_OIDC_PORT (the test identity provider's, default E2E_PORT + 20000),
 * NEXT_DIST_DIR (build directory, default .next), CHROMIUM_PATH (default /usr/bin/chromium).
 *
 * The server trusts an OpenID Connect provider at E2E_OIDC_ISSUER (CUSTODY_OIDC_*), which the single sign-on spec
 * starts itself (e2e/identity-provider.ts); other specs never reach it.
 */
import { randomBytes } from "node:crypto";
import { defineConfig, devices } from "@playwright/test";
import { assertBuilt, serverEnv, testDatabaseUrl, testServerSecrets } from "./tests/support/env";

const port = Number(process.env.E2E_PORT || 3390);
const baseURL = `http://localhost:${port}`;

// One signing key and session secret per run. Set on process.env so that the workers, which load this file
// again, see the same values as the server.
if (!process.env.E2E_SIGNING_KEY || !process.env.E2E_NEXTAUTH_SECRET) {
  const secrets = testServerSecrets();
  process.env.E2E_SIGNING_KEY = secrets.signingKeyPem;
  process.env.E2E_NEXTAUTH_SECRET = secrets.nextauthSecret;
}
// The test identity provider: on 127.0.0.1, so its cookies are not the app's (cookies ignore ports).
const oidcPort = Number(process.env.E2E_OIDC_PORT || port + 20000);
process.env.E2E_OIDC_ISSUER = `http://127.0.0.1:${oidcPort}`;
process.env.E2E_OIDC_CLIENT_ID = "run-custody-e2e";
process.env.E2E_OIDC_CLIENT_SECRET ||= randomBytes(24).toString("base64url");
const databaseUrl = testDatabaseUrl();
process.env.E2E_BASE_URL = baseURL;
process.env.E2E_DATABASE_URL = databaseUrl;

const webServerEnv = Object.fromEntries(
  Object.entries({
    ...serverEnv({
      port,
      databaseUrl,
      signingKeyPem: process.env.E2E_SIGNING_KEY,
      nextauthSecret: process.env.E2E_NEXTAUTH_SECRET,
    }),
    CUSTODY_OIDC_ISSUER: process.env.E2E_OIDC_ISSUER,
    CUSTODY_OIDC_CLIENT_ID: process.env.E2E_OIDC_CLIENT_ID,
    CUSTODY_OIDC_CLIENT_SECRET: process.env.E2E_OIDC_CLIENT_SECRET,
    CUSTODY_OIDC_NAME: "Test IdP",
  }).filter((e): e is [string, string] => typeof e[1] === "string"),
);

assertBuilt();

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/e2e",
  globalSetup: "./e2e/global-setup.ts",
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    video: "off",
  },
  projects: [
    {
      name: "chromium",
      use: {
        ...devices["Desktop Chrome"],
        launchOptions: {
          executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
          args: [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
          ],
        },
      },
    },
  ],
  webServer: {
    // Idle connections stay open for ten minutes: with Node's default of 5 s, a test busy in the browser for about
    // that long could reuse its API request context's kept-alive socket just as the server closed it (ECONNRESET).
    command: `node --import tsx scripts/serve.ts -p ${port} --keepAliveTimeout 600000`,
    // Ready when the port accepts connections; global-setup then creates and migrates the database and waits
    // for /api/health (Playwright starts the web server before the global setup runs).
    port,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
    env: webServerEnv,
  },
});
