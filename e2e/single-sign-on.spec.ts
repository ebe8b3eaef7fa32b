/**
 * Single sign-on against a real OpenID Connect provider (e2e/identity-provider.ts, started here on its own port;
 * the server trusts it through CUSTODY_OIDC_*, set by playwright.config.ts). Decision 0041:
 * - a verified email that was invited signs in through the provider with the invited role, and its session ends
 *   like a password session (sign-out, removal);
 * - an existing member's verified email signs them in to their workspace;
 * - an unverified or uninvited email gets the refusal page, no account, no membership, no session;
 * - an id token signed by another key, for another audience or expired is refused before anything is written,
 *   and the same sign-in with an honest token then works.
 */
import type { Browser, Page } from "@playwright/test";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { Role } from "@/db/schema/enums";
import type { FullTestTenant } from "../tests/support/tenants";
import { expect, loginAs, rid, test } from "./fixtures";
import { providerSettings, startIdentityProvider, type IdentityProvider, type TokenMode } from "./identity-provider";

let idp: IdentityProvider;

// Each sign-in goes through two sites and a page of each; a test holds up to five of them.
test.describe.configure({ timeout: 180_000 });

test.beforeAll(async () => {
  idp = await startIdentityProvider();
});

test.afterAll(async () => {
  await idp?.stop();
});

test.beforeEach(async ({ page }) => {
  idp.setMode("honest");
  // The provider's development login page loads a web font; nothing here needs it.
  await page.route(/fonts\.(googleapis|gstatic)\.com/, (route) => route.abort());
});

/** A new address nobody has used. */
const newEmail = (what: string) => `sso-${what}-${rid(8)}@example.test`.toLowerCase();

/**
 * From /login through the provider's login page and back: clicks "Sign in with Test IdP", signs in at the provider
 * as `login` (a fresh provider session each time, so each call really signs in there).
 */
async function signInThroughProvider(page: Page, login: string): Promise<void> {
  await page.context().clearCookies({ domain: new URL(providerSettings().issuer).hostname });
  await page.goto("/login");
  await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
  await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith("/interaction/"));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password works at the test provider");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL((url) => url.origin !== idp.issuer && !url.pathname.startsWith("/api/auth/callback"));
}

/** The tenant's owner, signed in with a password in a browser context of their own, using the real API. */
async function ownerApi(browser: Browser, tenant: FullTestTenant) {
  const context = await browser.newContext({ baseURL: providerSettings().appUrl });
  const page = await context.newPage();
  await loginAs(page, tenant.users.owner.email, tenant.password);
  return {
    async invite(email: string, role: Role): Promise<void> {
      const res = await page.request.post("/api/v1/settings/invitations", { data: { email, role } });
      expect(res.ok(), await res.text()).toBe(true);
    },
    async remove(userId: string): Promise<void> {
      const res = await page.request.delete(`/api/v1/settings/members/${userId}`);
      expect(res.ok(), await res.text()).toBe(true);
    },
    close: () => context.close(),
  };
}

async function userId(db: Db, email: string): Promise<string | undefined> {
  const [row] = await queryRows<{ id: string }>(db, sql`select id from users where email = ${email}`);
  return row?.id;
}

async function openInvitations(db: Db, tenantId: string, email: string): Promise<number> {
  const rows = await queryRows(
    db,
    sql`select 1 from invitations where tenant_id = ${tenantId} and email = ${email}
          and accepted_at is null and withdrawn_at is null and expires_at > now()`,
  );
  return rows.length;
}

/** The person is signed out: a dashboard page sends them to /login. */
async function expectSignedOut(page: Page): Promise<void> {
  await page.goto("/tasks");
  await expect(page).toHaveURL(/\/login/);
}

test("an invited person with a verified email signs in through the provider; sign-out and removal end it like a password session", async ({
  page,
  browser,
  tenant,
  db,
}) => {
  const email = newEmail("invited");
  const login = `acct-${rid(6)}`;
  idp.addAccount(login, { email, email_verified: true, name: "Sam Single" });
  const owner = await ownerApi(browser, tenant);
  await owner.invite(email, "approver");

  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.getByTestId("current-user")).toContainText(email);
  await expect(page.getByTestId("current-user")).toContainText("approver");

  const id = await userId(db.db, email);
  expect(id).toBeTruthy();
  expect(await openInvitations(db.db, tenant.tenantId, email)).toBe(0);
  const [audit] = await queryRows<{ details: Record<string, unknown> }>(
    db.db,
    sql`select details from audit_log where tenant_id = ${tenant.tenantId} and action = 'invitation.accepted'
          and target = ${`user:${id}`}`,
  );
  expect(audit?.details).toMatchObject({
    email,
    role: "approver",
    via: "single_sign_on",
    issuer: idp.issuer,
    account_created: true,
  });
  // The account's password is one nobody knows: the password form does not let the email in.
  await page.context().clearCookies();
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("any password works at the test provider");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.locator("form").getByRole("alert")).toHaveText(/email or password is not right/i);

  // Sign-out ends the server-side session, as for a password session.
  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/tasks$/);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  const [ended] = await queryRows<{ n: string | number }>(
    db.db,
    sql`select count(*) as n from sessions where user_id = ${id} and ended_reason = 'signed_out'`,
  );
  expect(Number(ended?.n)).toBe(1);
  await expectSignedOut(page);

  // The membership stays: the next sign-in through the provider needs no invitation.
  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.getByTestId("current-user")).toContainText("approver");

  // Removal ends the session on the next request, and the provider cannot bring the person back.
  await owner.remove(id!);
  await expectSignedOut(page);
  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/login\/refused\?reason=not_invited/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No workspace has invited this email");
  await expectSignedOut(page);
  await owner.close();
});

test("an existing member's verified email signs them in to their workspace with their role", async ({
  page,
  tenant,
}) => {
  const login = `acct-${rid(6)}`;
  idp.addAccount(login, { email: tenant.users.responder.email, email_verified: true });
  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.getByTestId("current-user")).toContainText(tenant.users.responder.email);
  await expect(page.getByTestId("current-user")).toContainText("responder");
});

test("an unverified email gets a clear page and no membership, even when it was invited", async ({
  page,
  browser,
  tenant,
  db,
}) => {
  const email = newEmail("unverified");
  const login = `acct-${rid(6)}`;
  idp.addAccount(login, { email, email_verified: false });
  const owner = await ownerApi(browser, tenant);
  await owner.invite(email, "viewer");
  await owner.close();

  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/login\/refused\?reason=email_unverified/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your email address is not verified");
  await expect(page.getByTestId("sign-in-refused")).toContainText("Test IdP did not confirm");
  expect(await userId(db.db, email)).toBeUndefined();
  expect(await openInvitations(db.db, tenant.tenantId, email)).toBe(1);
  await expectSignedOut(page);
});

test("a verified email that no workspace invited gets a clear page and no account", async ({ page, db }) => {
  const email = newEmail("uninvited");
  const login = `acct-${rid(6)}`;
  idp.addAccount(login, { email, email_verified: true });
  await signInThroughProvider(page, login);
  await expect(page).toHaveURL(/\/login\/refused\?reason=not_invited/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No workspace has invited this email");
  await page.getByRole("link", { name: "Back to sign-in" }).click();
  await expect(page).toHaveURL(/\/login$/);
  expect(await userId(db.db, email)).toBeUndefined();
  await expectSignedOut(page);
});

const DOCTORED: { mode: Exclude<TokenMode, "honest">; what: string }[] = [
  { mode: "bad_signature", what: "signed by a key that is not the provider's" },
  { mode: "wrong_audience", what: "issued for another client (wrong audience)" },
  { mode: "expired", what: "already expired" },
];

for (const { mode, what } of DOCTORED) {
  test(`an id token ${what} is refused before anything is written; the honest token then signs in`, async ({
    page,
    browser,
    tenant,
    db,
  }) => {
    const email = newEmail(mode.replace("_", "-"));
    const login = `acct-${rid(6)}`;
    idp.addAccount(login, { email, email_verified: true });
    const owner = await ownerApi(browser, tenant);
    await owner.invite(email, "responder");
    await owner.close();

    idp.setMode(mode);
    await signInThroughProvider(page, login);
    await expect(page).toHaveURL(/\/login\?.*error=OAuthCallback/);
    await expect(page.getByTestId("provider-error")).toContainText("could not be verified");
    await expectSignedOut(page);
    expect(await userId(db.db, email)).toBeUndefined();
    expect(await openInvitations(db.db, tenant.tenantId, email)).toBe(1);

    idp.setMode("honest");
    await signInThroughProvider(page, login);
    await expect(page).toHaveURL(/\/tasks$/);
    await expect(page.getByTestId("current-user")).toContainText("responder");
  });
}
