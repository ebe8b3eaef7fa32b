/**
 * One walker for the integration suites that call every route of the runtime API (tests/support/api-routes.ts) with
 * chosen credentials: the authorization matrix (tests/integration/authz-matrix.test.ts) and the revocation walk
 * (tests/integration/revocation-walk.test.ts). It issues the requests a few at a time and hands back each answer next
 * to the call that asked it; what counts as a wrong answer stays with each suite.
 */
import { api, type Auth } from "../integration/helpers";
import { errorCode } from "../integration/support/responses";

/** Values for a route's path parameters, by name (`taskId` for `[taskId]`). */
export type RouteParams = Record<string, string>;

/** One request of a walk. */
export type RouteCall = {
  /** `METHOD /path/[param]…`: a key of API_ROUTES, or `GET /page/[param]` for a page. */
  route: string;
  auth: Auth;
  params: RouteParams;
  /** Appended to the filled path (e.g. `?format=json`). */
  query?: string;
  /** A JSON body; none is sent when absent. */
  body?: unknown;
};

/** What a call was answered (`text` in full), with the URL it went to. */
export type RouteAnswer<C extends RouteCall = RouteCall> = {
  call: C;
  url: string;
  status: number;
  /** `error.code` of a JSON error answer. */
  code: string | undefined;
  location: string | null;
  text: string;
};

/**
 * The error code of an OTLP route's answer (decision 0039): a `google.rpc.Status` body `{code, message}` whose message
 * starts with the API's error code (`unauthorized: …`); undefined for any other body.
 */
function otlpStatusCode(body: unknown): string | undefined {
  const b = body as { code?: unknown; message?: unknown } | null;
  if (!b || typeof b.code !== "number" || typeof b.message !== "string") return undefined;
  return /^([a-z_]+): /.exec(b.message)?.[1];
}

/**
 * A path pattern (`/api/v1/tasks/[taskId]`) with its parameters filled, URL-encoded.
 * @throws Error when `params` has no value for one of them.
 */
export function fillRoute(pattern: string, params: RouteParams): string {
  return pattern.replace(/\[(\w+)\]/g, (_, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`no value for [${k}] in ${pattern}: add it to the walk's params`);
    return encodeURIComponent(v);
  });
}

/** Issues one call and reads its answer. */
export async function callRoute<C extends RouteCall>(call: C): Promise<RouteAnswer<C>> {
  const [method, pattern] = call.route.split(" ") as [string, string];
  const url = fillRoute(pattern, call.params) + (call.query ?? "");
  const res = await api(call.auth).request(method, url, call.body === undefined ? {} : { json: call.body });
  return {
    call,
    url,
    status: res.status,
    code: errorCode(res) ?? otlpStatusCode(res.body),
    location: res.headers.get("location"),
    text: res.text,
  };
}

/**
 * Issues every call, at most `width` at a time (the machine is shared).
 * @returns the answers in the order of `calls`.
 */
export async function walkRoutes<C extends RouteCall>(calls: readonly C[], width = 4): Promise<Array<RouteAnswer<C>>> {
  const out: Array<RouteAnswer<C>> = new Array(calls.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, calls.length) }, async () => {
      while (next < calls.length) {
        const i = next++;
        out[i] = await callRoute(calls[i]!);
      }
    }),
  );
  return out;
}
