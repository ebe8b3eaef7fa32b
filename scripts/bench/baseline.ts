/**
 * The `baseline` benchmark: the machine's own floor, measured in the same run as the product's hot paths, so that
 * every hot-path figure is a ratio to it (issue targets are ratios, not absolute rates; docs/performance.md).
 *
 * It starts scripts/bench/baseline-server.ts (node:http + postgres.js, the product server's pool size) on a free
 * port and drives it with the same load generator, concurrency and PostgreSQL as the `intents` benchmark:
 *   decisions  --effects keys × --contenders identical requests, --concurrency in flight; each request is one
 *              durable exactly-once decision (`INSERT … ON CONFLICT DO NOTHING RETURNING`, autocommit); exactly
 *              one 200 per key, every other 409. Figures: decisions/s (requests/s), p50/p95, CPU per party.
 *   reads      --asks sequential reads of one row by primary key: p50/p95 (the gate's floor).
 * Later benchmarks call {@link measureBaseline}; it measures once per run and returns the same figures after.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { markCpu, spentSince, type CpuSpent } from "./cpu";
import {
  createApiClient,
  findFreePort,
  httpRequest,
  inFlight,
  log,
  type BenchEnv,
  type BenchOutcome,
  type Benchmark,
} from "./harness";
import { fmt, printTable, quantile } from "./report";

/** What the other benchmarks divide by. Latencies in ms, rates per second. */
export type BaselineFigures = {
  decisions: {
    requests: number;
    keys: number;
    in_flight: number;
    wall_s: number;
    decisions_per_s: number;
    latency_ms_p50: number | null;
    latency_ms_p95: number | null;
    cpu: CpuSpent;
    /** Node CPU of the bare server per request, ms. */
    server_cpu_ms_per_request: number | null;
  };
  reads: { asks: number; latency_ms_p50: number | null; latency_ms_p95: number | null };
  exactly_one_go_per_key: boolean;
};

const TABLE = "bench_baseline_decisions";
let measured: Promise<BaselineFigures> | null = null;

function num(o: BenchEnv["options"], key: string, dflt: number): number {
  const v = o[key];
  return typeof v === "string" && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : dflt;
}

async function startBareServer(env: BenchEnv): Promise<{ baseUrl: string; pid: number; stop: () => Promise<void> }> {
  const port = await findFreePort(3500, 3599);
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(env.root, "scripts", "bench", "baseline-server.ts")],
    {
      cwd: env.root,
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: env.db.url,
        PORT: String(port),
        BASELINE_TABLE: TABLE,
      },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the baseline server exited with ${child.exitCode}: ${stderr}`);
    const res = await httpRequest(`${baseUrl}/health`, { method: "GET" }).catch(() => null);
    if (res?.status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the baseline server did not answer in time: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, pid: child.pid!, stop };
}

async function measure(env: BenchEnv): Promise<BaselineFigures> {
  const effects = num(env.options, "effects", 2000);
  const contenders = num(env.options, "contenders", 8);
  const concurrency = num(env.options, "concurrency", 16);
  const asks = num(env.options, "asks", 300);
  await env.db.sql.unsafe(`drop table if exists ${TABLE}`);
  await env.db.sql.unsafe(
    `create table ${TABLE} (key text primary key, decided_at timestamptz not null default now())`,
  );
  const bare = await startBareServer(env);
  try {
    const client = createApiClient(bare.baseUrl, "unused", concurrency);
    const timed = async (f: () => Promise<{ status: number }>) => {
      const t = performance.now();
      const r = await f();
      return { status: r.status, ms: performance.now() - t };
    };
    // Warm-up, then the same shape as the intents race: the contenders of one key are queued side by side.
    await inFlight(
      Array.from({ length: 200 }, (_, i) => () => client.post("/decide", { key: `warm:${i}` })),
      concurrency,
    );
    log(`baseline: ${effects} keys × ${contenders} contenders, ${concurrency} in flight …`);
    const jobs = Array.from({ length: effects }, (_, i) => `k:${i}`).flatMap((key) =>
      Array.from({ length: contenders }, () => () => timed(() => client.post("/decide", { key }))),
    );
    const cpu0 = await markCpu(env.db.sql, bare.pid);
    const t0 = performance.now();
    const answers = await inFlight(jobs, concurrency);
    const wall = (performance.now() - t0) / 1000;
    const cpu = await spentSince(cpu0, env.db.sql, bare.pid);
    const goes = new Map<number, number>();
    answers.forEach((a, i) => {
      if (a.status === 200) goes.set(Math.floor(i / contenders), (goes.get(Math.floor(i / contenders)) ?? 0) + 1);
    });
    const exactlyOne = goes.size === effects && [...goes.values()].every((n) => n === 1);

    log(`baseline: ${asks} sequential reads by primary key …`);
    for (let i = 0; i < 20; i++) await client.get(`/read?key=k:${i}`);
    const reads: number[] = [];
    for (let i = 0; i < asks; i++) reads.push((await timed(() => client.get(`/read?key=k:${i % effects}`))).ms);

    const ms = answers.map((a) => a.ms);
    return {
      decisions: {
        requests: answers.length,
        keys: effects,
        in_flight: concurrency,
        wall_s: Number(wall.toFixed(3)),
        decisions_per_s: Math.round(answers.length / wall),
        latency_ms_p50: quantile(ms, 0.5),
        latency_ms_p95: quantile(ms, 0.95),
        cpu,
        server_cpu_ms_per_request:
          cpu.next_server_s === null ? null : Number(((cpu.next_server_s * 1000) / answers.length).toFixed(3)),
      },
      reads: { asks, latency_ms_p50: quantile(reads, 0.5), latency_ms_p95: quantile(reads, 0.95) },
      exactly_one_go_per_key: exactlyOne,
    };
  } finally {
    await bare.stop();
    await env.db.sql.unsafe(`drop table if exists ${TABLE}`);
  }
}

/** The baseline's figures for this run: measured on the first call, the same promise after. */
export function measureBaseline(env: BenchEnv): Promise<BaselineFigures> {
  measured ??= measure(env);
  return measured;
}

/** `a / b` rounded to 3 decimals, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return Number((a / b).toFixed(3));
}

/** "0.42× (target ≥ 0.5: NOT met)" for a table cell. */
export function ratioCell(r: number | null, target: number, atLeast: boolean): string {
  if (r === null) return "n/a";
  const met = atLeast ? r >= target : r <= target;
  return `${fmt(r, 3)}× (target ${atLeast ? "≥" : "≤"} ${target}: ${met ? "met" : "NOT met"})`;
}

export const baselineBenchmark: Benchmark = {
  name: "baseline",
  summary: "the machine's floor: a bare node:http + postgres.js server making one exactly-once decision per request",
  async run(env: BenchEnv): Promise<BenchOutcome> {
    const b = await measureBaseline(env);
    const c = b.decisions.cpu;
    printTable("baseline — bare node:http + postgres.js, INSERT … ON CONFLICT DO NOTHING RETURNING per request", [
      [
        "keys × contenders",
        `${fmt(b.decisions.keys)} × ${fmt(b.decisions.requests / b.decisions.keys)} (${b.decisions.in_flight} in flight)`,
      ],
      ["decisions/s", fmt(b.decisions.decisions_per_s)],
      ["latency p50 / p95", `${fmt(b.decisions.latency_ms_p50, 2)} / ${fmt(b.decisions.latency_ms_p95, 2)} ms`],
      ["server CPU per request", `${fmt(b.decisions.server_cpu_ms_per_request, 3)} ms`],
      [
        "CPU s",
        `gen ${c.load_generator_s} · server ${c.next_server_s ?? "n/a"} · pg ${c.postgres_backends_s} · other ${c.other_s ?? "n/a"}`,
      ],
      ["read by primary key p50 / p95", `${fmt(b.reads.latency_ms_p50, 2)} / ${fmt(b.reads.latency_ms_p95, 2)} ms`],
    ]);
    return {
      name: "baseline",
      figures: b,
      checks: [{ name: "exactly one 200 per key", ok: b.exactly_one_go_per_key, detail: "a key got ≠ 1 go" }],
    };
  },
};
