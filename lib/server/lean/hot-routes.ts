/**
 * The runtime's hot routes: what every agent calls on every tool call and resume (events, the durable record and its
 * checkpoints, intents, receipts, the resume gate, trace ingest). Each entry names an App Router route of `app/`; the
 * lean layer (lib/server/lean/serve.ts) answers it by calling that route file's own exported handler, so the route
 * file stays the one definition of its auth, limits, checks and error shape, and the one source of the OpenAPI
 * document. docs/decisions/0053-lean-layer-for-hot-routes.md.
 */

/** One hot route: its App Router path (segments in brackets are parameters) and the aliases Next rewrites to it. */
export type HotRoute = {
  /** The route's directory under app/, as a path: `/api/v1/tasks/[taskId]/resume`. */
  route: string;
  /** Other paths served by the same route (next.config.ts rewrites), matched exactly. */
  aliases?: readonly string[];
};

export const HOT_ROUTES: readonly HotRoute[] = [
  { route: "/api/v1/events" },
  { route: "/api/v1/tasks/[taskId]" },
  { route: "/api/v1/tasks/[taskId]/checkpoints" },
  { route: "/api/v1/tasks/[taskId]/resume" },
  { route: "/api/v1/tasks/[taskId]/side-effects/[name]/intent" },
  { route: "/api/v1/tasks/[taskId]/side-effects/[name]/receipt" },
  { route: "/api/v1/traces", aliases: ["/v1/traces"] },
  { route: "/api/v1/traces/ingest", aliases: ["/v1/traces/ingest"] },
];

/**
 * A request path matched to a hot route: the route, its parameters decoded (`{taskId: "t 1"}`), and the path the
 * handler is shown (the request's own, or for an alias the route's, as Next's rewrite shows it).
 */
export type HotRouteMatch = { route: string; params: Record<string, string>; path: string };

type Compiled = { route: string; literal?: string; segments?: string[] };

const COMPILED: Compiled[] = HOT_ROUTES.flatMap((r) => [
  { route: r.route, segments: r.route.split("/").slice(1) },
  ...(r.aliases ?? []).map((literal) => ({ route: r.route, literal })),
]);

/**
 * The hot route a request path (no query; still %-encoded) names, or null: no hot route, an empty or malformed
 * parameter (a bad %-escape: the pages' server answers those, with the same 400 as for every other route).
 * Parameters are decoded as Next decodes them.
 */
export function matchHotRoute(pathname: string): HotRouteMatch | null {
  const parts = pathname.split("/").slice(1);
  for (const c of COMPILED) {
    if (c.literal !== undefined) {
      if (pathname === c.literal) return { route: c.route, params: {}, path: c.route };
      continue;
    }
    const segs = c.segments!;
    if (segs.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      const seg = segs[i]!;
      const part = parts[i]!;
      if (seg.startsWith("[")) {
        if (part === "") ok = false;
        else {
          try {
            params[seg.slice(1, -1)] = decodeURIComponent(part);
          } catch {
            ok = false;
          }
        }
      } else if (seg !== part) ok = false;
    }
    if (ok) return { route: c.route, params, path: pathname };
  }
  return null;
}
