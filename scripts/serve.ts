/**
 * `npm start`: the production server. One Node HTTP server on one port: the runtime's hot routes are answered by the
 * lean layer (lib/server/lean/serve.ts) and everything else by Next's request handler, from the build in
 * `NEXT_DIST_DIR` (default `.next`; run `npm run build` first).
 *
 * Usage: `tsx scripts/serve.ts [-p|--port N] [-H|--hostname H] [--keepAliveTimeout MS]`
 * Env: PORT (default 3000) and HOSTNAME as for `next start`; `CUSTODY_LEAN_ROUTES=off` serves every route through
 * Next (the same answers; used to compare the two). docs/decisions/0053-lean-layer-for-hot-routes.md.
 */
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";

(process.env as Record<string, string>).NODE_ENV = "production";
// tsx turns on source-map support for the whole process, which makes Node read and parse the source map of every
// compiled chunk the server loads (hundreds of MB of JSON for Next's build). The server runs the built JavaScript, as
// `next start` does, so it keeps stack traces as they are and its memory for the requests.
process.setSourceMapsEnabled(false);

const { values } = parseArgs({
  options: {
    port: { type: "string", short: "p" },
    hostname: { type: "string", short: "H" },
    keepAliveTimeout: { type: "string" },
  },
});
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname ?? process.env.HOSTNAME ?? undefined;
const root = path.resolve(__dirname, "..");
const distDir = path.resolve(root, process.env.NEXT_DIST_DIR || ".next");
const leanOn = process.env.CUSTODY_LEAN_ROUTES !== "off";

async function main(): Promise<void> {
  const { default: next } = await import("next");
  const { leanHandler } = await import("../lib/server/lean/serve");
  const app = next({ dev: false, dir: root, port, hostname: hostname ?? "localhost" });
  await app.prepare();
  const nextHandler = app.getRequestHandler();
  const lean = leanOn ? leanHandler(distDir) : () => false;
  const server = http.createServer((req, res) => {
    if (lean(req, res)) return;
    void nextHandler(req, res);
  });
  if (values.keepAliveTimeout) server.keepAliveTimeout = Number(values.keepAliveTimeout);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => resolve());
  });
  console.log(
    `▲ Run Custody ready on http://${hostname ?? "localhost"}:${port} (hot routes: ${leanOn ? "lean layer" : "Next"})`,
  );
  const stop = (signal: NodeJS.Signals) => {
    server.close();
    server.closeIdleConnections();
    void app.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
