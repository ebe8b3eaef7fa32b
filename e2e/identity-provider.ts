/**
 * A real OpenID Connect identity provider for the single sign-on specs: `oidc-provider` (the certified Node
 * implementation) on its own port, with one confidential client (the app under test), an RS256 signing key made
 * per run, an in-memory account store the spec fills, and its development login page (any password; the login is
 * the account id). Consent is granted without asking, as for a first-party app.
 *
 * To prove that the app checks what it is given, the provider can be told to hand out a doctored id token from its
 * token endpoint: signed by a key that is not the provider's (`bad_signature`), or signed by the provider's own
 * key but for another audience (`wrong_audience`) or already expired (`expired`).
 *
 * The issuer, client id and secret come from playwright.config.ts (E2E_OIDC_*), which passes the same values to
 * the app's server as CUSTODY_OIDC_*.
 */
import type { Server } from "node:http";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from "jose";

/** A person at the provider: the id token's claims. */
export type ProviderAccount = { email: string; email_verified: boolean; name?: string };

/** What the token endpoint does to the id token it issues. */
export type TokenMode = "honest" | "bad_signature" | "wrong_audience" | "expired";

export type IdentityProvider = {
  issuer: string;
  /** Adds (or replaces) an account; its login at the provider is `login`. */
  addAccount(login: string, account: ProviderAccount): void;
  /** Sets how the next id tokens are issued (default `honest`). */
  setMode(mode: TokenMode): void;
  stop(): Promise<void>;
};

/** The provider settings playwright.config.ts chose for this run. @throws Error when they are missing. */
export function providerSettings(): { issuer: string; clientId: string; clientSecret: string; appUrl: string } {
  const issuer = process.env.E2E_OIDC_ISSUER;
  const clientId = process.env.E2E_OIDC_CLIENT_ID;
  const clientSecret = process.env.E2E_OIDC_CLIENT_SECRET;
  const appUrl = process.env.E2E_BASE_URL;
  if (!issuer || !clientId || !clientSecret || !appUrl)
    throw new Error("playwright.config.ts set no E2E_OIDC_* values");
  return { issuer, clientId, clientSecret, appUrl };
}

/** Starts the provider on the issuer's port. */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  const { issuer, clientId, clientSecret, appUrl } = providerSettings();
  const { default: Provider } = await import("oidc-provider");
  const accounts = new Map<string, ProviderAccount>();
  let mode: TokenMode = "honest";

  const kid = "e2e-signing-key";
  const signing = await generateKeyPair("RS256", { extractable: true });
  const forged = await generateKeyPair("RS256", { extractable: true });
  const privateJwk: JWK = { ...(await exportJWK(signing.privateKey)), kid, alg: "RS256", use: "sig" };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${appUrl}/api/auth/callback/oidc`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    jwks: { keys: [privateJwk] },
    cookies: { keys: ["e2e-provider-cookie-key-not-secret"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    // The claims asked for by scope go into the id token itself, which is what the app reads.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
    // A first-party app: consent is given without a page.
    async loadExistingGrant(ctx) {
      const existing = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId,
      });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });

  // Runs around every request; after the token endpoint answered, doctor its id token as the mode says.
  provider.use(async (ctx, next) => {
    await next();
    if (mode === "honest" || ctx.oidc?.route !== "token") return;
    const body = ctx.body as { id_token?: string } | undefined;
    if (!body?.id_token) return;
    const header = decodeProtectedHeader(body.id_token);
    const claims: JWTPayload = decodeJwt(body.id_token);
    const now = Math.floor(Date.now() / 1000);
    let key = signing.privateKey;
    if (mode === "bad_signature") key = forged.privateKey;
    if (mode === "wrong_audience") claims.aud = "some-other-client";
    if (mode === "expired") {
      claims.iat = now - 7200;
      claims.exp = now - 3600;
    }
    body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: header.kid ?? kid }).sign(key);
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = provider.listen(Number(new URL(issuer).port), new URL(issuer).hostname, () => resolve(s));
    s.on("error", reject);
  });

  return {
    issuer,
    addAccount(login, account) {
      accounts.set(login, account);
    },
    setMode(next) {
      mode = next;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
