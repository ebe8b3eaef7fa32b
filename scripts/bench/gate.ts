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
    const put = await fetch(`${env.server.baseUrl}/api/v1/tasks/${enc}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(record),
    });
    if (put.status !== 200)
      throw new Error(`checkpoint failed: HTTP ${put.status} ${(await put.text()).slice(0, 200)}`);

    const t0 = Date.now();
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
          expires_at: new Date(t0 + 3_600_000).toISOString(),
        },
      },
    ];
    for (let i = 0; i < effectCount; i++) {
      const attrs = { name: `write_${i}`, idempotency_key: `${taskId}:k${i}` };
      events.push({
        id: `${taskId}:i${i}`,
        task_id: taskId,
        plane: "tools",
        type: "side_effect.intent",
        occurred_at: at(10 + i),
        attempt: 1,
        attrs,
      });
      if (i >= unknownCount) {
        events.push({
          id: `${taskId}:r${i}`,
          task_id: taskId,
          plane: "tools",
          type: "side_effect.receipt",
          occurred_at: at(10 + i),
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
      occurred_at: at(20 + effectCount),
      attempt: 1,
    });
    events.push({
      id: `${taskId}:sbx2`,
      task_id: taskId,
      plane: "environment",
      type: "sandbox.created",
      occurred_at: at(30 + effectCount),
      attempt: 2,
      environment_id: "sbx-2",
    });
    events.push({
      id: `${taskId}:rest`,
      task_id: taskId,
      plane: "environment",
      type: "snapshot.restored",
      occurred_at: at(31 + effectCount),
      attempt: 2,
      attrs: { digest: SHA("c"), snapshot_id: "snap-1" },
    });
    for (let i = 0; i < events.length; i += 1000) {
      const res = await client.post("/api/v1/events", { events: events.slice(i, i + 1000) });
      if (res.status !== 200) throw new Error(`events failed: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    }

    const ask = async () => {
      const t = performance.now();
      const res = await client.post(`/api/v1/tasks/${enc}/resume`, {});
      return { ms: performance.now() - t, status: res.status, verdict: JSON.parse(res.text) as GateVerdict };
    };
    for (let i = 0; i < 10; i++) await ask();
    log(`gate: asking ${asks} times …`);
    const answers = [];
    for (let i = 0; i < asks; i++) answers.push(await ask());
    const ms = answers.map((a) => a.ms);
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
    };
    printTable("gate — POST /api/v1/tasks/{id}/resume on one task", [
      ["side effects on the task", `${fmt(effectCount)} (${unknownCount} unknown), ${fmt(events.length)} events`],
      ["asks (sequential)", fmt(asks)],
      [
        "latency p50 / p95 / max",
        `${fmt(figures.latency_ms_p50, 1)} / ${fmt(figures.latency_ms_p95, 1)} / ${fmt(figures.latency_ms_max, 1)} ms`,
      ],
    ]);
    return {
      name: "gate",
      figures,
      checks: [
        {
          name: "every answer is stop with exactly the unknown effects",
          ok: wrong.length === 0,
          detail: `${wrong.length} unexpected answers`,
        },
      ],
    };
  },
};
