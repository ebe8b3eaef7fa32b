/**
 * Shared pieces of the benchmarks (`npm run bench`): the database (created when missing, migrated), a
 * fresh tenant with a runtime API key, the dashboard built into its own dist dir and started with
 * `npm start` on a free port, a small keep-alive HTTP client that sends the key, and a registry type that
 * each benchmark implements. Benchmarks (ingest, and later intents / gate) import from here only.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import postgres from "postgres";
import { openDatabase, type Db } from "@/db";
import { seedTenant } from "@/lib/domain/tenancy/seed";
import { newestSourceMtime } from "../lib/build-freshness";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/custody_bench";
export const DEFAULT_DIST_DIR = ".next-bench";
/** Ports the benchmark may listen on (inclusive). */
export const DEFAULT_PORT_RANGE: readonly [number, number] = [3400, 3499];

/** A raw postgres.js client (COPY, verification, cleanup). */
export type Sql = postgres.Sql;

/** Log line with the benchmark prefix. */
export function log(msg: string): void {
  console.log(`[bench] ${msg}`);
}

/**
 * Creates the database named in `url` when it does not exist (connecting to the `postgres` maintenance
 * database of the same server).
 * @returns true when it was created.
 * @throws Error when the server cannot be reached.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ""));
  if (!name) throw new Error(`DATABASE_URL names no database: ${url}`);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${name}`;
    if (rows.length > 0) return false;
    await sql.unsafe(`create database "${name.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await sql.end();
  }
}

/** The database the benchmarks use: migrations applied, a Drizzle handle and a raw client. */
export type BenchDb = { url: string; db: Db; sql: Sql; close: () => Promise<void> };

/**
 * Creates (if missing) and migrates the database at `url`, then opens a Drizzle handle (`openDatabase`) and a
 * raw postgres.js client of at most `max` connections.
 */
export async function openBenchDb(url: string, max = 4): Promise<BenchDb> {
  if (await ensureDatabase(url)) log(`created database ${new URL(url).pathname.slice(1)}`);
  const handle = await openDatabase({ url, max: 2 });
  const sql = postgres(url, { max, onnotice: () => {} });
  return {
    url,
    db: handle.db,
    sql,
    close: async () => {
      await sql.end({ timeout: 5 });
      await handle.close();
    },
  };
}

/** A tenant created for one benchmark, with its runtime API key in clear. */
export type BenchTenant = { tenantId: string; slug: string; apiKey: string };

/** Seeds a fresh tenant (random slug `bench-<label>-<hex>`) and a runtime API key; no people. */
export async function seedBenchTenant(db: Db, label: string): Promise<BenchTenant> {
  const slug = `bench-${label}-${randomBytes(5).toString("hex")}`;
  const seeded = await seedTenant(db, {
    slug,
    name: `Benchmark ${label}`,
    users: [],
    password: randomBytes(12).toString("base64url"),
    apiKeyName: `bench ${label}`,
  });
  return { tenantId: seeded.tenantId, slug, apiKey: seeded.apiKey };
}

/** A new Ed25519 signing key as PKCS#8 PEM (what CUSTODY_SIGNING_KEY expects). */
export function generateSigningKeyPem(): string {
  const { privateKey } = generateKeyPairSync("ed25519");
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

/** The first port in `[from, to]` nobody listens on (checked by binding 127.0.0.1). @throws Error when none. */
export async function findFreePort(from: number, to: number): Promise<number> {
  for (let port = from; port <= to; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once("error", () => resolve(false));
      srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${from}–${to}`);
}

/**
 * Builds the app into `distDir` when `<distDir>/BUILD_ID` is missing (or `force`). `next build` rewrites
 * `tsconfig.json` / `next-env.d.ts` to mention its dist dir; both are restored byte for byte afterwards so a
 * benchmark build never changes the working tree. Warns when the build is older than the sources.
 * @throws Error when the build fails.
 */
export function buildIfMissing(root: string, distDir: string, force = false): void {
  const buildId = path.join(root, distDir, "BUILD_ID");
  if (fs.existsSync(buildId) && !force) {
    const builtAt = fs.statSync(buildId).mtimeMs;
    if (newestSourceMtime(root) > builtAt) {
      log(`warning: ${distDir} is older than the sources; pass --rebuild to measure the current code`);
    } else {
      log(`using the existing build in ${distDir}`);
    }
    return;
  }
  const guarded = ["tsconfig.json", "next-env.d.ts"].map((f) => path.join(root, f));
  const saved = guarded.map((f) => (fs.existsSync(f) ? { bytes: fs.readFileSync(f), stat: fs.statSync(f) } : null));
  log(`building the app into ${distDir} (next build) …`);
  try {
    const res = spawnSync(path.join(root, "node_modules", ".bin", "next"), ["build"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, NEXT_DIST_DIR: distDir, NEXT_TELEMETRY_DISABLED: "1", DATABASE_URL: "" },
    });
    if (res.status !== 0) throw new Error(`next build failed (exit ${res.status ?? res.signal})`);
  } finally {
    guarded.forEach((f, i) => {
      const before = saved[i];
      if (before === null || before === undefined) return;
      if (!fs.existsSync(f) || !fs.readFileSync(f).equals(before.bytes)) {
        fs.writeFileSync(f, before.bytes);
        // The content is back as it was; so is its time, so the main build does not look stale.
        fs.utimesSync(f, before.stat.atime, before.stat.mtime);
      }
    });
  }
}

/** A PgBouncer the benchmark started (scripts/pgbouncer.sh): the pooled URL and how to stop it. */
export type BenchPooler = { url: string; stop: () => void };

/**
 * Starts PgBouncer in transaction pooling mode in front of `upstream` (scripts/pgbouncer.sh: installed with apt-get
 * when missing) on `PGBOUNCER_PORT` (default 6433), with `poolSize` server connections — as many as the server's own
 * pool, so the comparison with a direct run is the pooler's cost only.
 * @throws Error with the script's output when it does not start.
 */
export function startPooler(root: string, upstream: string, poolSize: number): BenchPooler {
  const env = { ...process.env, PGBOUNCER_UPSTREAM: upstream, PGBOUNCER_POOL_SIZE: String(poolSize) };
  const script = path.join(root, "scripts", "pgbouncer.sh");
  const res = spawnSync("bash", [script, "start"], { env, encoding: "utf8" });
  if (res.status !== 0) throw new Error(`PgBouncer did not start: ${res.stderr}`);
  log(res.stderr.trim().replace(/^\[pgbouncer\] /, "pgbouncer "));
  return {
    url: res.stdout.trim(),
    stop: () => {
      spawnSync("bash", [script, "stop"], { env, stdio: "ignore" });
    },
  };
}

/** A running production server. `stop()` ends its whole process group and waits for it. */
export type BenchServer = {
  baseUrl: string;
  port: number;
  pid: number;
  stop: () => Promise<void>;
  logTail: () => string;
};

/**
 * Starts the production server (scripts/serve.ts) from `distDir` on a free port of `ports` with the env the server needs on PostgreSQL
 * (DATABASE_URL, CUSTODY_SIGNING_KEY, NEXTAUTH_SECRET, NEXTAUTH_URL) and waits for `GET /api/health` = 200.
 * The server runs in its own process group so `stop()` leaves nothing behind.
 * @throws Error when it exits early or is not healthy within `timeoutMs`.
 */
export async function startServer(opts: {
  root: string;
  distDir: string;
  databaseUrl: string;
  ports?: readonly [number, number];
  timeoutMs?: number;
  /** Directory for a V8 CPU profile of the server (written when it stops); none when absent. */
  cpuProfileDir?: string;
  /** More environment for the server (e.g. `DATABASE_POOLER`). */
  env?: Record<string, string>;
}): Promise<BenchServer> {
  const [from, to] = opts.ports ?? DEFAULT_PORT_RANGE;
  const port = await findFreePort(from, to);
  const baseUrl = `http://127.0.0.1:${port}`;
  const lines: string[] = [];
  const nodeArgs = opts.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfileDir}`] : [];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      "--import",
      "tsx",
      path.join(opts.root, "scripts", "serve.ts"),
      "-p",
      String(port),
      "-H",
      "127.0.0.1",
    ],
    {
      cwd: opts.root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXT_DIST_DIR: opts.distDir,
        NEXT_TELEMETRY_DISABLED: "1",
        DATABASE_URL: opts.databaseUrl,
        CUSTODY_SIGNING_KEY: generateSigningKeyPem(),
        NEXTAUTH_SECRET: randomBytes(32).toString("base64url"),
        NEXTAUTH_URL: baseUrl,
        PORT: String(port),
        ...opts.env,
      },
    },
  );
  const keep = (chunk: Buffer) => {
    for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(l);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid!;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `the server exited with ${child.exitCode} before it was healthy:\n${lines.slice(-20).join("\n")}`,
      );
    }
    const res = await httpRequest(`${baseUrl}/api/health`, { method: "GET" }).catch(() => null);
    if (res?.status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${baseUrl}/api/health did not answer 200 in time:\n${lines.slice(-20).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { baseUrl, port, pid, stop, logTail: () => lines.slice(-30).join("\n") };
}

/** An HTTP answer: status and raw body text. */
export type HttpAnswer = { status: number; text: string };

const agents = new Map<number, http.Agent>();
/** A keep-alive agent with up to `sockets` connections (shared per size). */
function agentFor(sockets: number): http.Agent {
  let a = agents.get(sockets);
  if (!a) {
    a = new http.Agent({ keepAlive: true, maxSockets: sockets });
    agents.set(sockets, a);
  }
  return a;
}

/** One HTTP request over node:http (less client CPU than fetch). Rejects on network errors only. */
export function httpRequest(
  url: string,
  opts: { method: string; headers?: Record<string, string>; body?: string | Buffer; agent?: http.Agent },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method, headers: opts.headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

/** A client of the runtime API that sends the tenant's key as bearer. */
export type ApiClient = {
  /** POSTs a JSON body (an object, or a pre-serialized string/Buffer). */
  post: (pathname: string, body: unknown) => Promise<HttpAnswer>;
  /** PUTs a JSON body. */
  put: (pathname: string, body: unknown) => Promise<HttpAnswer>;
  get: (pathname: string) => Promise<HttpAnswer>;
  /** Parses an answer's JSON body. @throws Error when it is not JSON. */
  json: <T>(answer: HttpAnswer) => T;
};

/** Creates an {@link ApiClient} for `baseUrl` and `apiKey` over a keep-alive pool of `sockets` connections. */
export function createApiClient(baseUrl: string, apiKey: string, sockets = 8): ApiClient {
  const agent = agentFor(sockets);
  const auth = { authorization: `Bearer ${apiKey}` };
  const send = (method: string, pathname: string, body: unknown) => {
    const payload = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    return httpRequest(`${baseUrl}${pathname}`, {
      method,
      agent,
      headers: { ...auth, "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
      body: payload,
    });
  };
  return {
    post: (pathname, body) => send("POST", pathname, body),
    put: (pathname, body) => send("PUT", pathname, body),
    get: (pathname) => httpRequest(`${baseUrl}${pathname}`, { method: "GET", agent, headers: auth }),
    json: <T>(answer: HttpAnswer): T => {
      try {
        return JSON.parse(answer.text) as T;
      } catch {
        throw new Error(`HTTP ${answer.status}: not JSON: ${answer.text.slice(0, 200)}`);
      }
    },
  };
}

/** Closes the keep-alive sockets of every client made here (so the process can exit). */
export function closeApiClients(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

/** What every benchmark gets: the database, the running server and the parsed CLI options. */
export type BenchEnv = {
  root: string;
  db: BenchDb;
  server: BenchServer;
  options: Record<string, string | boolean | undefined>;
};

/** The outcome of one benchmark: its figures (written to `bench-results/<name>.json`) and its checks. */
export type BenchOutcome = {
  name: string;
  figures: Record<string, unknown>;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
};

/** A benchmark the CLI can run (`npm run bench -- <name>`). */
export type Benchmark = {
  name: string;
  /** One line for `--help`. */
  summary: string;
  run: (env: BenchEnv) => Promise<BenchOutcome>;
};

/** Runs `jobs` with at most `limit` in flight (the load generator of every throughput phase); results in order. */
export async function inFlight<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}
