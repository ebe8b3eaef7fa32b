/**
 * The `scale` benchmark: whether the event store's cost stays flat as history grows (decision 0054). The same figures
 * at two sizes of one tenant's history, in one run:
 *   small  --scale-small events (100,000) over tasks of --scale-per-task events (1,000) each;
 *   large  --scale-events events (10,000,000) over as many tasks of the same size (10,000 by default).
 * Each task's events are a run's usual mix (sandbox, snapshots, tool calls and outcomes, credential uses, egress),
 * seeded in SQL (ids claimed in `event_ids`, each event in its partition) with their receipt spread over the last
 * 12 months, so the history sits in 12 monthly partitions. At each size it measures, on the same probe tasks
 * (--scale-probes, 20, each with a checkpoint):
 *   - ingest: --scale-ingest (20,000) new events through `POST /api/v1/events` (batches of 1,000 from 4 senders) ÷
 *     `COPY` of the same rows into a scratch copy of `events` (its indexes included);
 *   - the timeline's first page: p50/p95 of `GET /api/v1/tasks/{id}/timeline` over --scale-requests (200) asks;
 *   - the gate: p50/p95 of `POST /api/v1/tasks/{id}/resume` over as many asks.
 * Target: at the large size, each figure within 1.5× of the small one (the ingest ratio at least the small one ÷ 1.5).
 * Seeding 10 million events takes a while (it prints its progress); `--keep-data` keeps them for another run.
 */
import { randomBytes } from "node:crypto";
import type { EventInput } from "@/lib/contract/api";
import { ensureEventMonths } from "@/lib/domain/retention/partitions";
import { markCpu, spentSince } from "./cpu";
import {
  createApiClient,
  inFlight,
  log,
  seedBenchTenant,
  type BenchEnv,
  type BenchOutcome,
  type Benchmark,
  type Sql,
} from "./harness";
import { copyChunks, copyPhase } from "./ingest";
import { fmt, printTable, quantile } from "./report";

/** The target: each figure at the large size within this factor of the small one. */
const TARGET_FACTOR = 1.5;
const SHA = (c: string) => c.repeat(64);

type Sizes = { small: number; large: number; perTask: number; probes: number; ingest: number; requests: number };

function readSizes(o: BenchEnv["options"]): Sizes {
  const num = (key: string, dflt: number) => {
    const v = o[key];
    return typeof v === "string" && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : dflt;
  };
  const sizes = {
    small: num("scale-small", 100_000),
    large: num("scale-events", 10_000_000),
    perTask: num("scale-per-task", 1_000),
    probes: num("scale-probes", 20),
    ingest: num("scale-ingest", 20_000),
    requests: num("scale-requests", 200),
  };
  if (sizes.large <= sizes.small) throw new Error("--scale-events must be larger than --scale-small");
  if (sizes.small < sizes.perTask * sizes.probes) throw new Error("--scale-small must hold every probe task");
  return sizes;
}

const taskName = (tag: string, i: number) => `scale-${tag}-${String(i).padStart(6, "0")}`;

/**
 * Seeds tasks `from` … `to - 1` (`perTask` events each) in SQL, 100 tasks per statement: the tasks, their ids in
 * `event_ids` and their events, received over the 12 months before `now`.
 */
async function seedTasks(sql: Sql, tenantId: string, tag: string, from: number, to: number, perTask: number) {
  const started = performance.now();
  for (let a = from; a < to; a += 100) {
    const b = Math.min(to, a + 100);
    await sql.begin(async (tx) => {
      await tx`insert into tasks (tenant_id, task_id, phase, current_attempt, principal)
               select ${tenantId}::uuid, 'scale-' || ${tag} || '-' || lpad(t::text, 6, '0'), 'working', 1, 'tenant/bench:user/1'
               from generate_series(${a}::int, ${b - 1}::int) t`;
      await tx`insert into event_ids (tenant_id, event_id)
               select ${tenantId}::uuid, 'scale-' || ${tag} || '-' || lpad(t::text, 6, '0') || ':' || k
               from generate_series(${a}::int, ${b - 1}::int) t, generate_series(0, ${perTask - 1}::int) k`;
      await tx`
        insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, received_at, environment_id, attempt,
                            attrs, retention_class)
        select ${tenantId}::uuid, task || ':' || k, task, plane::event_plane, type,
               now() - interval '400 days' + make_interval(secs => k),
               now() - interval '360 days' + (t::float8 / ${to} + k::float8 / ${perTask * to}) * interval '355 days',
               'sbx-1', 1, attrs, custody_event_retention_class(type)
        from (
          select t, k, 'scale-' || ${tag} || '-' || lpad(t::text, 6, '0') as task,
                 case when k = 0 or k % 100 = 50 then 'environment' when k % 10 = 7 then 'vault' else 'tools' end as plane,
                 case when k = 0 then 'sandbox.created' when k % 100 = 50 then 'snapshot.saved'
                      when k % 10 = 7 then 'credential.used' when k % 10 = 8 then 'egress.allowed'
                      when k % 2 = 1 then 'tool.called' else 'tool.completed' end as type,
                 case when k % 100 = 50 then jsonb_build_object('digest', ${SHA("c")}::text, 'snapshot_id', 'snap-' || k)
                      when k % 10 = 7 then jsonb_build_object('credential_ref', 'records-api', 'host', 'records.example.com')
                      when k % 10 = 8 then jsonb_build_object('host', 'records.example.com')
                      else jsonb_build_object('tool', 'read_page', 'call_id', 'call-' || (k / 2)) end as attrs
          from generate_series(${a}::int, ${b - 1}::int) t, generate_series(0, ${perTask - 1}::int) k) s`;
    });
    if ((b - from) % 1000 === 0 || b === to)
      log(
        `scale: seeded ${fmt((b - from) * perTask)} of ${fmt((to - from) * perTask)} events (${fmt((performance.now() - started) / 1000)} s)`,
      );
  }
  await sql.unsafe("vacuum (analyze) events, event_ids, tasks");
}

type Figures = {
  events: number;
  ingest_api_per_s: number;
  ingest_copy_per_s: number;
  ratio_api_to_copy: number;
  timeline_p50_ms: number | null;
  timeline_p95_ms: number | null;
  gate_p50_ms: number | null;
  gate_p95_ms: number | null;
};

/** The three measurements at the current size. */
async function measure(
  env: BenchEnv,
  tenant: { tenantId: string; apiKey: string },
  probes: string[],
  sizes: Sizes,
  events: number,
  tag: string,
): Promise<Figures> {
  const client = createApiClient(env.server.baseUrl, tenant.apiKey, 4);
  // Ingest: fresh tasks, unique events, batches of 1,000 from 4 senders.
  const fresh: EventInput[] = [];
  const start = Date.now() - 3_600_000;
  for (let i = 0; i < sizes.ingest; i++) {
    const task = `scale-ingest-${tag}-${Math.floor(i / sizes.perTask)}`;
    fresh.push({
      id: `${task}:${i}`,
      task_id: task,
      plane: "tools",
      type: i % 2 ? "tool.completed" : "tool.called",
      occurred_at: new Date(start + i).toISOString(),
      attempt: 1,
      attrs: { tool: "read_page", call_id: `call-${Math.floor(i / 2)}` },
    });
  }
  const batches: EventInput[][] = [];
  for (let i = 0; i < fresh.length; i += 1000) batches.push(fresh.slice(i, i + 1000));
  await env.db.sql.unsafe("checkpoint");
  const mark = await markCpu(env.db.sql, env.server.pid);
  const posted = await inFlight(
    batches.map((events) => () => client.post("/api/v1/events", { events })),
    4,
  );
  const api = await spentSince(mark, env.db.sql, env.server.pid);
  const failed = posted.filter((r) => r.status !== 200);
  if (failed.length)
    throw new Error(
      `ingest: ${failed.length} batches failed, e.g. HTTP ${failed[0]!.status} ${failed[0]!.text.slice(0, 200)}`,
    );
  const { chunks } = copyChunks(
    tenant.tenantId,
    fresh.map((e) => ({ ...e, id: `copy-${e.id}` })),
  );
  const copy = await copyPhase(env.db.sql, chunks);
  const apiRate = sizes.ingest / api.wall_s;
  const copyRate = sizes.ingest / copy.cpu.wall_s;

  // The timeline's first page and the gate, on the probe tasks (each warmed three times first).
  for (let round = 0; round < 3; round++)
    for (const id of probes) {
      await client.get(`/api/v1/tasks/${encodeURIComponent(id)}/timeline`);
      await client.post(`/api/v1/tasks/${encodeURIComponent(id)}/resume`, {});
    }
  const timeline: number[] = [];
  const gate: number[] = [];
  for (let i = 0; i < sizes.requests; i++) {
    const id = encodeURIComponent(probes[i % probes.length]!);
    let t = performance.now();
    const page = await client.get(`/api/v1/tasks/${id}/timeline`);
    timeline.push(performance.now() - t);
    if (page.status !== 200) throw new Error(`timeline: HTTP ${page.status} ${page.text.slice(0, 200)}`);
    t = performance.now();
    const ask = await client.post(`/api/v1/tasks/${id}/resume`, {});
    gate.push(performance.now() - t);
    if (ask.status !== 200) throw new Error(`gate: HTTP ${ask.status} ${ask.text.slice(0, 200)}`);
  }
  return {
    events,
    ingest_api_per_s: Math.round(apiRate),
    ingest_copy_per_s: Math.round(copyRate),
    ratio_api_to_copy: Math.round((apiRate / copyRate) * 1000) / 1000,
    timeline_p50_ms: quantile(timeline, 0.5),
    timeline_p95_ms: quantile(timeline, 0.95),
    gate_p50_ms: quantile(gate, 0.5),
    gate_p95_ms: quantile(gate, 0.95),
  };
}

async function runScale(env: BenchEnv): Promise<BenchOutcome> {
  const sizes = readSizes(env.options);
  const { sql } = env.db;
  const tenant = await seedBenchTenant(env.db.db, "scale");
  const tag = randomBytes(3).toString("hex");
  const now = new Date();
  for (let m = 12; m >= 0; m -= 1)
    await ensureEventMonths(env.db.db, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - m, 15)));

  const smallTasks = Math.ceil(sizes.small / sizes.perTask);
  const largeTasks = Math.ceil(sizes.large / sizes.perTask);
  log(`scale: tenant ${tenant.slug}; seeding ${fmt(sizes.small)} events over ${fmt(smallTasks)} tasks …`);
  await seedTasks(sql, tenant.tenantId, tag, 0, smallTasks, sizes.perTask);
  const client = createApiClient(env.server.baseUrl, tenant.apiKey, 4);
  const probes = Array.from({ length: sizes.probes }, (_, i) =>
    taskName(tag, Math.floor((i * smallTasks) / sizes.probes)),
  );
  for (const id of probes) {
    const put = await client.put(`/api/v1/tasks/${encodeURIComponent(id)}`, {
      task_id: id,
      principal: "tenant/bench:user/1",
      policy_version: "policy-v1",
      phase: "working",
      attempt: 1,
      inputs: [],
      decisions: [],
      artifacts: [],
      side_effects: {},
      tool_definitions: {},
    });
    if (put.status !== 200) throw new Error(`checkpoint of ${id}: HTTP ${put.status} ${put.text.slice(0, 200)}`);
  }
  log("scale: measuring at the small size …");
  const small = await measure(env, tenant, probes, sizes, sizes.small, `${tag}-s`);
  log(`scale: seeding up to ${fmt(sizes.large)} events over ${fmt(largeTasks)} tasks …`);
  const seedStart = performance.now();
  await seedTasks(sql, tenant.tenantId, tag, smallTasks, largeTasks, sizes.perTask);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  log("scale: measuring at the large size …");
  const large = await measure(env, tenant, probes, sizes, sizes.large, `${tag}-l`);

  const factor = (a: number | null, b: number | null) => (a && b ? Math.round((a / b) * 100) / 100 : null);
  const ingestFactor = factor(small.ratio_api_to_copy, large.ratio_api_to_copy);
  const timelineFactor = factor(large.timeline_p95_ms, small.timeline_p95_ms);
  const gateFactor = factor(large.gate_p95_ms, small.gate_p95_ms);
  printTable(`scale: ${fmt(sizes.small)} against ${fmt(sizes.large)} events`, [
    ["ingest ratio to COPY (small)", small.ratio_api_to_copy],
    ["ingest ratio to COPY (large)", large.ratio_api_to_copy],
    ["timeline first page p95 ms (small)", fmt(small.timeline_p95_ms, 1)],
    ["timeline first page p95 ms (large)", fmt(large.timeline_p95_ms, 1)],
    ["gate p95 ms (small)", fmt(small.gate_p95_ms, 1)],
    ["gate p95 ms (large)", fmt(large.gate_p95_ms, 1)],
    ["seeding the large size, s", fmt(seedSeconds)],
  ]);
  const within = (f: number | null) => f !== null && f <= TARGET_FACTOR;
  const [count] = await sql<
    { n: number }[]
  >`select count(*)::int as n from events where tenant_id = ${tenant.tenantId}`;
  const stored = count?.n ?? 0;
  if (env.options["keep-data"] !== true) {
    log("scale: removing the benchmark's rows …");
    await sql`delete from events where tenant_id = ${tenant.tenantId}`;
    await sql`delete from event_ids where tenant_id = ${tenant.tenantId}`;
  }
  return {
    name: "scale",
    figures: {
      sizes,
      small,
      large,
      seed_large_s: Math.round(seedSeconds),
      factors: { ingest_ratio: ingestFactor, timeline_p95: timelineFactor, gate_p95: gateFactor },
      target_factor: TARGET_FACTOR,
    },
    checks: [
      {
        name: "every seeded and posted event is stored",
        ok: stored >= sizes.large + 2 * sizes.ingest,
        detail: `${fmt(stored)} events`,
      },
      {
        name: `ingest ratio to COPY at the large size within ${TARGET_FACTOR}× of the small one`,
        ok: within(ingestFactor),
        detail: `${ingestFactor}×`,
      },
      {
        name: `timeline first page p95 within ${TARGET_FACTOR}×`,
        ok: within(timelineFactor),
        detail: `${timelineFactor}×`,
      },
      { name: `gate p95 within ${TARGET_FACTOR}×`, ok: within(gateFactor), detail: `${gateFactor}×` },
    ],
  };
}

export const scaleBenchmark: Benchmark = {
  name: "scale",
  summary: "ingest ratio to COPY, timeline first page and gate p95 at 100,000 and at 10,000,000 events",
  run: runScale,
};
