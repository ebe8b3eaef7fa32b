import NextAuth from "next-auth";
import { authOptions } from "@/lib/server/auth";

/** next-auth's sign-in, sign-out, session and CSRF endpoints. */
async function handler(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(authOptions())(req, { params: await ctx.params });
}

export { handler as GET, handler as POST };
