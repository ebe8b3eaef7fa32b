/**
 * The lean layer: answers the runtime's hot routes (lib/server/lean/hot-routes.ts) straight from Node's HTTP server by
 * calling the route file's own handler from the production build, without Next's request pipeline; every other
 * request goes to Next. The handler is the very module Next loads (same file, same require cache), so auth, limits,
 * the NUL and size checks, the error shape and the database handle are the route's own: nothing is written twice.
 * docs/decisions/0053-lean-layer-for-hot-routes.md.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { matchHotRoute } from "./hot-routes";

/** A route file's exported method handler as the App Router calls it. */
type RouteHandler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** The methods the lean layer serves (HEAD and OPTIONS stay with Next, which answers them for every route). */
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/**
 * A request listener part for `http.createServer`: serves a hot route and returns true, or returns false and leaves
 * the request untouched for Next.
 *
 * Serves only requests that carry `Authorization` (a runtime API key): a person's session is read through Next's
 * request context, so cookie requests stay with Next. A path with a malformed %-escape stays with Next too (its proxy
 * answers 400 for every route alike).
 * @param distDir the build directory Next serves (absolute).
 */
export function leanHandler(distDir: string): (req: IncomingMessage, res: ServerResponse) => boolean {
  const load = createRequire(path.join(distDir, "package.json"));
  const handlers = new Map<string, Record<string, RouteHandler | undefined> | null>();

  function handlersOf(route: string): Record<string, RouteHandler | undefined> | null {
    let found = handlers.get(route);
    if (found === undefined) {
      found = loadRouteHandlers(load, path.join(distDir, "server", "app", ...route.split("/").slice(1), "route.js"));
      handlers.set(route, found);
    }
    return found;
  }

  return (req, res) => {
    const method = req.method ?? "GET";
    if (!METHODS.has(method) || req.headers.authorization === undefined) return false;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q === -1 ? url : url.slice(0, q);
    const match = matchHotRoute(pathname);
    if (!match) return false;
    const handler = handlersOf(match.route)?.[method];
    if (!handler) return false;
    void serve(handler, req, res, match.path + (q === -1 ? "" : url.slice(q)), match.params);
    return true;
  };
}

/**
 * The method handlers a compiled App Router route file exports (`routeModule.userland`), or null when the build has
 * no such route or another shape: Next then serves the route itself.
 */
function loadRouteHandlers(load: NodeJS.Require, file: string): Record<string, RouteHandler | undefined> | null {
  try {
    const mod = load(file) as { routeModule?: { userland?: Record<string, RouteHandler | undefined> } };
    return mod.routeModule?.userland ?? null;
  } catch {
    return null;
  }
}

/**
 * Turns the Node request into a Fetch `Request` for the route's canonical path (an alias such as `/v1/traces` is
 * presented as `/api/v1/traces`, as Next's rewrite does), calls the handler and writes its `Response` back.
 */
async function serve(
  handler: RouteHandler,
  req: IncomingMessage,
  res: ServerResponse,
  pathAndQuery: string,
  params: Record<string, string>,
): Promise<void> {
  try {
    const headers = new Headers();
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    const method = req.method!;
    const body = method !== "GET" && method !== "HEAD" ? requestBody(req) : null;
    const request = new Request(`http://${safeHost(req.headers.host)}${pathAndQuery}`, {
      method,
      headers,
      ...(body ? { body: body.stream, duplex: "half" } : {}),
    } as RequestInit);
    const response = await handler(request, { params: Promise.resolve(params) });
    const answer = response.body ? Buffer.from(await response.arrayBuffer()) : null;
    // What the handler left unread (a refusal before reading, a body over a limit) is read and dropped, so the client
    // gets its answer and the connection stays usable.
    body?.discardRest();
    res.statusCode = response.status;
    const cookies = response.headers.getSetCookie();
    response.headers.forEach((value, name) => {
      if (name !== "set-cookie") res.setHeader(name, value);
    });
    if (cookies.length > 0) res.setHeader("set-cookie", cookies);
    // Which layer answered, for operators and the parity test (tests/integration/lean-routes.test.ts).
    res.setHeader("x-custody-layer", "lean");
    if (answer) res.setHeader("content-length", answer.length);
    res.end(answer ?? undefined);
  } catch (err) {
    // The route handlers map every error themselves (lib/server/route.ts); this answers only a failure to present
    // the request or write the answer, without internals.
    console.error("[lean] request failed:", err instanceof Error ? err.message : String(err));
    if (!res.headersSent) {
      res.statusCode = 500;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: { code: "internal", message: "The server failed to answer; try again." } }));
    } else res.destroy();
  }
}

/**
 * The request body as a Fetch stream that reads the Node request as the reader asks (backpressure), and
 * `discardRest()`, which drops whatever is still unread. Unlike `Readable.toWeb`, cancelling it (a handler that stops
 * at a size limit) does not destroy the socket the answer still has to go out on.
 */
function requestBody(req: IncomingMessage): { stream: ReadableStream<Uint8Array>; discardRest: () => void } {
  let done = false;
  const discardRest = () => {
    if (done) return;
    done = true;
    req.removeAllListeners("data");
    req.on("error", () => {});
    req.resume();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.pause();
        req.on("data", (chunk: Buffer) => {
          if (done) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once("end", () => {
          if (done) return;
          done = true;
          controller.close();
        });
        req.once("error", (err) => {
          if (done) return;
          done = true;
          controller.error(err);
        });
      },
      pull() {
        if (!done) req.resume();
      },
      cancel() {
        discardRest();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
  return { stream, discardRest };
}

/** The request's Host if it is a plain host[:port], else `localhost` (a URL must parse; routes read only its path). */
function safeHost(host: string | undefined): string {
  return host && /^[A-Za-z0-9.\-[\]:]+$/.test(host) ? host : "localhost";
}
