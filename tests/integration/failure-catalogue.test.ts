/**
 * The failure catalogue (docs/concepts.md#reference-scenario): the real scenario
 * runtime (`scripts/demo-runtime.ts`, a child process talking to the built server over HTTP) is killed at every
 * state transition of its first attempt (DEMO_CRASH_AT), started again, and must meet the gate verdict the
 * scenario calls for: `stop` with side_effect_unknown where the outcome of the record update is unknown, `resume`
 * otherwise. Where it stops, a responder recovers the documented way (the lookup decides, then reconcile).
 * In every case the run ends `done`, the final report is listed as an artifact, and the records service
 * applied the update exactly once. Also: the normal scripted story (sandbox loss, stop, reconcile, finish),
 * a webhook batch delivered twice, an intent replayed after completion, and fifty concurrent intents.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ArtifactView, GateVerdict, IntentResult, StoredEvent, TimelinePage } from "@/lib/contract/api";
import { caseDocument, reportFirstHalf, reportSecondHalf, sha256Hex } from "@/scripts/demo-runtime/documents";
import { CRASH_EXIT_CODE, EFFECT, idempotencyKeyFor, recordIdFor } from "@/scripts/demo-runtime/scenario";
import type { StoredRecord } from "@/scripts/records-service";
import {
  askGate,
  checkpoint,
  getTask,
  hex,
  intentBody,
  newKey,
  postIntent,
  postLookup,
  postReconcile,
  registerLookup,
} from "./support/custody-calls";
import { startTempRecords } from "./support/local-servers";
import { signInAs } from "./support/people";
import { errorCode } from "./support/responses";
import { effectRow } from "./support/stored-rows";
import { waitFor } from "./support/waiting";
import { RuntimeProcess } from "../support/runtime-process";
import {
  api,
  baseUrl,
  countRows,
  createTestTenant,
  makeEvent,
  newTaskId,
  postEvents,
  type TestTenant,
  testDbForFile,
} from "./helpers";

const handle = testDbForFile();

const RUN_TIMEOUT_MS = 45_000;

/** Children and servers of the running test; always stopped in afterEach. */
const running: RuntimeProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (running.length) await running.pop()!.kill();
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

/** Starts the runtime and registers it for afterEach. */
function startRuntime(env: Record<string, string>): RuntimeProcess {
  const p = RuntimeProcess.start(env);
  running.push(p);
  return p;
}

type Scenario = {
  t: TestTenant;
  taskId: string;
  records: Awaited<ReturnType<typeof startTempRecords>>;
  env: Record<string, string>;
  responder: { cookie: string };
};

/** A tenant, a records service with its lookup registered for the `update_record` tool, and the runtime's env. */
async function scenario(): Promise<Scenario> {
  const t = await createTestTenant(handle.db, { roles: ["owner", "responder"] });
  const records = await startTempRecords();
  cleanups.push(records.stop);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "custody-demo-work-"));
  cleanups.push(async () => fs.rmSync(workDir, { recursive: true, force: true }));
  const owner = await signInAs(t, "owner");
  const reg = await registerLookup(owner, "update_record", `${records.url}/lookup`, 2000);
  expect(reg.status, reg.text).toBe(200);
  const taskId = newTaskId("case");
  return {
    t,
    taskId,
    records,
    responder: await signInAs(t, "responder"),
    env: {
      CUSTODY_URL: baseUrl(),
      CUSTODY_API_KEY: t.apiKey,
      DEMO_WORK_DIR: workDir,
      RECORDS_URL: records.url,
      DEMO_TASK_ID: taskId,
      DEMO_POLL_MS: "200",
    },
  };
}

/** How many times the records service really changed the scenario's record (0 when never written). */
async function updateCount(s: Scenario): Promise<number> {
  const res = await fetch(`${s.records.url}/records/${recordIdFor(s.taskId)}`);
  if (res.status === 404) return 0;
  return ((await res.json()) as StoredRecord).update_count;
}

async function timeline(s: Scenario): Promise<StoredEvent[]> {
  const res = await api(s.t.apiKey).get<TimelinePage>(`/api/v1/tasks/${s.taskId}/timeline?limit=1000`);
  if (res.status === 404) return []; // the runtime has not reported anything yet
  expect(res.status).toBe(200);
  return res.body.events;
}

/** The first resume-gate verdict the runtime recorded for `attempt` (its `x.resume_gate.verdict` event). */
async function runtimeVerdict(
  s: Scenario,
  attempt: number,
  proc: RuntimeProcess,
): Promise<{ verdict: string; reasons: Array<{ code: string }> }> {
  return waitFor(`the runtime's gate verdict of attempt ${attempt}\n${proc.tail()}`, async () => {
    const e = (await timeline(s)).find((x) => x.type === "x.resume_gate.verdict" && x.attempt === attempt);
    return e ? (e.attrs as { verdict: string; reasons: Array<{ code: string }> }) : undefined;
  });
}

/** sha256 of the finished report.md the scenario always ends with. */
function finalReportSha(taskId: string): string {
  const doc = sha256Hex(caseDocument(taskId));
  return sha256Hex(reportFirstHalf(taskId, doc) + reportSecondHalf(recordIdFor(taskId)));
}

/** The end state every path must reach: done, the final report listed, one update, gate resume. */
async function expectFinished(s: Scenario): Promise<void> {
  const view = await getTask(s.t.apiKey, s.taskId);
  expect(view.status).toBe(200);
  expect(view.body.phase).toBe("done");
  expect(view.body.signature_valid).toBe(true);
  expect(view.body.side_effects[EFFECT]?.status).toBe("completed");
  const sha = finalReportSha(s.taskId);
  expect(view.body.record?.artifacts).toEqual([
    expect.objectContaining({ ref: `demo-store://${s.taskId}/report.md`, sha256: sha }),
  ]);
  const artifacts = await api(s.t.apiKey).get<{ artifacts: ArtifactView[] }>(`/api/v1/tasks/${s.taskId}/artifacts`);
  expect(artifacts.body.artifacts.map((a) => a.sha256)).toContain(sha);
  expect(await updateCount(s)).toBe(1);
  const gate = await askGate(s.t.apiKey, s.taskId);
  expect(gate.body.verdict).toBe("resume");
}

/** The responder asks the lookup, checks it says `expect`, and reconciles accordingly (with the lookup as evidence). */
async function recoverAsResponder(s: Scenario, expectLookup: "found" | "not_found"): Promise<void> {
  const lookup = await postLookup(s.responder, s.taskId, EFFECT);
  expect(lookup.status, lookup.text).toBe(200);
  expect(lookup.body).toMatchObject({ configured: true, outcome: expectLookup });
  const body =
    expectLookup === "found"
      ? {
          outcome: "completed",
          external_operation_id: lookup.body.external_operation_id,
          evidence: `Records lookup found operation ${lookup.body.external_operation_id} under the key.`,
          use_lookup: true,
        }
      : { outcome: "not_applied", evidence: "Records lookup has no write under the key.", use_lookup: true };
  const res = await postReconcile(s.responder, s.taskId, EFFECT, body);
  expect(res.status, res.text).toBe(200);
  expect(res.body.status).toBe(expectLookup === "found" ? "completed" : "not_started");
}

type CrashCase = {
  point: "after_intent" | "after_external_write" | "after_receipt" | "during_report" | "after_checkpoint";
  /** Effect status right after the crash, and updates made by then. */
  afterCrash: { status: string; updates: number };
  /** What the restarted runtime's gate says, and the lookup's answer the responder acts on when it stops. */
  gate: "stop" | "resume";
  lookup?: "found" | "not_found";
};

const CRASHES: CrashCase[] = [
  { point: "after_intent", afterCrash: { status: "in_flight", updates: 0 }, gate: "stop", lookup: "not_found" },
  { point: "after_external_write", afterCrash: { status: "in_flight", updates: 1 }, gate: "stop", lookup: "found" },
  { point: "after_receipt", afterCrash: { status: "completed", updates: 1 }, gate: "resume" },
  { point: "during_report", afterCrash: { status: "completed", updates: 1 }, gate: "resume" },
  { point: "after_checkpoint", afterCrash: { status: "completed", updates: 1 }, gate: "resume" },
];

describe("failure catalogue: kill the runtime at every state transition", () => {
  for (const c of CRASHES) {
    it(`${c.point}: gate ${c.gate}${c.lookup ? ` → reconcile (${c.lookup === "found" ? "completed" : "not applied"})` : ""} → done, one update`, async () => {
      const s = await scenario();
      const first = startRuntime({ ...s.env, DEMO_CRASH_AT: c.point });
      expect(await first.waitForExit(RUN_TIMEOUT_MS), first.tail()).toBe(CRASH_EXIT_CODE);
      expect(
        first.lines.some((l) => l.includes(`CRASH at ${c.point}`)),
        first.tail(),
      ).toBe(true);

      // what the server knows right after the crash
      expect((await effectRow(handle.db, s.t.tenantId, s.taskId, EFFECT))?.status).toBe(c.afterCrash.status);
      expect(await updateCount(s)).toBe(c.afterCrash.updates);

      const second = startRuntime(s.env);
      const verdict = await runtimeVerdict(s, 2, second);
      expect(verdict.verdict, second.tail()).toBe(c.gate);
      if (c.gate === "stop") {
        expect(verdict.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
        const ours = await askGate(s.t.apiKey, s.taskId);
        expect(ours.body.verdict).toBe("stop");
        expect(ours.body.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
        // the runtime keeps waiting: nothing is written while the gate says stop
        await new Promise((r) => setTimeout(r, 600));
        expect(
          second.lines.some((l) => /waiting for a person/.test(l)),
          second.tail(),
        ).toBe(true);
        expect(await updateCount(s)).toBe(c.afterCrash.updates);
        await recoverAsResponder(s, c.lookup!);
      } else {
        expect(verdict.reasons).toEqual([]);
      }

      expect(await second.waitForExit(RUN_TIMEOUT_MS), second.tail()).toBe(0);
      await expectFinished(s);
      if (c.point === "after_intent") {
        // the retry after "not applied" used the same key and wrote once
        expect((await effectRow(handle.db, s.t.tenantId, s.taskId, EFFECT))?.idempotency_key).toBe(
          idempotencyKeyFor(s.taskId),
        );
        expect(
          second.lines.some((l) => /intent update_record → go/.test(l)),
          second.tail(),
        ).toBe(true);
      } else {
        expect(
          second.lines.some((l) => /intent update_record → replay/.test(l)),
          second.tail(),
        ).toBe(true);
      }
    }, 120_000);
  }
});

describe("failure catalogue: the scripted story and duplicates", () => {
  it("sandbox loss: attempt 2 stops on side_effect_unknown, a responder reconciles via the lookup, the run finishes; a later intent replays", async () => {
    const s = await scenario();
    const proc = startRuntime(s.env);
    const verdict = await runtimeVerdict(s, 2, proc);
    expect(verdict.verdict, proc.tail()).toBe("stop");
    expect(verdict.reasons.map((r) => r.code)).toEqual(["side_effect_unknown"]);
    expect(await updateCount(s)).toBe(1);
    const before = await getTask(s.t.apiKey, s.taskId);
    expect(before.body.side_effects[EFFECT]?.status).toBe("unknown");
    expect(before.body.phase).toBe("report_drafted");

    await recoverAsResponder(s, "found");
    expect(await proc.waitForExit(RUN_TIMEOUT_MS), proc.tail()).toBe(0);
    await expectFinished(s);
    const effect = (await getTask(s.t.apiKey, s.taskId)).body.side_effects[EFFECT]!;
    expect(effect.last_reconcile).toMatchObject({ outcome: "completed", by: s.t.users.responder!.email });

    // an intent replayed after completion returns the stored receipt and writes nothing
    const replay = await postIntent(s.t.apiKey, s.taskId, EFFECT, {
      idempotency_key: effect.idempotency_key,
      payload_digest: effect.payload_digest,
      action: effect.action,
      mutation: true,
      attempt: (await getTask(s.t.apiKey, s.taskId)).body.current_attempt,
    });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((replay.body as Extract<IntentResult, { decision: "replay" }>).receipt).toEqual(effect.receipt);
    expect(await updateCount(s)).toBe(1);

    // starting the runtime again on a finished task changes nothing
    const finished = (await getTask(s.t.apiKey, s.taskId)).body.version;
    expect(finished).toBeGreaterThan(before.body.version);
    const again = startRuntime(s.env);
    expect(await again.waitForExit(RUN_TIMEOUT_MS), again.tail()).toBe(0);
    expect(await updateCount(s)).toBe(1);
    expect((await getTask(s.t.apiKey, s.taskId)).body.version).toBe(finished);
  }, 120_000);

  it("stores a webhook batch delivered twice once, and the replay never regresses a status", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("dup");
    const key = newKey();
    const at = (s: number) => new Date(Date.UTC(2025, 6, 1, 9, 0, s)).toISOString();
    const batch = [
      makeEvent(taskId, { plane: "environment", type: "sandbox.created", attempt: 1, occurred_at: at(0), attrs: {} }),
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.intent",
        attempt: 1,
        occurred_at: at(1),
        attrs: { name: EFFECT, idempotency_key: key, payload_digest: hex("e"), action: "records.update" },
      }),
      makeEvent(taskId, {
        plane: "tools",
        type: "side_effect.receipt",
        occurred_at: at(2),
        attrs: { name: EFFECT, idempotency_key: key, external_operation_id: "op-dup", result_digest: hex("f") },
      }),
    ];
    const first = await postEvents(t.apiKey, batch);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r) => r.status)).toEqual(["stored", "stored", "stored"]);
    expect((await effectRow(handle.db, t.tenantId, taskId, EFFECT))?.status).toBe("completed");
    const count = await countRows(handle.db, "events", t.tenantId, taskId);

    const second = await postEvents(t.apiKey, batch);
    expect(second.status).toBe(200);
    expect(second.body.results).toEqual(batch.map((e) => ({ id: e.id, status: "duplicate" })));
    expect(await countRows(handle.db, "events", t.tenantId, taskId)).toBe(count);

    // the sandbox is lost after the receipt; a third delivery of the old batch (with its intent) must not undo it
    const lost = makeEvent(taskId, {
      plane: "session",
      type: "run.interrupted",
      occurred_at: at(3),
      attrs: { reason: "sandbox_lost" },
    });
    expect((await postEvents(t.apiKey, [lost])).body.results[0]?.status).toBe("stored");
    const third = await postEvents(t.apiKey, [...batch, lost]);
    expect(third.body.results.every((r) => r.status === "duplicate")).toBe(true);
    expect(await countRows(handle.db, "events", t.tenantId, taskId)).toBe(count + 1);
    const row = await effectRow(handle.db, t.tenantId, taskId, EFFECT);
    expect(row?.status).toBe("completed");
    expect(row?.receipt?.external_operation_id).toBe("op-dup");
  });

  it("gives exactly one go to 50 concurrent intents for the scenario's effect", async () => {
    const t = await createTestTenant(handle.db, { roles: [] });
    const taskId = newTaskId("case");
    const key = idempotencyKeyFor(taskId);
    await checkpoint(t, taskId, {
      side_effects: { [EFFECT]: { idempotency_key: key, status: "not_started", tool: "update_record" } },
    });
    const body = intentBody(key, { tool: "update_record" });
    const answers = await Promise.all(Array.from({ length: 50 }, () => postIntent(t.apiKey, taskId, EFFECT, body)));
    expect(answers.filter((r) => r.status === 200 && r.body.decision === "go")).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409 && errorCode(r) === "in_flight")).toHaveLength(49);
    // the winner's attempt may go on; a newer attempt asking is held back by its live lease
    expect(((await askGate(t.apiKey, taskId, { attempt: 1 })).body as GateVerdict).verdict).toBe("resume");
    const gate = await askGate(t.apiKey, taskId, { attempt: 2 });
    expect((gate.body as GateVerdict).verdict).toBe("replay");
  });
});
