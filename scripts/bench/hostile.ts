/**
 * The `hostile` benchmark: what the most expensive requests a runtime may send cost everyone else (decision 0034).
 *
 * 1. seeds a fresh tenant with a normal task (a checkpoint, a few effects), a task of `--hostile-big-events` (2,000)
 *    events of 63 KB each (in SQL), and a task holding the most pending approval requests (100, through intents);
 * 2. normal traffic, one request at a time: a resume-gate ask on the normal task, then a batch of 10 small events,
 *    alternately — `--hostile-requests` (300) requests alone, for the baseline;
 * 3. the same normal traffic again while one hostile client sends, one after another and `--hostile-rounds` (2)
 *    times over: a RunState import at the limit (500 tool calls) into a fresh task, a RunState of 4,000 calls
 *    (refused with 422), the arrival feed of the task of large events as the task page reads it (`attrs=summary`,
 *    1,000 events), one large event's detail, an event batch of 1 MiB, an intent whose body is 1 MiB of nesting
 *    (refused with 422), and a gate ask on the task with 100 pending approval requests; the normal traffic runs at
 *    least as long as the hostile client;
 * 4. prints the normal traffic's p50 / p95 alone and beside the hostile requests, their ratio (target p95 ≤ 2×), and
 *    what each hostile request took.
 */
import { randomBytes } from "node:crypto";
import type { EventInput } from "@/lib/contract/api";
import { LIMITS } from "@/lib/domain/limits";
import { createApiClient, log, seedBenchTenant, type BenchEnv, type BenchOutcome, type Benchmark } from "./harness";
import { fmt, printTable, quantile } from "./report";

const SHA = (c: string) => c.repeat(64);

/** A Python-SDK RunState that ended mid-turn with `executed` answered calls and `open` unanswered ones. */
function runState(executed: number, open: number, tag: string): Record<string, unknown> {
  const call = (id: string) => ({
    type: "tool_call_item",
    agent: { name: "a" },
    raw_item: { type: "function_call", call_id: id, name: "update_record", arguments: '{"n":1}', id: `fc_${id}` },
  });
  const output = (id: string) => ({
    type: "tool_call_output_item",
    agent: { name: "a" },
    output: "ok",
    raw_item: { type: "function_call_output", call_id: id, output: "ok" },
  });
  const items: unknown[] = [];
  for (let i = 0; i < executed; i += 1) items.push(call(`${tag}-d${i}`), output(`${tag}-d${i}`));
  for (let i = 0; i < open; i += 1) items.push(call(`${tag}-o${i}`));
  return {
    $schemaVersion: "1.17",
    current_turn: 1,
    max_turns: 10,
    current_agent: { name: "a" },
    original_input: "bench",
    model_responses: [],
    context: { usage: { requests: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 }, approvals: {}, context: {} },
    current_step: { type: "next_step_run_again", data: {} },
    generated_items: items,
  };
}

export const hostileBenchmark: Benchmark = {
  name: "hostile",
  summary: "normal traffic's p95 alone and beside the costliest requests a runtime may send (target ≤ 2×)",
  async run(env: BenchEnv): Promise<BenchOutcome> {
    const num = (key: string, dflt: number) => {
      const v = env.options[key];
      return typeof v === "string" && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : dflt;
    };
    const normalCount = num("hostile-requests", 300);
    const rounds = num("hostile-rounds", 2);
    const bigEvents = num("hostile-big-events", 2000);
    const tenant = await seedBenchTenant(env.db.db, "hostile");
    // Separate socket pools: a normal request never queues behind a hostile one in the load generator.
    const normal = createApiClient(env.server.baseUrl, tenant.apiKey, 3);
    const hostile = createApiClient(env.server.baseUrl, tenant.apiKey, 5);
    const tag = randomBytes(4).toString("hex");
    const enc = encodeURIComponent;
    const checkpoint = async (taskId: string, sideEffects: Record<string, unknown> = {}) => {
      const res = await fetch(`${env.server.baseUrl}/api/v1/tasks/${enc(taskId)}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          task_id: taskId,
          principal: "tenant/bench:user/1",
          policy_version: "policy-v1",
          phase: "writing",
          attempt: 1,
          inputs: [{ ref: "s3://bench/input.pdf", sha256: SHA("a") }],
          decisions: [],
          artifacts: [],
          side_effects: sideEffects,
          tool_definitions: { update_record: SHA("b") },
        }),
      });
      if (res.status !== 200)
        throw new Error(`checkpoint failed: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    };

    log("hostile: seeding the normal task, the task of large events and the task of pending approvals …");
    const normalTask = `bench-normal-${tag}`;
    const effects: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++)
      effects[`write_${i}`] = {
        idempotency_key: `${normalTask}:k${i}`,
        status: "not_started",
        action: "records.update",
        mutation: true,
      };
    await checkpoint(normalTask, effects);

    const bigTask = `bench-big-${tag}`;
    await checkpoint(bigTask);
    await env.db.sql`
      insert into events (tenant_id, event_id, task_id, plane, type, occurred_at, attempt, attrs, retention_class)
      select ${tenant.tenantId}::uuid, ${bigTask} || ':' || g, ${bigTask}, 'tools', 'tool.completed',
             now() - interval '1 hour' + g * interval '1 millisecond', 1,
             jsonb_build_object('call_id', 'call-' || g, 'tool', 'fetch_report', 'body', repeat(md5(g::text), 1968)),
             'history'
      from generate_series(1, ${bigEvents}::int) g`;

    const approvalsTask = `bench-approvals-${tag}`;
    await checkpoint(approvalsTask);
    for (let i = 0; i < LIMITS.pendingApprovals.max; i++) {
      const res = await hostile.post(`/api/v1/tasks/${enc(approvalsTask)}/side-effects/publish_${i}/intent`, {
        idempotency_key: `${approvalsTask}:k${i}`,
        payload_digest: SHA("e"),
        action: "records.publish",
        mutation: true,
        attempt: 1,
        requires_approval: true,
      });
      if (res.status !== 403) throw new Error(`approval request ${i}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    }

    // Normal traffic: a gate ask, then 10 small events, alternately.
    let seq = 0;
    const normalRequest = async (): Promise<{ ms: number; ok: boolean }> => {
      seq += 1;
      const t = performance.now();
      if (seq % 2 === 0) {
        const res = await normal.post(`/api/v1/tasks/${enc(normalTask)}/resume`, {});
        return { ms: performance.now() - t, ok: res.status === 200 };
      }
      const at = new Date().toISOString();
      const events: EventInput[] = Array.from({ length: 10 }, (_, i) => ({
        id: `${normalTask}:e${seq}-${i}`,
        task_id: normalTask,
        plane: "tools",
        type: "tool.completed",
        occurred_at: at,
        attempt: 1,
        attrs: { call_id: `c${seq}-${i}`, ok: true },
      }));
      const res = await normal.post("/api/v1/events", { events });
      return { ms: performance.now() - t, ok: res.status === 200 };
    };
    for (let i = 0; i < 20; i++) await normalRequest();

    log(`hostile: ${normalCount} normal requests alone …`);
    const alone: number[] = [];
    let failed = 0;
    for (let i = 0; i < normalCount; i++) {
      const r = await normalRequest();
      alone.push(r.ms);
      if (!r.ok) failed += 1;
    }

    type Kind = { name: string; expect: number; send: (round: number) => Promise<number> };
    const kinds: Kind[] = [
      {
        name: `RunState import at the limit (${fmt(LIMITS.runStateCalls.max)} calls)`,
        expect: 200,
        send: async (round) => {
          const taskId = `bench-import-${tag}-${round}`;
          await checkpoint(taskId);
          const half = LIMITS.runStateCalls.max / 2;
          const res = await hostile.post(
            `/api/v1/import/openai-agents/run-state?task_id=${enc(taskId)}`,
            runState(half, half, `r${round}`),
          );
          return res.status;
        },
      },
      {
        name: "RunState of 4,000 calls (refused)",
        expect: 422,
        send: async (round) => {
          const taskId = `bench-import-${tag}-${round}`;
          const res = await hostile.post(
            `/api/v1/import/openai-agents/run-state?task_id=${enc(taskId)}`,
            runState(3000, 1000, `x${round}`),
          );
          return res.status;
        },
      },
      {
        name: `arrival feed of ${fmt(Math.min(bigEvents, 1000))} events of 63 KB (attrs=summary)`,
        expect: 200,
        send: async () =>
          (await hostile.get(`/api/v1/tasks/${enc(bigTask)}/timeline?since=0&limit=1000&attrs=summary`)).status,
      },
      {
        name: "one event of 63 KB (detail, capped)",
        expect: 200,
        send: async () => (await hostile.get(`/api/v1/tasks/${enc(bigTask)}/events/${enc(`${bigTask}:1`)}`)).status,
      },
      {
        name: "event batch of 1 MiB (16 events of 62 KB)",
        expect: 200,
        send: async (round) => {
          const at = new Date().toISOString();
          const events: EventInput[] = Array.from({ length: 16 }, (_, i) => ({
            id: `${bigTask}:mib-${round}-${i}`,
            task_id: bigTask,
            plane: "tools",
            type: "tool.completed",
            occurred_at: at,
            attempt: 1,
            attrs: { call_id: `mib-${round}-${i}`, tool: "fetch_report", body: "x".repeat(62 * 1024) },
          }));
          return (await hostile.post("/api/v1/events", { events })).status;
        },
      },
      {
        name: "intent body nested 524,000 levels deep (1 MiB, refused)",
        expect: 422,
        send: async (round) => {
          const res = await fetch(
            `${env.server.baseUrl}/api/v1/tasks/${enc(normalTask)}/side-effects/deep_${round}/intent`,
            {
              method: "POST",
              headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
              body: "[".repeat(524_000) + "]".repeat(524_000),
            },
          );
          await res.arrayBuffer();
          return res.status;
        },
      },
      {
        name: `gate ask with ${LIMITS.pendingApprovals.max} pending approval requests`,
        expect: 200,
        send: async () => (await hostile.post(`/api/v1/tasks/${enc(approvalsTask)}/resume`, {})).status,
      },
    ];
    const hostileMs = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
    const unexpected: string[] = [];
    let hostileDone = false;
    const hostileLoop = (async () => {
      try {
        for (let round = 0; round < rounds; round++) {
          for (const k of kinds) {
            const t = performance.now();
            const status = await k.send(round);
            hostileMs.get(k.name)!.push(performance.now() - t);
            if (status !== k.expect) unexpected.push(`${k.name}: HTTP ${status}, expected ${k.expect}`);
          }
        }
      } finally {
        hostileDone = true;
      }
    })();

    log(`hostile: normal requests beside ${rounds} rounds of hostile requests …`);
    const beside: number[] = [];
    while (!hostileDone || beside.length < normalCount) {
      const r = await normalRequest();
      beside.push(r.ms);
      if (!r.ok) failed += 1;
    }
    await hostileLoop;

    const p50Alone = quantile(alone, 0.5)!;
    const p95Alone = quantile(alone, 0.95)!;
    const p50Beside = quantile(beside, 0.5)!;
    const p95Beside = quantile(beside, 0.95)!;
    const ratio = p95Beside / p95Alone;
    const perKind = Object.fromEntries(
      kinds.map((k) => {
        const ms = hostileMs.get(k.name)!;
        return [k.name, { count: ms.length, ms_median: quantile(ms, 0.5), ms_max: Math.max(...ms) }];
      }),
    );
    const figures = {
      normal_requests_alone: alone.length,
      normal_requests_beside: beside.length,
      normal_ms_p50_alone: p50Alone,
      normal_ms_p95_alone: p95Alone,
      normal_ms_p50_beside: p50Beside,
      normal_ms_p95_beside: p95Beside,
      normal_ms_max_beside: Math.max(...beside),
      p95_ratio: ratio,
      target_ratio: 2,
      meets_target: ratio <= 2,
      hostile: perKind,
    };
    printTable("hostile — normal traffic (gate asks and 10-event batches, one at a time) beside costly requests", [
      ["normal alone p50 / p95", `${fmt(p50Alone, 1)} / ${fmt(p95Alone, 1)} ms (${fmt(alone.length)} requests)`],
      [
        "normal beside hostile p50 / p95 / max",
        `${fmt(p50Beside, 1)} / ${fmt(p95Beside, 1)} / ${fmt(figures.normal_ms_max_beside, 1)} ms (${fmt(beside.length)} requests)`,
      ],
      ["p95 beside ÷ alone (target ≤ 2)", fmt(ratio, 2)],
      ...kinds.map((k): [string, string] => [
        k.name,
        `median ${fmt(perKind[k.name]!.ms_median, 0)} ms, max ${fmt(perKind[k.name]!.ms_max, 0)} ms (${perKind[k.name]!.count}×)`,
      ]),
    ]);
    return {
      name: "hostile",
      figures,
      checks: [
        { name: "every normal request answered as expected", ok: failed === 0, detail: `${failed} failed` },
        {
          name: "every hostile request answered as expected",
          ok: unexpected.length === 0,
          detail: unexpected.join("; ") || "none",
        },
      ],
    };
  },
};
