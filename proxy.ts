import { NextResponse, type NextRequest } from "next/server";

/**
 * Passes the requested path to server components as `x-custody-path`, so a session check in a layout can send
 * the person back to the page they asked for after signing in. Authentication itself happens on the server
 * (lib/server/page-actor.ts, lib/server/actor.ts), not here.
 */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set("x-custody-path", request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: ["/((?!api/|_next/|favicon.ico|login).*)"] };
