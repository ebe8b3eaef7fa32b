import { NextResponse, type NextRequest } from "next/server";
import { holdsNul, NUL_IN_ADDRESS_MESSAGE } from "@/lib/domain/web/address";

/**
 * Runs before every page and API route:
 * - a path with a malformed %-escape (`/tasks/%E0%A4%A`) is answered 400 here, because Next would otherwise fail
 *   decoding it with a bare 500: JSON in the API's error shape under /api, a short page elsewhere; so is a path or
 *   query holding a NUL (`?q=%00`), which no statement can take (API routes check it again, lib/server/route.ts);
 * - pages get the requested path as `x-custody-path`, so a session check in a layout can send the person back
 *   to the page they asked for after signing in. Authentication itself happens on the server
 *   (lib/server/page-actor.ts, lib/server/actor.ts), not here.
 */
export function proxy(request: NextRequest) {
  const path = request.nextUrl.pathname;
  if (!decodes(path)) return badPath(path, MALFORMED_ESCAPE_MESSAGE);
  if (holdsNul(path + request.nextUrl.search)) return badPath(path, NUL_IN_ADDRESS_MESSAGE);
  if (path.startsWith("/api/") || path === "/login" || path.startsWith("/login/")) return NextResponse.next();
  const headers = new Headers(request.headers);
  headers.set("x-custody-path", path + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

const MALFORMED_ESCAPE_MESSAGE =
  "The address has a malformed %-escape (a % must be followed by two hex digits of valid UTF-8); check the link.";

/** 400 for an address that cannot be served: JSON in the API's error shape under /api, a short page elsewhere. */
function badPath(path: string, message: string): NextResponse {
  if (path.startsWith("/api/")) return NextResponse.json({ error: { code: "bad_request", message } }, { status: 400 });
  return new NextResponse(
    `<!doctype html><title>Bad address</title><p>${message}</p><p><a href="/tasks">Back to the tasks</a></p>`,
    {
      status: 400,
      headers: { "content-type": "text/html; charset=utf-8" },
    },
  );
}

// Not for the events route: its path is fixed, and a proxy in front of it makes Next copy each (up to 1 MB)
// body once more, which costs ingest throughput (`npm run bench -- ingest`). Nor for the runtime's hot routes —
// resume, intent and receipt — and the timeline's reads (pages, windows, the arrival feed, the overview: what a
// reader polls), when their task id and effect name hold no `%` (so no malformed escape can be in them; the proxy has
// nothing else to do for /api): running it copies the request into another Request and costs server CPU on every
// call (`npm run bench -- intents --cpu-prof`, `npm run bench -- timeline`). A path with a `%` there still goes
// through it. Nor for an artifact's bytes (uploads up to CUSTODY_ARTIFACT_MAX_BYTES, downloads): a proxy would copy each
// body once more, and Next caps what it copies for a proxy. Nor for the static files of public/ (favicon.ico, robots.txt): they are served to anyone, signed in or not.
export const config = {
  matcher: [
    "/((?!_next/|favicon\\.ico$|robots\\.txt$|api/v1/events$|api/v1/tasks/[^/%]+/(?:resume|timeline(?:/overview)?|side-effects/[^/%]+/(?:intent|receipt)|artifacts/[^/%]+/content)$).*)",
  ],
};
