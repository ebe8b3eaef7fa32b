/**
 * The bare server of the `baseline` benchmark: the machine's floor for one durable exactly-once decision per HTTP
 * request, with nothing of the product in the way (no framework, no auth, no tenant wall, no audit row).
 *
 * Routes (node:http, keep-alive, JSON):
 *   POST /decide  body `{"key": string}` → `INSERT … ON CONFLICT DO NOTHING RETURNING` in autocommit:
 *                 200 `{"decision":"go"}` for the first request of a key, 409 `{"error":{"code":"in_flight"}}` after;
 *   GET  /read?key=K → one read by primary key: 200 `{"key":…,"decided_at":…}` or 404;
 *   GET  /health  → 200.
 * Env: DATABASE_URL (PostgreSQL), PORT, BASELINE_TABLE (created by the benchmark beforehand), BASELINE_POOL (the
 * product server's pool size, default 10).
 */
import http from "node:http";
import postgres from "postgres";

const table = process.env.BASELINE_TABLE ?? "bench_baseline_decisions";
if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`BASELINE_TABLE must be a plain identifier, got ${table}`);
const sql = postgres(process.env.DATABASE_URL!, { max: Number(process.env.BASELINE_POOL ?? 10), onnotice: () => {} });

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "GET" && url.pathname === "/health") return answer(res, 200, { ok: true });
  if (req.method === "GET" && url.pathname === "/read") {
    const key = url.searchParams.get("key") ?? "";
    sql`select key, decided_at from ${sql(table)} where key = ${key}`.then(
      (rows) => (rows[0] ? answer(res, 200, rows[0]) : answer(res, 404, { error: { code: "not_found" } })),
      (err: Error) => answer(res, 500, { error: { code: "internal", message: err.message } }),
    );
    return;
  }
  if (req.method === "POST" && url.pathname === "/decide") {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let key: unknown;
      try {
        key = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { key?: unknown }).key;
      } catch {
        key = undefined;
      }
      if (typeof key !== "string" || key.length === 0)
        return answer(res, 400, { error: { code: "validation_failed", message: "key: a non-empty string" } });
      sql`insert into ${sql(table)} (key) values (${key}) on conflict do nothing returning key`.then(
        (rows) =>
          rows.length ? answer(res, 200, { decision: "go" }) : answer(res, 409, { error: { code: "in_flight" } }),
        (err: Error) => answer(res, 500, { error: { code: "internal", message: err.message } }),
      );
    });
    return;
  }
  answer(res, 404, { error: { code: "not_found" } });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), "127.0.0.1");
for (const sig of ["SIGTERM", "SIGINT"] as const)
  process.on(sig, () => {
    server.close();
    void sql.end({ timeout: 1 }).finally(() => process.exit(0));
  });
