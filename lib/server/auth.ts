/**
 * next-auth (v4) configuration: email + password (argon2id) credentials, JWT sessions.
 * The session only carries the user id; the role is read from the membership on every request, so a
 * revoked membership takes effect immediately (see lib/server/actor.ts).
 */
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getDb } from "@/db";
import { authSecret } from "@/lib/config/secrets";
import { checkSignIn } from "@/lib/domain/tenancy/people";

let cached: NextAuthOptions | undefined;

/** The next-auth options (built on first use, so a build never needs the secret). */
export function authOptions(): NextAuthOptions {
  cached ??= buildOptions();
  return cached;
}

function buildOptions(): NextAuthOptions {
  return {
  secret: authSecret(),
  session: { strategy: "jwt", maxAge: 12 * 60 * 60 },
  pages: { signIn: "/login" },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials) {
        const email = credentials?.email ?? "";
        const password = credentials?.password ?? "";
        if (!email || !password) return null;
        const result = await checkSignIn(await getDb(), email, password);
        if (!result.ok) {
          // Surfaced to the login page as ?error=<message>.
          throw new Error(
            result.reason === "no_membership"
              ? "Your access to every workspace has been revoked. Ask an owner to restore it."
              : result.reason === "throttled"
                ? "Too many failed sign-ins for this email. Wait 15 minutes, or ask an owner to unlock the account under Settings → Members."
                : "Email or password is not right.",
          );
        }
        return { id: result.userId, email: result.email, name: result.name };
      },
    }),
  ],
  callbacks: {
    async jwt({ token, user }) {
      if (user) token.sub = user.id;
      return token;
    },
    async session({ session, token }) {
      if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
      return session;
    },
  },
};
}
