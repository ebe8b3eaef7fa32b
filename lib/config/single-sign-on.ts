/**
 * Single sign-on with an OpenID Connect identity provider, configured from the environment (decision 0041):
 * - `CUSTODY_OIDC_ISSUER`: the provider's issuer URL (its `/.well-known/openid-configuration` is read at sign-in);
 * - `CUSTODY_OIDC_CLIENT_ID`, `CUSTODY_OIDC_CLIENT_SECRET`: this server's client at the provider;
 * - `CUSTODY_OIDC_NAME` (optional): the provider's name on the sign-in button, default "your identity provider".
 * Without an issuer, single sign-on is off and only passwords work.
 */

/** next-auth's id of the identity provider (its callback is `/api/auth/callback/oidc`). */
export const SINGLE_SIGN_ON_PROVIDER_ID = "oidc";

/** The identity provider this server trusts, as the environment names it. */
export type SingleSignOnConfig = { issuer: string; clientId: string; clientSecret: string; name: string };

/** Longest provider name shown on the button. */
const MAX_NAME = 60;

/**
 * @returns the configuration, or null when `CUSTODY_OIDC_ISSUER` is unset or empty (single sign-on off).
 * @throws Error naming the missing variable when the issuer is set without a client id or secret, or is not an
 *   http(s) URL.
 */
export function singleSignOnConfig(env: Record<string, string | undefined> = process.env): SingleSignOnConfig | null {
  const issuer = env.CUSTODY_OIDC_ISSUER?.trim();
  if (!issuer) return null;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`CUSTODY_OIDC_ISSUER is not a URL (${issuer.slice(0, 100)}); set the provider's issuer URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error("CUSTODY_OIDC_ISSUER must be an http(s) URL (the provider's issuer; https outside a test).");
  }
  const clientId = env.CUSTODY_OIDC_CLIENT_ID?.trim();
  const clientSecret = env.CUSTODY_OIDC_CLIENT_SECRET;
  if (!clientId) throw new Error("CUSTODY_OIDC_ISSUER is set but CUSTODY_OIDC_CLIENT_ID is not.");
  if (!clientSecret) throw new Error("CUSTODY_OIDC_ISSUER is set but CUSTODY_OIDC_CLIENT_SECRET is not.");
  const name = (env.CUSTODY_OIDC_NAME?.trim() || "your identity provider").slice(0, MAX_NAME);
  return { issuer: issuer.replace(/\/+$/, ""), clientId, clientSecret, name };
}
