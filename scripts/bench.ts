/**
 * `npm run bench [-- <name> …] [--options]` — throughput benchmarks against real PostgreSQL and a real
 * `npm start` (a script, not a timed test).
 *
 * Benchmarks (no name: all of them):
 *   baseline the machine's floor, measured first in the same run: a bare node:http + postgres.js server making one
 *            durable exactly-once decision per request (`INSERT … ON CONFLICT DO NOTHING RETURNING`), driven like the
 *            intents race, and one read by primary key asked like the gate. Every hot-path figure below is printed
 *            beside it as a ratio (intents, receipts and checkpoints ÷ decisions/s; the gate's p95 ÷ the read's p95).
 *   ingest   events per second through `POST /api/v1/events` — by default 200,000 events in batches of
 *            1,000 from 4 concurrent senders, 30% duplicates (re-deliveries and ids racing in concurrent
 *            batches), over 200 tasks and all four planes — against `COPY` of the same unique rows into a
 *            scratch copy of the events table. Prints both rates and their ratio (target ≥ 0.5), then
 *            checks that each event is stored exactly once and was answered `stored` exactly once.
 *   intents  side-effect intents per second: --effects (2,000) keys, each raced by --contenders (8) identical
 *            intents, --concurrency (16) in flight; exactly one `go` per key, the rest 409; then receipts/s,
 *            replays (intents/s again) and --checkpoints (1,000) checkpoint versions/s, checked against the
 *            database; targets ≥ 0.5× the baseline's decisions/s and p50 ≤ 2× the baseline's p50.
 *   gate     resume-gate latency p50/p95 on one task with --gate-effects (1,000) side effects and --gate-events
 *            (100,000) events, --asks (300) sequential asks interleaved with asks on an empty task; every answer
 *            must be `stop` listing exactly the unknown effects; targets p95 ≤ 2× the baseline's read and ≤ 1.2×
 *            the empty task's.
 *   timeline a --timeline-events (100,000) event task over --timeline-attempts (60) attempts, seeded in SQL: p50/p95
 *            of the timeline's first page, overview, a window of detail and the arrival feed (--timeline-requests,
 *            100 each); the task page's time to interactive in headless Chromium (median of --timeline-loads, 5);
 *            the task page's first-load JavaScript in KB gzip.
 *   hostile  the normal traffic's p50/p95 (gate asks and small event batches, --hostile-requests, 300) alone and
 *            beside the costliest requests a runtime may send (--hostile-rounds, 2, of: a RunState import at the
 *            limit, one over it, the task page's read of --hostile-big-events (2,000) events of 63 KB, one large
 *            event's detail, a gate ask with the most pending approvals); target: p95 beside ≤ 2× alone.
 *   scale    the event store as history grows (decision 0054): --scale-small (100,000) and then --scale-events
 *            (10,000,000) events seeded in SQL over tasks of --scale-per-task (1,000) events, received over 12
 *            months; at each size the ingest ratio to COPY (--scale-ingest, 20,000 events), and p50/p95 of the
 *            timeline's first page and of the gate on --scale-probes (20) tasks (--scale-requests, 200 each);
 *            target: each within 1.5× of the small size's. Seeding 10 million events takes many minutes.
 *
 * What it does: creates the database named by `DATABASE_URL` if missing (default
 * postgres://postgres@127.0.0.1:5432/custody_bench) and applies the migrations; builds the app into
 * `NEXT_DIST_DIR` (default `.next-bench`, so the main `.next` build is never touched) when its BUILD_ID is
 * missing; starts `npm start` on a free port (3400–3499 unless `--port-from/--port-to`) with a generated
 * signing key and next-auth secret; waits for /api/health; runs the benchmarks, each on a fresh tenant;
 * stops the server. Results are printed as a table and written to `bench-results/<name>.json`.
 *
 * Reading the figures: "stored events/s" is unique events stored ÷ wall time of the posting phase;
 * "posted events/s" counts duplicates too. The COPY rate is PostgreSQL's bulk-load ceiling for the same rows
 * on the same machine; the ratio is the headline. The load generator, the Next server and PostgreSQL share
 * the machine's cores, so each phase also reports the CPU seconds of each party (from /proc) and of
 * everything else ("other"); "events per server CPU s" divides by server + database CPU only, which is
 * comparable across machines with more cores.
 *
 * Options: --events N --batch N --senders N --dup R --tasks N --seed N (ingest workload), --keep-data
 * (keep the benchmark tenant's rows), --rebuild (build even if BUILD_ID exists), --strict (exit 1 when
 * a target is missed), --cpu-prof (the server writes a V8 .cpuprofile to bench-results/profiles/ when it
 * stops; open it in Chrome DevTools or speedscope), --pooler (the server reaches PostgreSQL through PgBouncer in
 * transaction pooling mode with `DATABASE_POOLER=transaction`, docs/decisions/0051-through-a-connection-pooler.md;
 * scripts/pgbouncer.sh starts it on PGBOUNCER_PORT, default 6433, with --pooler-size (10) server connections, the
 * size of the server's own pool; the benchmark's own checks stay direct). Exit status 1 when a check fails (or a target is
 * missed with --strict).
 *
 * Adding a benchmark: implement `Benchmark` (scripts/bench/harness.ts) in scripts/bench/<name>.ts — it gets
 * the migrated database, the running server and the CLI options; seed a tenant with `seedBenchTenant`, talk
 * to the API with `createApiClient`, measure CPU with `markCpu`/`spentSince` (cpu.ts) — and add it to
 * BENCHMARKS below.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import {
  buildIfMissing,
  closeApiClients,
  DEFAULT_DATABASE_URL,
  DEFAULT_DIST_DIR,
  DEFAULT_PORT_RANGE,
  log,
  openBenchDb,
  startPooler,
  startServer,
  type BenchDb,
  type BenchPooler,
  type BenchServer,
  type Benchmark,
  type BenchOutcome,
} from "./bench/harness";
import { baselineBenchmark } from "./bench/baseline";
import { gateBenchmark } from "./bench/gate";
import { ingestBenchmark } from "./bench/ingest";
import { intentsBenchmark } from "./bench/intents";
import { timelineBenchmark } from "./bench/timeline";
import { hostileBenchmark } from "./bench/hostile";
import { scaleBenchmark } from "./bench/scale";
import { writeResult } from "./bench/report";

/** Every benchmark the CLI knows, in the order `npm run bench` runs them. */
export const BENCHMARKS: Benchmark[] = [
  baselineBenchmark,
  ingestBenchmark,
  intentsBenchmark,
  gateBenchmark,
  timelineBenchmark,
  hostileBenchmark,
  scaleBenchmark,
];

let server: BenchServer | null = null;
let db: BenchDb | null = null;
let pooler: BenchPooler | null = null;

async function cleanup(): Promise<void> {
  const s = server;
  server = null;
  if (s) await s.stop();
  const p = pooler;
  pooler = null;
  p?.stop();
  const d = db;
  db = null;
  if (d) await d.close().catch(() => {});
  closeApiClients();
}

function usage(): string {
  return [
    "usage: npm run bench [-- <benchmark> …] [--events N --batch N --senders N --dup R --tasks N --seed N] [--effects N --contenders N --concurrency N] [--gate-effects N --gate-events N --asks N] [--checkpoints N] [--timeline-events N --timeline-attempts N --timeline-requests N --timeline-loads N] [--hostile-requests N --hostile-rounds N --hostile-big-events N] [--scale-small N --scale-events N --scale-per-task N --scale-probes N --scale-ingest N --scale-requests N] [--keep-data] [--rebuild] [--strict] [--cpu-prof] [--pooler [--pooler-size N]]",
    "benchmarks:",
    ...BENCHMARKS.map((b) => `  ${b.name.padEnd(8)} ${b.summary}`),
    "env: DATABASE_URL (default custody_bench on 127.0.0.1), NEXT_DIST_DIR (default .next-bench)",
  ].join("\n");
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      events: { type: "string" },
      batch: { type: "string" },
      senders: { type: "string" },
      dup: { type: "string" },
      tasks: { type: "string" },
      seed: { type: "string" },
      "port-from": { type: "string" },
      "port-to": { type: "string" },
      "keep-data": { type: "boolean" },
      rebuild: { type: "boolean" },
      strict: { type: "boolean" },
      "cpu-prof": { type: "boolean" },
      pooler: { type: "boolean" },
      "pooler-size": { type: "string" },
      effects: { type: "string" },
      contenders: { type: "string" },
      concurrency: { type: "string" },
      "intent-tasks": { type: "string" },
      "gate-effects": { type: "string" },
      asks: { type: "string" },
      "gate-events": { type: "string" },
      checkpoints: { type: "string" },
      "timeline-events": { type: "string" },
      "timeline-attempts": { type: "string" },
      "timeline-requests": { type: "string" },
      "timeline-loads": { type: "string" },
      "hostile-requests": { type: "string" },
      "hostile-rounds": { type: "string" },
      "hostile-big-events": { type: "string" },
      "scale-small": { type: "string" },
      "scale-events": { type: "string" },
      "scale-per-task": { type: "string" },
      "scale-probes": { type: "string" },
      "scale-ingest": { type: "string" },
      "scale-requests": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(usage());
    return 0;
  }
  const unknown = positionals.filter((p) => !BENCHMARKS.some((b) => b.name === p));
  if (unknown.length) {
    console.error(`unknown benchmark: ${unknown.join(", ")}\n${usage()}`);
    return 2;
  }
  const selected = positionals.length ? BENCHMARKS.filter((b) => positionals.includes(b.name)) : BENCHMARKS;

  const root = process.cwd();
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const distDir = process.env.NEXT_DIST_DIR || DEFAULT_DIST_DIR;
  const ports: [number, number] = [
    Number(values["port-from"] ?? DEFAULT_PORT_RANGE[0]),
    Number(values["port-to"] ?? DEFAULT_PORT_RANGE[1]),
  ];

  log(`database ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}; applying migrations …`);
  db = await openBenchDb(databaseUrl);
  buildIfMissing(root, distDir, values.rebuild === true);
  const cpuProfileDir = values["cpu-prof"] ? path.join(root, "bench-results", "profiles") : undefined;
  if (values.pooler) pooler = startPooler(root, databaseUrl, Number(values["pooler-size"] ?? 10));
  server = await startServer({
    root,
    distDir,
    databaseUrl: pooler?.url ?? databaseUrl,
    ports,
    cpuProfileDir,
    env: pooler ? { DATABASE_POOLER: "transaction" } : undefined,
  });
  if (cpuProfileDir) log(`the server writes a V8 CPU profile to ${cpuProfileDir} when it stops`);
  log(
    `server up at ${server.baseUrl} (pid ${server.pid}, dist dir ${distDir}${pooler ? `, through PgBouncer ${new URL(pooler.url).host}` : ""})`,
  );

  const outcomes: BenchOutcome[] = [];
  for (const bench of selected) {
    log(`running ${bench.name} …`);
    const outcome = await bench.run({ root, db, server, options: values });
    outcomes.push(outcome);
    const name = pooler ? `${bench.name}-pooler` : bench.name;
    const file = writeResult(root, name, {
      ...outcome.figures,
      through_pooler: pooler !== null,
      checks: outcome.checks,
    });
    log(`wrote ${file}`);
  }
  await cleanup();

  let status = 0;
  for (const o of outcomes) {
    const bad = o.checks.filter((c) => !c.ok);
    for (const c of bad) console.error(`[bench] ${o.name}: check failed — ${c.name}: ${c.detail}`);
    if (bad.length) status = 1;
    if (values.strict && o.figures.meets_target === false) {
      console.error(`[bench] ${o.name}: below target (--strict)`);
      status = 1;
    }
  }
  if (status === 0) log("all checks passed");
  return status;
}

let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping the server …`);
    void cleanup().finally(() => process.exit(130));
  });
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch(async (err) => {
    console.error("[bench] failed:", err instanceof Error ? (err.stack ?? err.message) : err);
    if (server) console.error(`[bench] server log (last lines):\n${server.logTail()}`);
    await cleanup();
    process.exit(1);
  });
