/**
 * next-auth (v4) configuration: email + password (argon2id) credentials, and, when the environment names one, an
 * OpenID Connect identity provider (lib/config/single-sign-on.ts, decision 0041); a JWT cookie holding a random
 * session id.
 * The server keeps the session itself (table `sessions`, lib/domain/tenancy/sessions.ts): the cookie alone is not
 * enough, so sign-out, removal from a workspace and expiry end access on the next request. The role is read
 * from the membership on every request (lib/server/actor.ts).
 */
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { getOwnerDb } from "@/db";
import { authSecret } from "@/lib/config/secrets";
import { SINGLE_SIGN_ON_PROVIDER_ID, singleSignOnConfig, type SingleSignOnConfig } from "@/lib/config/single-sign-on";
import { checkSignIn } from "@/lib/domain/tenancy/people";
import { endSession, SESSION_HOURS, startSession } from "@/lib/domain/tenancy/sessions";
import { signInWithIdentityProvider, type SingleSignOnRefusal } from "@/lib/domain/tenancy/single-sign-on";
import { clientAddress } from "./client-address";

let cached: NextAuthOptions | undefined;

/** The next-auth options (built on first use, so a build never needs the secret). */
export function authOptions(): NextAuthOptions {
  cached ??= buildOptions();
  return cached;
}

type SessionUser = { id: string; email: string; name: string; sid: string };

/** The page that explains a refused single sign-on. */
function refusedPage(reason: SingleSignOnRefusal): string {
  return `/login/refused?reason=${reason}`;
}

/**
 * The OpenID Connect provider: discovery from the issuer, authorization code flow with PKCE, state and nonce, and
 * the person taken from the id token, which openid-client verifies (signature against the issuer's JWKS, `iss`,
 * `aud` = our client id, `exp`/`iat`, nonce) before anything here sees it; a token that fails ends at
 * `/login?error=OAuthCallback`.
 */
function identityProvider(cfg: SingleSignOnConfig): OAuthConfig<Record<string, unknown>> {
  return {
    id: SINGLE_SIGN_ON_PROVIDER_ID,
    name: cfg.name,
    type: "oauth",
    wellKnown: `${cfg.issuer}/.well-known/openid-configuration`,
    clientId: cfg.clientId,
    clientSecret: cfg.clientSecret,
    idToken: true,
    checks: ["pkce", "state", "nonce"],
    authorization: { params: { scope: "openid email profile" } },
    profile(claims) {
      return {
        id: String(claims.sub),
        email: typeof claims.email === "string" ? claims.email : null,
        name: typeof claims.name === "string" ? claims.name : null,
      };
    },
  };
}

function buildOptions(): NextAuthOptions {
  const sso = singleSignOnConfig();
  return {
    secret: authSecret(),
    session: { strategy: "jwt", maxAge: SESSION_HOURS * 60 * 60 },
    pages: { signIn: "/login" },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
          /** Optional: the workspace (tenant id) to start in, e.g. the one an invitation was for. */
          workspace: { label: "Workspace", type: "text" },
        },
        async authorize(credentials, req) {
          const email = credentials?.email ?? "";
          const password = credentials?.password ?? "";
          if (!email || !password) return null;
          // Before any tenant is known: the owner's database (docs/decisions/0016-tenant-walls.md).
          const db = await getOwnerDb();
          const result = await checkSignIn(db, email, password, clientAddress(req?.headers ?? {}));
          if (!result.ok) {
            // Surfaced to the login page as ?error=<message>.
            throw new Error(
              result.reason === "no_membership"
                ? "Your access to every workspace has been revoked. Ask an owner to restore it."
                : result.reason === "throttled"
                  ? result.message
                  : "Email or password is not right.",
            );
          }
          const session = await startSession(db, result.userId, { tenantId: credentials?.workspace || null });
          if (!session) throw new Error("Your access to every workspace has been revoked. Ask an owner to restore it.");
          const user: SessionUser = {
            id: result.userId,
            email: result.email,
            name: result.name,
            sid: session.sessionId,
          };
          return user;
        },
      }),
      ...(sso ? [identityProvider(sso)] : []),
    ],
    callbacks: {
      /**
       * Password sign-ins were decided in `authorize`. A provider's sign-in (id token already verified) joins the
       * workspaces its verified email was invited to and starts a session like a password sign-in; a refusal
       * redirects to the page that explains it, with no session (decision 0041).
       */
      async signIn({ user, account, profile }) {
        if (!sso || account?.provider !== SINGLE_SIGN_ON_PROVIDER_ID) return true;
        const db = await getOwnerDb();
        const result = await signInWithIdentityProvider(db, profile, sso.issuer);
        if (!result.ok) return refusedPage(result.reason);
        const session = await startSession(db, result.userId, { tenantId: result.joined[0]?.tenantId ?? null });
        if (!session) return refusedPage("not_invited");
        // next-auth hands this same object to the jwt callback below.
        const signedIn: SessionUser = {
          id: result.userId,
          email: result.email,
          name: result.name,
          sid: session.sessionId,
        };
        Object.assign(user, signedIn);
        return true;
      },
      async jwt({ token, user }) {
        if (user) {
          token.sub = user.id;
          token.sid = (user as SessionUser).sid;
        }
        return token;
      },
      async session({ session, token }) {
        if (session.user && token.sub) {
          const u = session.user as { id?: string; sid?: string };
          u.id = token.sub;
          if (typeof token.sid === "string") u.sid = token.sid;
        }
        return session;
      },
    },
    events: {
      // Sign-out ends the server-side session, so the old cookie stops working even if it was copied.
      async signOut({ token }) {
        if (typeof token?.sid === "string") await endSession(await getOwnerDb(), token.sid, "signed_out");
      },
    },
  };
}
