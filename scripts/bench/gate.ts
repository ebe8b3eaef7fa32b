/**
 * The `gate` benchmark: resume-gate latency on a task with many side effects (default 1,000).
 *
 * 1. seeds a fresh tenant and one task: a signed checkpoint declaring the first 500 effects (the most a record may
 *    declare), then events that make most
 *    of them `completed` (intent + receipt), a few `unknown` (intent, then `run.interrupted`), plus sandbox,
 *    snapshot and credential events the gate reads;
 * 2. asks `POST /api/v1/tasks/{id}/resume` `--asks` times (default 300) one at a time, after a short warm-up;
 * 3. prints p50 / p95 / max latency and checks every answer is `stop` with exactly the unknown effects as
 *    `side_effect_unknown` reasons.
 */
import { randomBytes } from "node:crypto";
import type { EventInput, GateVerdict } from "@/lib/contract/api";
import { MAX_RECORD_SIDE_EFFECTS } from "@/lib/domain/tasks/record";
import { measureBaseline, ratio, ratioCell } from "./baseline";
import { createApiClient, log, seedBenchTenant, type BenchEnv, type BenchOutcome, type Benchmark } from "./harness";
import { fmt, printTable, quantile } from "./report";

const SHA = (c: string) => c.repeat(64);

export const gateBenchmark: Benchmark = {
  name: "gate",
  summary: "resume-gate latency p50/p95 on a task with 1,000 side effects",
  async run(env: BenchEnv): Promise<BenchOutcome> {
    const num = (key: string, dflt: number) => {
      const v = env.options[key];
      return typeof v === "string" && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : dflt;
    };
    const effectCount = num("gate-effects", 1000);
    const asks = num("asks", 300);
    const fillerEvents = num("gate-events", 100_000);
    const unknownCount = Math.max(1, Math.round(effectCount / 100));
    const tenant = await seedBenchTenant(env.db.db, "gate");
    const client = createApiClient(env.server.baseUrl, tenant.apiKey, 4);
    const taskId = `bench-gate-${randomBytes(4).toString("hex")}`;
    const enc = encodeURIComponent(taskId);

    log(`gate: seeding ${taskId} with ${effectCount} side effects (${unknownCount} unknown) …`);
    // A checkpoint declares at most MAX_RECORD_SIDE_EFFECTS effects (finished ones stay out of the record); the rest
    // exist on the server from their intent events, as in a long run.
    const sideEffects: Record<
      string,
      { idempotency_key: string; status: "not_started"; action: string; mutation: boolean }
    > = {};
    for (let i = 0; i < Math.min(effectCount, MAX_RECORD_SIDE_EFFECTS); i++) {
      sideEffects[`write_${i}`] = {
        idempotency_key: `${taskId}:k${i}`,
        status: "not_started",
        action: "records.update",
        mutation: true,
      };
    }
    const record = {
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
    };
    const put = await client.put(`/api/v1/tasks/${enc}`, record);
    if (put.status !== 200) throw new Error(`checkpoint failed: HTTP ${put.status} ${put.text.slice(0, 200)}`);

    // The run's history sits in the past (an hour per 100,000 events at most), so no fact is ahead of the server clock.
    const t0 = Date.now() - 3_600_000 - fillerEvents;
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const events: EventInput[] = [
      {
        id: `${taskId}:sbx1`,
        task_id: taskId,
        plane: "environment",
        type: "sandbox.created",
        occurred_at: at(1),
        attempt: 1,
        environment_id: "sbx-1",
      },
      {
        id: `${taskId}:snap`,
        task_id: taskId,
        plane: "environment",
        type: "snapshot.saved",
        occurred_at: at(2),
        attempt: 1,
        attrs: { digest: SHA("c"), snapshot_id: "snap-1" },
      },
      {
        id: `${taskId}:cred`,
        task_id: taskId,
        plane: "vault",
        type: "credential.issued",
        occurred_at: at(3),
        attempt: 1,
        attrs: {
          credential_ref: "records-api",
          credential_id: "c1",
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        },
      },
    ];
    // The work of a long run: tool calls and their outcomes, which the gate must not read one by one.
    for (let i = 0; i + 1 < fillerEvents; i += 2) {
      const call = { tool: "read_page", call_id: `call_${i}` };
      events.push(
        {
          id: `${taskId}:c${i}`,
          task_id: taskId,
          plane: "tools",
          type: "tool.called",
          occurred_at: at(4 + i / 2),
          attempt: 1,
          environment_id: "sbx-1",
          attrs: call,
        },
        {
          id: `${taskId}:d${i}`,
          task_id: taskId,
          plane: "tools",
          type: "tool.completed",
          occurred_at: at(4 + i / 2),
          attempt: 1,
          environment_id: "sbx-1",
          attrs: { ...call, duration_ms: 5 },
        },
      );
    }
    const base = 10 + fillerEvents;
    for (let i = 0; i < effectCount; i++) {
      const attrs = { name: `write_${i}`, idempotency_key: `${taskId}:k${i}` };
      events.push({
        id: `${taskId}:i${i}`,
        task_id: taskId,
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: at(base + i),
        attempt: 1,
        attrs,
      });
      if (i >= unknownCount) {
        events.push({
          id: `${taskId}:r${i}`,
          task_id: taskId,
          plane: "tools",
          type: "side_effect.receipt",
          occurred_at: at(base + i),
          attempt: 1,
          attrs: { ...attrs, external_operation_id: `op-${i}` },
        });
      }
    }
    events.push({
      id: `${taskId}:int`,
      task_id: taskId,
      plane: "session",
      type: "run.interrupted",
      occurred_at: at(base + 20 + effectCount),
      attempt: 1,
    });
    events.push({
      id: `${taskId}:sbx2`,
      task_id: taskId,
      plane: "environment",
      type: "sandbox.created",
      occurred_at: at(base + 30 + effectCount),
      attempt: 2,
      environment_id: "sbx-2",
    });
    events.push({
      id: `${taskId}:rest`,
      task_id: taskId,
      plane: "environment",
      type: "snapshot.restored",
      occurred_at: at(base + 31 + effectCount),
      attempt: 2,
      attrs: { digest: SHA("c"), snapshot_id: "snap-1" },
    });
    for (let i = 0; i < events.length; i += 1000) {
      const res = await client.post("/api/v1/events", { events: events.slice(i, i + 1000) });
      if (res.status !== 200) throw new Error(`events failed: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    }

    // An empty task beside it: one checkpoint, nothing else. The gate on the long task must cost about the same.
    const emptyId = `${taskId}-empty`;
    const emptyPut = await client.put(`/api/v1/tasks/${encodeURIComponent(emptyId)}`, {
      ...record,
      task_id: emptyId,
      side_effects: {},
      tool_definitions: {},
    });
    if (emptyPut.status !== 200)
      throw new Error(`empty task checkpoint failed: HTTP ${emptyPut.status} ${emptyPut.text.slice(0, 200)}`);

    const ask = async (id: string) => {
      const t = performance.now();
      const res = await client.post(`/api/v1/tasks/${encodeURIComponent(id)}/resume`, {});
      return { ms: performance.now() - t, status: res.status, verdict: JSON.parse(res.text) as GateVerdict };
    };
    for (let i = 0; i < 10; i++) {
      await ask(taskId);
      await ask(emptyId);
    }
    log(`gate: asking ${asks} times on each task, interleaved …`);
    const answers = [];
    const emptyAnswers = [];
    for (let i = 0; i < asks; i++) {
      answers.push(await ask(taskId));
      emptyAnswers.push(await ask(emptyId));
    }
    const ms = answers.map((a) => a.ms);
    const emptyP95 = quantile(
      emptyAnswers.map((a) => a.ms),
      0.95,
    );
    const baseline = await measureBaseline(env);
    const wrong = answers.filter(
      (a) =>
        a.status !== 200 ||
        a.verdict.verdict !== "stop" ||
        a.verdict.reasons.length !== unknownCount ||
        a.verdict.reasons.some((r) => r.code !== "side_effect_unknown"),
    );
    const figures = {
      side_effects: effectCount,
      unknown: unknownCount,
      events: events.length,
      asks,
      latency_ms_p50: quantile(ms, 0.5),
      latency_ms_p95: quantile(ms, 0.95),
      latency_ms_max: Math.max(...ms),
      empty_task_latency_ms_p95: emptyP95,
      baseline_read_latency_ms_p95: baseline.reads.latency_ms_p95,
      p95_ratio_to_baseline: ratio(quantile(ms, 0.95), baseline.reads.latency_ms_p95),
      p95_ratio_to_empty_task: ratio(quantile(ms, 0.95), emptyP95),
      targets: { p95_ratio_to_baseline: 2, p95_ratio_to_empty_task: 1.2 },
    };
    const meets =
      (figures.p95_ratio_to_baseline ?? Infinity) <= 2 && (figures.p95_ratio_to_empty_task ?? Infinity) <= 1.2;
    printTable("gate — POST /api/v1/tasks/{id}/resume on one task", [
      ["side effects on the task", `${fmt(effectCount)} (${unknownCount} unknown), ${fmt(events.length)} events`],
      ["asks (sequential)", fmt(asks)],
      [
        "latency p50 / p95 / max",
        `${fmt(figures.latency_ms_p50, 1)} / ${fmt(figures.latency_ms_p95, 1)} / ${fmt(figures.latency_ms_max, 1)} ms`,
      ],
      ["empty task p95", `${fmt(emptyP95, 1)} ms`],
      ["p95 ÷ empty task p95", ratioCell(figures.p95_ratio_to_empty_task, 1.2, false)],
      ["baseline read by key p95", `${fmt(baseline.reads.latency_ms_p95, 2)} ms`],
      ["p95 ÷ baseline read p95", ratioCell(figures.p95_ratio_to_baseline, 2, false)],
    ]);
    return {
      name: "gate",
      figures: { ...figures, meets_target: meets },
      checks: [
        {
          name: "every answer is stop with exactly the unknown effects",
          ok: wrong.length === 0,
          detail: `${wrong.length} unexpected answers`,
        },
        {
          name: "the empty task resumes",
          ok: emptyAnswers.every((a) => a.status === 200 && a.verdict.verdict === "resume"),
          detail: `${emptyAnswers.filter((a) => a.verdict.verdict !== "resume").length} other answers (first: ${JSON.stringify(emptyAnswers.find((a) => a.verdict.verdict !== "resume")?.verdict ?? null).slice(0, 200)})`,
        },
      ],
    };
  },
};
