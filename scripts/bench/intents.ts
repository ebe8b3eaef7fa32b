/**
 * The `intents` benchmark: side-effect intents per second through the API, with exactly-once checked.
 *
 * 1. seeds a fresh tenant and `--tasks` tasks (one `task.created` event each);
 * 2. race phase: for each of `--effects` side effects (default 2,000), `--contenders` holders (default 8) send
 *    the SAME intent at the same moment, `--concurrency` requests in flight (default 16); exactly one of them
 *    must get `go`, every other one `409 in_flight`;
 * 3. receipt phase: the winner posts the receipt;
 * 4. replay phase: every effect's intent is sent once more and must come back `replay` with that receipt and
 *    `Idempotent-Replayed: true`;
 * 5. checkpoints, then checks the database: one row per effect, all `completed`, one intent audit row per effect;
 * 6. uncontended phase: one intent for each of `--effects` new effects, nobody racing it (the usual case), each must
 *    get `go`.
 * Prints intents/s for the race, uncontended and replay phases, the answer latencies, and each as a ratio to the
 * baseline's decisions/s and p50.
 */
import { createHash, randomBytes } from "node:crypto";
import type { EventInput } from "@/lib/contract/api";
import { markCpu, spentSince } from "./cpu";
import { measureBaseline, ratio, ratioCell } from "./baseline";
import {
  createApiClient,
  inFlight,
  log,
  seedBenchTenant,
  type BenchEnv,
  type BenchOutcome,
  type Benchmark,
} from "./harness";
import { fmt, printTable, quantile } from "./report";

type Options = { effects: number; contenders: number; concurrency: number; tasks: number; checkpoints: number };

function readOptions(o: BenchEnv["options"]): Options {
  const num = (key: string, dflt: number) => {
    const v = o[key];
    if (v === undefined || typeof v === "boolean") return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${key} must be a whole number ≥ 1`);
    return n;
  };
  return {
    effects: num("effects", 2000),
    contenders: num("contenders", 8),
    concurrency: num("concurrency", 16),
    tasks: num("intent-tasks", 20),
    checkpoints: num("checkpoints", 1000),
  };
}

type Timed = { status: number; ms: number; body: Record<string, unknown>; replayed: boolean };

export const intentsBenchmark: Benchmark = {
  name: "intents",
  summary: "side-effect intents/s with N holders racing per key; exactly one go per key, then replays",
  async run(env: BenchEnv): Promise<BenchOutcome> {
    const o = readOptions(env.options);
    const tenant = await seedBenchTenant(env.db.db, "intents");
    const client = createApiClient(env.server.baseUrl, tenant.apiKey, o.concurrency);
    const run = randomBytes(4).toString("hex");
    const taskIds = Array.from({ length: o.tasks }, (_, i) => `bench-intents-${run}-${i}`);
    const now = new Date().toISOString();
    const created: EventInput[] = taskIds.map((task_id, i) => ({
      id: `${task_id}:created`,
      task_id,
      plane: "session",
      type: "task.created",
      occurred_at: now,
      attrs: { n: i },
    }));
    const seeded = await client.post("/api/v1/events", { events: created });
    if (seeded.status !== 200)
      throw new Error(`seeding tasks failed: HTTP ${seeded.status} ${seeded.text.slice(0, 200)}`);
    // A checkpoint per task: without one the gate answers replay and no write may start.
    const baseRecord = (task_id: string) => ({
      task_id,
      principal: "tenant/bench:user/1",
      policy_version: "policy-v1",
      phase: "writing",
      attempt: 1,
      inputs: [],
      decisions: [],
      artifacts: [],
      side_effects: {},
    });
    for (const task_id of taskIds) {
      const record = baseRecord(task_id);
      const put = await fetch(`${env.server.baseUrl}/api/v1/tasks/${encodeURIComponent(task_id)}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(record),
      });
      if (put.status !== 200)
        throw new Error(`checkpoint of ${task_id} failed: HTTP ${put.status} ${(await put.text()).slice(0, 200)}`);
    }

    const effects = Array.from({ length: o.effects }, (_, i) => {
      const task = taskIds[i % taskIds.length]!;
      const name = `write_${i}`;
      const key = `bench:${run}:${i}`;
      const digest = createHash("sha256").update(`${key}:payload`).digest("hex");
      return { task, name, key, digest };
    });
    const call = async (path: string, body: unknown): Promise<Timed> => {
      const t0 = performance.now();
      const res = await client.post(path, body);
      const ms = performance.now() - t0;
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(res.text) as Record<string, unknown>;
      } catch {
        parsed = { raw: res.text.slice(0, 200) };
      }
      return { status: res.status, ms, body: parsed, replayed: res.text.includes('"decision":"replay"') };
    };
    const intentPath = (e: (typeof effects)[number], what: string) =>
      `/api/v1/tasks/${encodeURIComponent(e.task)}/side-effects/${encodeURIComponent(e.name)}/${what}`;
    const intentBody = (e: (typeof effects)[number]) => ({
      idempotency_key: e.key,
      payload_digest: e.digest,
      action: "records.update",
      mutation: true,
      attempt: 1,
    });

    // Race: all contenders of one effect are queued next to each other, so they are in flight together.
    log(`intents: ${o.effects} effects × ${o.contenders} contenders, ${o.concurrency} in flight …`);
    const raceJobs = effects.flatMap((e) =>
      Array.from({ length: o.contenders }, () => () => call(intentPath(e, "intent"), intentBody(e))),
    );
    const cpu0 = await markCpu(env.db.sql, env.server.pid);
    const t0 = performance.now();
    const race = await inFlight(raceJobs, o.concurrency);
    const raceWall = (performance.now() - t0) / 1000;
    const raceCpu = await spentSince(cpu0, env.db.sql, env.server.pid);

    const goPerEffect = effects.map(
      (_, i) =>
        race.slice(i * o.contenders, (i + 1) * o.contenders).filter((r) => r.status === 200 && r.body.decision === "go")
          .length,
    );
    const otherAnswers = race.filter(
      (r) =>
        !(r.status === 200 && r.body.decision === "go") &&
        !(r.status === 409 && (r.body.error as { code?: string } | undefined)?.code === "in_flight"),
    );

    log("intents: receipts …");
    const tr = performance.now();
    const receipts = await inFlight(
      effects.map(
        (e, i) => () =>
          call(intentPath(e, "receipt"), {
            idempotency_key: e.key,
            external_operation_id: `op-${run}-${i}`,
            result_digest: e.digest,
            completed_at: new Date().toISOString(),
            attempt: 1,
          }),
      ),
      o.concurrency,
    );
    const receiptWall = (performance.now() - tr) / 1000;

    log("intents: replays …");
    const t1 = performance.now();
    const replays = await inFlight(
      effects.map((e) => () => call(intentPath(e, "intent"), intentBody(e))),
      o.concurrency,
    );
    const replayWall = (performance.now() - t1) / 1000;
    // Checkpoints: each task writes new versions one after another (a version is based on the one before), the tasks
    // side by side with --concurrency in flight.
    log(`intents: ${o.checkpoints} checkpoints …`);
    const versionsPerTask = Math.max(1, Math.ceil(o.checkpoints / taskIds.length));
    const checkpointClient = createApiClient(env.server.baseUrl, tenant.apiKey, o.concurrency);
    const tc = performance.now();
    const checkpoints = (
      await inFlight(
        taskIds.map((task_id) => async () => {
          const out: Timed[] = [];
          for (let v = 0; v < versionsPerTask; v++) {
            const t = performance.now();
            const res = await checkpointClient.put(`/api/v1/tasks/${encodeURIComponent(task_id)}`, {
              ...baseRecord(task_id),
              phase: `writing-${v}`,
            });
            out.push({ status: res.status, ms: performance.now() - t, body: {}, replayed: false });
          }
          return out;
        }),
        o.concurrency,
      )
    ).flat();
    const checkpointWall = (performance.now() - tc) / 1000;

    const badReplays = replays.filter(
      (r, i) =>
        !(
          r.status === 200 &&
          r.replayed &&
          (r.body.receipt as { external_operation_id?: string } | undefined)?.external_operation_id === `op-${run}-${i}`
        ),
    );

    const rows = await env.db.sql<{ n: string; completed: string }[]>`
      select count(*) as n, count(*) filter (where status = 'completed') as completed from side_effects where tenant_id = ${tenant.tenantId}`;
    const audits = await env.db.sql<{ n: string }[]>`
      select count(*) as n from audit_log where tenant_id = ${tenant.tenantId} and action = 'side_effect.intent_recorded' and not details ? 'refused'`;
    // One intent per effect, nobody racing it: the usual case of a runtime's write (after the counts above, so they
    // count only the race's effects).
    log(`intents: ${o.effects} intents for new effects, one each, ${o.concurrency} in flight …`);
    const fresh = effects.map((e, i) => ({
      ...e,
      name: `fresh_${i}`,
      key: `${e.key}:fresh`,
      digest: createHash("sha256").update(`${e.key}:fresh:payload`).digest("hex"),
    }));
    const cpuF = await markCpu(env.db.sql, env.server.pid);
    const tf = performance.now();
    const uncontended = await inFlight(
      fresh.map((e) => () => call(intentPath(e, "intent"), intentBody(e))),
      o.concurrency,
    );
    const uncontendedWall = (performance.now() - tf) / 1000;
    const uncontendedCpu = await spentSince(cpuF, env.db.sql, env.server.pid);
    const notGo = uncontended.filter((r) => !(r.status === 200 && r.body.decision === "go"));

    const raceMs = race.map((r) => r.ms);
    const baseline = await measureBaseline(env);
    const floor = baseline.decisions.decisions_per_s;
    const intentsPerS = Math.round(race.length / raceWall);
    const receiptsPerS = Math.round(receipts.length / receiptWall);
    const checkpointsPerS = Math.round(checkpoints.length / checkpointWall);
    const p50 = quantile(raceMs, 0.5);
    const uncontendedPerS = Math.round(uncontended.length / uncontendedWall);
    const uncontendedP50 = quantile(
      uncontended.map((r) => r.ms),
      0.5,
    );
    const figures = {
      baseline_decisions_per_s: floor,
      baseline_latency_ms_p50: baseline.decisions.latency_ms_p50,
      ratio_to_baseline: ratio(intentsPerS, floor),
      p50_ratio_to_baseline: ratio(p50, baseline.decisions.latency_ms_p50),
      uncontended_ratio_to_baseline: ratio(uncontendedPerS, floor),
      uncontended_p50_ratio_to_baseline: ratio(uncontendedP50, baseline.decisions.latency_ms_p50),
      receipts_ratio_to_baseline: ratio(receiptsPerS, floor),
      checkpoints_ratio_to_baseline: ratio(checkpointsPerS, floor),
      targets: { ratio_to_baseline: 0.5, p50_ratio_to_baseline: 2, receipts: 0.5, checkpoints: 0.5 },
      effects: o.effects,
      contenders_per_effect: o.contenders,
      in_flight: o.concurrency,
      race: {
        requests: race.length,
        wall_s: Number(raceWall.toFixed(3)),
        intents_per_s: intentsPerS,
        go_per_s: Math.round(o.effects / raceWall),
        latency_ms_p50: p50,
        latency_ms_p95: quantile(raceMs, 0.95),
        cpu: raceCpu,
      },
      uncontended: {
        requests: uncontended.length,
        wall_s: Number(uncontendedWall.toFixed(3)),
        intents_per_s: uncontendedPerS,
        latency_ms_p50: uncontendedP50,
        latency_ms_p95: quantile(
          uncontended.map((r) => r.ms),
          0.95,
        ),
        cpu: uncontendedCpu,
      },
      replay: {
        requests: replays.length,
        wall_s: Number(replayWall.toFixed(3)),
        intents_per_s: Math.round(replays.length / replayWall),
      },
      receipts: {
        requests: receipts.length,
        wall_s: Number(receiptWall.toFixed(3)),
        receipts_per_s: receiptsPerS,
        latency_ms_p50: quantile(
          receipts.map((r) => r.ms),
          0.5,
        ),
      },
      checkpoints: {
        requests: checkpoints.length,
        wall_s: Number(checkpointWall.toFixed(3)),
        checkpoints_per_s: checkpointsPerS,
        latency_ms_p50: quantile(
          checkpoints.map((r) => r.ms),
          0.5,
        ),
      },
    };
    const meets =
      (figures.ratio_to_baseline ?? 0) >= 0.5 &&
      (figures.p50_ratio_to_baseline ?? Infinity) <= 2 &&
      (figures.uncontended_ratio_to_baseline ?? 0) >= 0.5 &&
      (figures.uncontended_p50_ratio_to_baseline ?? Infinity) <= 2 &&
      (figures.receipts_ratio_to_baseline ?? 0) >= 0.5 &&
      (figures.checkpoints_ratio_to_baseline ?? 0) >= 0.5;
    printTable("intents — POST …/side-effects/{name}/intent, contenders racing per key", [
      [
        "effects × contenders",
        `${fmt(o.effects)} × ${o.contenders} (${fmt(race.length)} requests, ${o.concurrency} in flight)`,
      ],
      "race (first intents)",
      ["  intents/s", fmt(figures.race.intents_per_s)],
      ["  go decisions/s", fmt(figures.race.go_per_s)],
      ["  latency p50 / p95", `${fmt(figures.race.latency_ms_p50, 1)} / ${fmt(figures.race.latency_ms_p95, 1)} ms`],
      [
        "  CPU s",
        `gen ${raceCpu.load_generator_s} · next ${raceCpu.next_server_s ?? "n/a"} · pg ${raceCpu.postgres_backends_s} · other ${raceCpu.other_s ?? "n/a"}`,
      ],
      ["  ÷ baseline decisions/s", ratioCell(figures.ratio_to_baseline, 0.5, true)],
      ["  p50 ÷ baseline p50", ratioCell(figures.p50_ratio_to_baseline, 2, false)],
      "one intent per new effect (nobody racing it)",
      ["  intents/s (all go)", fmt(uncontendedPerS)],
      [
        "  latency p50 / p95",
        `${fmt(figures.uncontended.latency_ms_p50, 1)} / ${fmt(figures.uncontended.latency_ms_p95, 1)} ms`,
      ],
      [
        "  CPU s",
        `gen ${uncontendedCpu.load_generator_s} · next ${uncontendedCpu.next_server_s ?? "n/a"} · pg ${uncontendedCpu.postgres_backends_s} · other ${uncontendedCpu.other_s ?? "n/a"}`,
      ],
      ["  ÷ baseline decisions/s", ratioCell(figures.uncontended_ratio_to_baseline, 0.5, true)],
      ["  p50 ÷ baseline p50", ratioCell(figures.uncontended_p50_ratio_to_baseline, 2, false)],
      "receipts",
      ["  receipts/s", fmt(receiptsPerS)],
      ["  ÷ baseline decisions/s", ratioCell(figures.receipts_ratio_to_baseline, 0.5, true)],
      "replay (after receipts)",
      ["  intents/s", fmt(figures.replay.intents_per_s)],
      `checkpoints (${taskIds.length} tasks, versions in order per task)`,
      ["  checkpoints/s", fmt(checkpointsPerS)],
      ["  ÷ baseline decisions/s", ratioCell(figures.checkpoints_ratio_to_baseline, 0.5, true)],
      ["baseline decisions/s · p50", `${fmt(floor)} · ${fmt(baseline.decisions.latency_ms_p50, 2)} ms`],
    ]);
    return {
      name: "intents",
      figures: { ...figures, meets_target: meets },
      checks: [
        {
          name: "exactly one go per key",
          ok: goPerEffect.every((n) => n === 1),
          detail: `${goPerEffect.filter((n) => n !== 1).length} keys with ≠ 1 go`,
        },
        {
          name: "every other racer got 409 in_flight",
          ok: otherAnswers.length === 0,
          detail: `${otherAnswers.length} other answers${otherAnswers[0] ? ` (first: ${otherAnswers[0].status} ${JSON.stringify(otherAnswers[0].body).slice(0, 120)})` : ""}`,
        },
        {
          name: "every intent for a new effect got go",
          ok: notGo.length === 0,
          detail: `${notGo.length} other answers${notGo[0] ? ` (first: ${notGo[0].status} ${JSON.stringify(notGo[0].body).slice(0, 120)})` : ""}`,
        },
        {
          name: "every receipt stored",
          ok: receipts.every((r) => r.status === 200),
          detail: `${receipts.filter((r) => r.status !== 200).length} receipts refused`,
        },
        {
          name: "every replay returns the stored receipt",
          ok: badReplays.length === 0,
          detail: `${badReplays.length} bad replays`,
        },
        {
          name: "every checkpoint stored",
          ok: checkpoints.every((r) => r.status === 200),
          detail: `${checkpoints.filter((r) => r.status !== 200).length} checkpoints refused${checkpoints.find((r) => r.status !== 200) ? ` (first: HTTP ${checkpoints.find((r) => r.status !== 200)!.status})` : ""}`,
        },
        {
          name: "one completed row per effect",
          ok: Number(rows[0]!.n) === o.effects && Number(rows[0]!.completed) === o.effects,
          detail: `${rows[0]!.n} rows, ${rows[0]!.completed} completed`,
        },
        {
          name: "one intent audit row per effect",
          ok: Number(audits[0]!.n) === o.effects,
          detail: `${audits[0]!.n} audit rows`,
        },
      ],
    };
  },
};
