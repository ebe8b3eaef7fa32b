/**
 * next-auth (v4) configuration: email + password (argon2id) credentials, JWT cookie holding a random session id.
 * The server keeps the session itself (table `sessions`, lib/domain/tenancy/sessions.ts): the cookie alone is not
 * enough, so sign-out, removal from a workspace and expiry end access on the next request. The role is read
 * from the membership on every request (lib/server/actor.ts).
 */
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getOwnerDb } from "@/db";
import { authSecret } from "@/lib/config/secrets";
import { checkSignIn } from "@/lib/domain/tenancy/people";
import { endSession, SESSION_HOURS, startSession } from "@/lib/domain/tenancy/sessions";
import { clientAddress } from "./client-address";

let cached: NextAuthOptions | undefined;

/** The next-auth options (built on first use, so a build never needs the secret). */
export function authOptions(): NextAuthOptions {
  cached ??= buildOptions();
  return cached;
}

type SessionUser = { id: string; email: string; name: string; sid: string };

function buildOptions(): NextAuthOptions {
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
    ],
    callbacks: {
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
