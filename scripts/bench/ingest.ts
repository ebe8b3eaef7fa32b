/**
 * The `ingest` benchmark: events per second through `POST /api/v1/events` against `COPY` of the same rows.
 *
 * 1. seeds a fresh tenant and builds the workload (see ingest-workload.ts): by default 200,000 posted
 *    events in batches of 1,000 from 4 concurrent senders, 30% of them duplicates, over 200 tasks;
 * 2. posts every batch (one request in flight per sender) and measures the wall time from the first
 *    request to the last answer, with the CPU seconds of this process, the Next server and PostgreSQL;
 * 3. copies the same unique rows (attrs redacted as the server would) into a scratch table made
 *    `LIKE events INCLUDING ALL`, with one `COPY … FROM STDIN`, and measures it the same way; drops it; three
 *    times, and compares with the median run (one COPY stream varies a lot between runs);
 * 4. checks that every unique id is stored exactly once (row count, no id missing or extra, redaction
 *    counts) and that across all answers each unique id was reported `stored` exactly once.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { EventInput, EventResult } from "@/lib/contract/api";
import { retentionClass } from "@/lib/domain/events/catalogue";
import { redactJson } from "@/lib/domain/events/redact";
import { markCpu, round, spentSince, type CpuSpent } from "./cpu";
import {
  createApiClient,
  log,
  seedBenchTenant,
  type BenchEnv,
  type BenchOutcome,
  type Benchmark,
  type Sql,
} from "./harness";
import { buildWorkload, type PlannedBatch, type Workload } from "./ingest-workload";
import { fmt, printTable, quantile } from "./report";

/** The throughput target: API events/s at least this share of COPY's. */
export const TARGET_RATIO = 0.5;

type Options = {
  total: number;
  batchSize: number;
  senders: number;
  dupRatio: number;
  tasks: number;
  seed: number;
  keepData: boolean;
};

function readOptions(o: BenchEnv["options"]): Options {
  const num = (key: string, dflt: number) => {
    const v = o[key];
    if (v === undefined || typeof v === "boolean") return dflt;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`--${key} must be a number`);
    return n;
  };
  const opts: Options = {
    total: num("events", 200_000),
    batchSize: num("batch", 1000),
    senders: num("senders", 4),
    dupRatio: num("dup", 0.3),
    tasks: num("tasks", 200),
    seed: num("seed", 20240601),
    keepData: o["keep-data"] === true,
  };
  if (opts.batchSize < 1 || opts.batchSize > 1000) throw new Error("--batch must be 1–1000 (the API's limit)");
  if (opts.dupRatio < 0 || opts.dupRatio >= 1) throw new Error("--dup must be in [0, 1)");
  if (opts.senders < 1 || opts.total < 1 || opts.tasks < 1)
    throw new Error("--senders, --events and --tasks must be ≥ 1");
  return opts;
}

type Answer = {
  batch: PlannedBatch;
  status: number;
  results: EventResult[] | null;
  error?: string;
  t0: number;
  t1: number;
};

/** Posts every sender's batches, one request in flight per sender, all senders at once. */
async function postAll(env: BenchEnv, apiKey: string, workload: Workload): Promise<Answer[]> {
  const client = createApiClient(env.server.baseUrl, apiKey, workload.perSender.length);
  const answers: Answer[] = [];
  await Promise.all(
    workload.perSender.map(async (batches) => {
      for (const batch of batches) {
        const t0 = performance.now();
        try {
          const res = await client.post("/api/v1/events", batch.body);
          const t1 = performance.now();
          if (res.status !== 200) {
            answers.push({ batch, status: res.status, results: null, error: res.text.slice(0, 300), t0, t1 });
            continue;
          }
          const body = client.json<{ results: EventResult[] }>(res);
          answers.push({ batch, status: res.status, results: body.results, t0, t1 });
        } catch (err) {
          answers.push({
            batch,
            status: 0,
            results: null,
            error: err instanceof Error ? err.message : String(err),
            t0,
            t1: performance.now(),
          });
        }
      }
    }),
  );
  return answers;
}

/** Escapes one field for COPY text format (`\N` for null). */
function copyField(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return "\\N";
  const s = String(v);
  return /[\\\t\n\r]/.test(s)
    ? s.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r")
    : s;
}

const COPY_COLUMNS =
  "tenant_id, event_id, task_id, plane, type, occurred_at, environment_id, attempt, actor, attrs, redaction_count, retention_class";

/** COPY text lines of the unique events (attrs redacted like the server does), in chunks of `chunk` rows. */
export function copyChunks(
  tenantId: string,
  unique: EventInput[],
  chunk = 1000,
): { chunks: string[]; redactions: number } {
  const chunks: string[] = [];
  let redactions = 0;
  let buf: string[] = [];
  for (const e of unique) {
    const r = redactJson(e.attrs ?? {});
    redactions += r.redactions.length;
    buf.push(
      [
        tenantId,
        e.id,
        e.task_id,
        e.plane,
        e.type,
        e.occurred_at,
        e.environment_id,
        e.attempt,
        e.actor,
        JSON.stringify(r.value),
        r.redactions.length,
        retentionClass(e.type),
      ]
        .map(copyField)
        .join("\t"),
    );
    if (buf.length === chunk) {
      chunks.push(buf.join("\n") + "\n");
      buf = [];
    }
  }
  if (buf.length) chunks.push(buf.join("\n") + "\n");
  return { chunks, redactions };
}

const COPY_TIMEOUT_MS = 180_000;
/** COPY runs per benchmark; the median one is compared with the API. */
const COPY_RUNS = 3;

/** Copies the chunks into a fresh scratch table `LIKE events INCLUDING ALL`; measures; drops the table. */
export async function copyPhase(sql: Sql, chunks: string[]): Promise<{ table: string; cpu: CpuSpent; rows: number }> {
  const table = `bench_events_copy_${randomBytes(4).toString("hex")}`;
  await sql.unsafe(`create table ${table} (like events including all)`);
  try {
    await sql.unsafe("checkpoint");
    const reserved = await sql.reserve();
    try {
      const mark = await markCpu(sql, null);
      const writable = await reserved.unsafe(`copy ${table} (${COPY_COLUMNS}) from stdin`).writable();
      // postgres.js does not surface an error raised by the server during COPY (the stream just never
      // finishes), so a watchdog turns a stuck COPY into a failure instead of a hang.
      let timer: NodeJS.Timeout | undefined;
      const watchdog = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`COPY did not finish within ${COPY_TIMEOUT_MS / 1000} s; see the PostgreSQL log for the error`),
            ),
          COPY_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([pipeline(Readable.from(chunks), writable), watchdog]);
      } finally {
        clearTimeout(timer);
      }
      const cpu = await spentSince(mark, sql, null);
      const [loaded] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)}`;
      return { table, cpu, rows: loaded?.n ?? 0 };
    } finally {
      reserved.release();
    }
  } finally {
    await sql.unsafe(`drop table if exists ${table}`);
  }
}

/** Ids posted at least twice whose posts were in flight at the same time in different requests. */
function racedIds(answers: Answer[]): number {
  const spans = new Map<string, Array<[number, number, number]>>();
  answers.forEach((a, i) => {
    for (const e of a.batch.events) {
      const list = spans.get(e.id) ?? [];
      list.push([a.t0, a.t1, i]);
      spans.set(e.id, list);
    }
  });
  let raced = 0;
  for (const list of spans.values()) {
    if (list.length < 2) continue;
    let hit = false;
    for (let i = 0; i < list.length && !hit; i++) {
      for (let j = i + 1; j < list.length && !hit; j++) {
        const [a0, a1, ai] = list[i]!;
        const [b0, b1, bi] = list[j]!;
        if (ai !== bi && a0 < b1 && b0 < a1) hit = true;
      }
    }
    if (hit) raced += 1;
  }
  return raced;
}

/** Runs the ingest benchmark against the started server. */
async function runIngest(env: BenchEnv): Promise<BenchOutcome> {
  const opts = readOptions(env.options);
  const { sql } = env.db;
  const tenant = await seedBenchTenant(env.db.db, "ingest");
  log(`tenant ${tenant.slug} (${tenant.tenantId}); building the workload …`);
  const tBuild = performance.now();
  const workload = buildWorkload(opts, randomBytes(3).toString("hex"));
  const uniqueIds = new Set(workload.unique.map((e) => e.id));
  const { chunks, redactions: expectedRedactions } = copyChunks(tenant.tenantId, workload.unique);
  log(
    `${fmt(workload.posted)} events to post (${fmt(workload.unique.length)} unique, ${fmt(workload.posted - workload.unique.length)} duplicates) ` +
      `in ${fmt(workload.perSender.reduce((s, l) => s + l.length, 0))} batches from ${opts.senders} senders; built in ${fmt((performance.now() - tBuild) / 1000, 1)} s`,
  );

  // Warm-up: load the route and authenticate once (an empty batch stores nothing).
  const client = createApiClient(env.server.baseUrl, tenant.apiKey, opts.senders);
  for (let i = 0; i < 3; i++) {
    const warm = await client.post("/api/v1/events", { events: [] });
    if (warm.status !== 200)
      throw new Error(`warm-up POST /api/v1/events answered ${warm.status}: ${warm.text.slice(0, 300)}`);
  }

  // Autovacuum may be off (it is on the development machine): earlier runs' deleted rows would otherwise
  // leave the events indexes full of dead entries while COPY writes into a fresh table.
  await sql.unsafe("vacuum (analyze) events, tasks, side_effects");
  await sql.unsafe("checkpoint");
  log("posting through the API …");
  const mark = await markCpu(sql, env.server.pid);
  const answers = await postAll(env, tenant.apiKey, workload);
  const apiCpu = await spentSince(mark, sql, env.server.pid);
  const apiWall = apiCpu.wall_s;

  log(`COPY of the same unique rows into a scratch table, ${COPY_RUNS} times …`);
  const copyRuns: Array<Awaited<ReturnType<typeof copyPhase>>> = [];
  for (let i = 0; i < COPY_RUNS; i++) copyRuns.push(await copyPhase(sql, chunks));
  // One COPY stream swings by ±30% between runs here; the median run is the reference.
  const byWall = [...copyRuns].sort((a, b) => a.cpu.wall_s - b.cpu.wall_s);
  const copy = byWall[Math.floor(byWall.length / 2)]!;
  const copyWall = copy.cpu.wall_s;

  // Checks: answers.
  const checks: BenchOutcome["checks"] = [];
  const failed = answers.filter((a) => a.status !== 200 || !a.results);
  checks.push({
    name: "every request answered 200",
    ok: failed.length === 0,
    detail:
      failed.length === 0
        ? `${answers.length} requests`
        : `${failed.length} failed, e.g. HTTP ${failed[0]!.status}: ${failed[0]!.error}`,
  });
  checks.push({
    name: "COPY loaded every unique row",
    ok: copyRuns.every((c) => c.rows === uniqueIds.size),
    detail: `${fmt(copy.rows)} rows copied in each of ${copyRuns.length} runs`,
  });
  const storedCount = new Map<string, number>();
  let misaligned = 0;
  let rejected = 0;
  let duplicateAnswers = 0;
  const rejectSamples: string[] = [];
  for (const a of answers) {
    if (!a.results) continue;
    if (a.results.length !== a.batch.events.length) misaligned += 1;
    a.results.forEach((r, i) => {
      if (r.id !== a.batch.events[i]?.id) misaligned += 1;
      if (r.status === "stored") storedCount.set(r.id, (storedCount.get(r.id) ?? 0) + 1);
      else if (r.status === "duplicate") duplicateAnswers += 1;
      else {
        rejected += 1;
        if (rejectSamples.length < 3) rejectSamples.push(`${r.id}: ${r.error?.code} ${r.error?.message}`);
      }
    });
  }
  checks.push({
    name: "answers align with the posted events",
    ok: misaligned === 0,
    detail: `${misaligned} misaligned`,
  });
  checks.push({
    name: "no event rejected",
    ok: rejected === 0,
    detail: rejected ? `${rejected} rejected, e.g. ${rejectSamples.join("; ")}` : "0 rejected",
  });
  let storedTwice = 0;
  let neverStored = 0;
  for (const id of uniqueIds) {
    const n = storedCount.get(id) ?? 0;
    if (n === 0) neverStored += 1;
    if (n > 1) storedTwice += 1;
  }
  checks.push({
    name: "each unique id answered `stored` exactly once",
    ok: storedTwice === 0 && neverStored === 0 && failed.length === 0,
    detail: `${storedTwice} ids stored more than once, ${neverStored} never answered stored`,
  });

  // Checks: database.
  const rows = await sql<{ event_id: string }[]>`select event_id from events where tenant_id = ${tenant.tenantId}`;
  const inDb = new Set(rows.map((r) => r.event_id));
  let missing = 0;
  for (const id of uniqueIds) if (!inDb.has(id)) missing += 1;
  let extra = 0;
  for (const id of inDb) if (!uniqueIds.has(id)) extra += 1;
  checks.push({
    name: "each event stored exactly once",
    ok: rows.length === uniqueIds.size && inDb.size === rows.length && missing === 0 && extra === 0,
    detail: `${fmt(rows.length)} rows for ${fmt(uniqueIds.size)} unique ids; ${missing} missing, ${extra} unexpected, ${rows.length - inDb.size} repeated`,
  });
  const [red] = await sql<
    { n: string }[]
  >`select coalesce(sum(redaction_count), 0)::text as n from events where tenant_id = ${tenant.tenantId}`;
  checks.push({
    name: "secrets redacted as expected",
    ok: Number(red?.n) === expectedRedactions,
    detail: `${red?.n} redactions stored, ${expectedRedactions} expected`,
  });

  if (!opts.keepData) {
    try {
      await sql.begin(async (tx) => {
        await tx`delete from side_effects where tenant_id = ${tenant.tenantId}`;
        await tx`delete from events where tenant_id = ${tenant.tenantId}`;
        await tx`delete from tasks where tenant_id = ${tenant.tenantId}`;
        await tx`update api_keys set revoked_at = now() where tenant_id = ${tenant.tenantId}`;
      });
      await sql.unsafe("vacuum events, tasks, side_effects");
    } catch (err) {
      log(
        `note: could not remove the benchmark's rows (${err instanceof Error ? err.message : err}); they stay under tenant ${tenant.slug}`,
      );
    }
  }

  const latencies = answers.map((a) => a.t1 - a.t0);
  const unique = uniqueIds.size;
  const apiStoredEps = unique / apiWall;
  const apiPostedEps = workload.posted / apiWall;
  const copyEps = unique / copyWall;
  const ratio = apiStoredEps / copyEps;
  const serverSide =
    (apiCpu.next_server_s ?? 0) + (apiCpu.postgres_backends_s ?? 0) + (apiCpu.postgres_background_s ?? 0);
  const copyServerSide = (copy.cpu.postgres_backends_s ?? 0) + (copy.cpu.postgres_background_s ?? 0);
  const [pgInfo] = await sql<{ version: string; sync: string; sb: string }[]>`
    select current_setting('server_version') as version, current_setting('synchronous_commit') as sync,
           current_setting('shared_buffers') as sb`;

  const figures = {
    workload: {
      posted: workload.posted,
      unique,
      duplicates: workload.posted - unique,
      duplicate_kinds_planned: workload.planned,
      duplicate_ids_posted_concurrently: racedIds(answers),
      batch_size: opts.batchSize,
      senders: opts.senders,
      tasks: opts.tasks,
      by_plane: workload.byPlane,
      largest_body_bytes: workload.largestBodyBytes,
      redactions_expected: expectedRedactions,
    },
    api: {
      wall_s: apiWall,
      stored_events_per_s: round(apiStoredEps),
      posted_events_per_s: round(apiPostedEps),
      requests: answers.length,
      request_ms_p50: round(quantile(latencies, 0.5) ?? 0, 1),
      request_ms_p95: round(quantile(latencies, 0.95) ?? 0, 1),
      request_ms_max: round(Math.max(...latencies), 1),
      answers: { stored: [...storedCount.values()].reduce((s, n) => s + n, 0), duplicate: duplicateAnswers, rejected },
      cpu: apiCpu,
      server_side_cpu_s: round(serverSide, 2),
      stored_events_per_server_cpu_s: serverSide > 0 ? round(unique / serverSide) : null,
    },
    copy: {
      rows: unique,
      wall_s: copyWall,
      events_per_s: round(copyEps),
      runs: copyRuns.length,
      events_per_s_each_run: copyRuns.map((c) => round(unique / c.cpu.wall_s)),
      cpu: copy.cpu,
      server_side_cpu_s: round(copyServerSide, 2),
      events_per_server_cpu_s: copyServerSide > 0 ? round(unique / copyServerSide) : null,
    },
    ratio_api_to_copy: round(ratio, 3),
    ratio_posted_to_copy: round(apiPostedEps / copyEps, 3),
    target_ratio: TARGET_RATIO,
    meets_target: ratio >= TARGET_RATIO,
    postgres: { version: pgInfo?.version, synchronous_commit: pgInfo?.sync, shared_buffers: pgInfo?.sb },
    tenant: tenant.slug,
    at: new Date().toISOString(),
  };

  const cpuRow = (c: CpuSpent) =>
    `gen ${fmt(c.load_generator_s, 1)} · next ${fmt(c.next_server_s, 1)} · pg ${fmt(c.postgres_backends_s, 1)}+${fmt(c.postgres_background_s, 1)} · other ${fmt(c.other_s, 1)} (of ${fmt(c.wall_s * c.cores, 1)} on ${c.cores} cores)`;
  printTable("ingest — POST /api/v1/events vs COPY", [
    [
      "posted events",
      `${fmt(workload.posted)} in ${fmt(answers.length)} batches of ≤ ${opts.batchSize}, ${opts.senders} senders`,
    ],
    [
      "unique events",
      `${fmt(unique)} over ${fmt(opts.tasks)} tasks (session ${fmt(workload.byPlane.session)}, environment ${fmt(workload.byPlane.environment)}, tools ${fmt(workload.byPlane.tools)}, vault ${fmt(workload.byPlane.vault)})`,
    ],
    [
      "duplicates posted",
      `${fmt(workload.posted - unique)} (replay ${fmt(workload.planned.replay)}, race ${fmt(workload.planned.race)}, in-batch ${fmt(workload.planned.in_batch)}; ${fmt(figures.workload.duplicate_ids_posted_concurrently)} ids seen in flight twice at once)`,
    ],
    "API",
    ["  wall time", `${fmt(apiWall, 2)} s`],
    ["  stored events/s", fmt(apiStoredEps)],
    ["  posted events/s", fmt(apiPostedEps)],
    [
      "  request p50 / p95 / max",
      `${fmt(figures.api.request_ms_p50)} / ${fmt(figures.api.request_ms_p95)} / ${fmt(figures.api.request_ms_max)} ms`,
    ],
    ["  CPU s", cpuRow(apiCpu)],
    ["  events per server CPU s", fmt(figures.api.stored_events_per_server_cpu_s)],
    `COPY (one stream, same unique rows, scratch table LIKE events INCLUDING ALL; median of ${copyRuns.length} runs)`,
    ["  wall time", `${fmt(copyWall, 2)} s`],
    ["  events/s", `${fmt(copyEps)} (runs: ${figures.copy.events_per_s_each_run.map((n) => fmt(n)).join(", ")})`],
    ["  CPU s", cpuRow(copy.cpu)],
    ["  events per server CPU s", fmt(figures.copy.events_per_server_cpu_s)],
    "Result",
    [
      "  API stored/s ÷ COPY/s",
      `${fmt(ratio, 3)}  (target ≥ ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? "met" : "NOT met"})`,
    ],
    ["  API posted/s ÷ COPY/s", fmt(figures.ratio_posted_to_copy, 3)],
    ...checks.map((c): [string, string] => [`  ${c.ok ? "ok  " : "FAIL"} ${c.name}`, c.detail]),
  ]);

  return { name: "ingest", figures, checks };
}

export const ingestBenchmark: Benchmark = {
  name: "ingest",
  summary: "events/s through POST /api/v1/events (4 senders, 30% duplicates) vs COPY; exactly-once checked",
  run: runIngest,
};
