/**
 * Crash safety on PostgreSQL (docs/decisions/0011-crash-safety.md): a server killed with SIGKILL in the middle of event
 * batches, intents, receipts and reconciles loses nothing it acknowledged and leaves nothing half-applied.
 *
 * The test starts its own `npm start` of the build (tests/support/next-server.ts) on the suite's database, prepares a
 * round of work, sends it with every kind of write in flight at once, and kills the server's process group with
 * SIGKILL at a different point each round (a fixed delay after the first request, or after n acknowledgements). It
 * then starts the server again on the same database and secrets and checks:
 * - every write answered 2xx is stored, exactly once (events by id; one `go`, one receipt, one reconcile per effect);
 * - nothing is half-applied: an event batch is stored whole or not at all; no effect is `in_flight` without a lease;
 *   every intent `go`, receipt and reconcile has its audit entry and every audit entry its change (a reconcile also its
 *   timeline event); an interruption event is stored exactly when the effects it ends are `unknown`; the audit chain
 *   verifies;
 * - resending everything gets the idempotent answer: stored events are `duplicate`, an acknowledged intent finds its
 *   own lease (`409 in_flight`, never a second `go`), a receipt is `replayed`, a reconcile is `409 conflict` (already
 *   settled), and the state after the resend is the one a crash-free run ends in.
 * Bounded: three rounds, each about 10–20 s on a loaded two-core machine (most of it the restart).
 */
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { queryRows } from "@/db";
import { verifyAuditChain } from "@/lib/domain/audit/read";
import { sha256Hex } from "@/lib/domain/crypto/canonical";
import type { EventInput, TaskRecord } from "@/lib/contract/api";
import { freePort, serverEnv, testServerSecrets } from "../support/env";
import { NextServer } from "../support/next-server";
import {
  createTestTenant,
  makeEvent,
  makeRecord,
  newTaskId,
  rid,
  signIn,
  testDbForFile,
  type FullTestTenant,
} from "./helpers";
import { intentBody, receiptBody } from "./support/custody-calls";

const handle = testDbForFile();
const EFFECTS_PER_KIND = 8;
const EVENT_BATCHES = 6;
const EVENTS_PER_BATCH = 250;
/** Requests of one kind in flight at once. */
const LANES = 3;

type Kind = "events" | "intent" | "receipt" | "reconcile";
const KINDS: Kind[] = ["events", "intent", "receipt", "reconcile"];

type Answer = { status: number; body: unknown; text: string };
type Req = {
  kind: Kind;
  /** The effect name (intent, receipt, reconcile) or the batch index (events). */
  label: string;
  send: () => Promise<Answer>;
  /** The answer before the kill (undefined: never answered — not sent, or cut off by the kill). */
  before?: Answer;
  /** The network error the kill caused, if it was in flight. */
  cutOff?: string;
  /** The answer to the resend after the restart. */
  after?: Answer;
};

type Round = {
  effectTask: Record<Exclude<Kind, "events">, string>;
  /** Tasks whose effects are in flight and whose `run.interrupted` rides in an event batch: task → batch index. */
  interruptTasks: Map<string, number>;
  batches: EventInput[][];
  requests: Req[];
};

let server: NextServer;
let tenant: FullTestTenant;
let responder: { cookie: string };

beforeAll(async () => {
  const port = await freePort();
  const root = process.cwd();
  server = new NextServer({
    root,
    port,
    env: serverEnv({ port, databaseUrl: inject("databaseUrl"), ...testServerSecrets() }),
    logFile: path.join(root, "test-results", "crash-server.log"),
  });
  await server.start();
  tenant = await createTestTenant(handle.db);
  responder = { cookie: await signIn(tenant.users.responder.email, tenant.password, { base: server.baseUrl }) };
});

afterAll(async () => {
  await server?.stop();
});

/** One request against the crash server; a network error (the kill) rejects. */
async function call(
  auth: string | { cookie: string },
  method: string,
  urlPath: string,
  json: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (typeof auth === "string") headers.authorization = `Bearer ${auth}`;
  else headers.cookie = auth.cookie;
  const res = await fetch(`${server.baseUrl}${urlPath}`, {
    method,
    headers,
    body: JSON.stringify(json),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, text };
}

const effectPath = (taskId: string, name: string, verb: string) =>
  `/api/v1/tasks/${taskId}/side-effects/${name}/${verb}`;
const effectNames = (prefix: string) => Array.from({ length: EFFECTS_PER_KIND }, (_, i) => `${prefix}_${i}`);
const keyOf = (taskId: string, name: string) => `idem:${taskId}:${name}`;

/** Runs `jobs` with at most `width` at once; each job's failure is its own. */
async function pool<T>(items: T[], width: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await job(items[next++]!);
    }),
  );
}

async function must(res: Promise<Answer>, what: string): Promise<Answer> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what} answered ${r.status}: ${r.text}`);
  return r;
}

/** A checkpoint declaring `names` as effects not started, each with its own key. */
function declare(taskId: string, names: string[]): Promise<Answer> {
  const side_effects: TaskRecord["side_effects"] = Object.fromEntries(
    names.map((n) => [n, { idempotency_key: keyOf(taskId, n), status: "not_started" as const, tool: n }]),
  );
  return call(tenant.apiKey, "PUT", `/api/v1/tasks/${taskId}`, makeRecord(taskId, { side_effects }));
}

function intent(taskId: string, name: string): Promise<Answer> {
  return call(
    tenant.apiKey,
    "POST",
    effectPath(taskId, name, "intent"),
    // Each effect a write of its own payload (one payload under two names is a duplicate, decision 0029).
    intentBody(keyOf(taskId, name), { tool: name, payload_digest: sha256Hex(`${taskId}/${name}`) }),
  );
}

const interruption = (taskId: string) =>
  makeEvent(taskId, {
    type: "run.interrupted",
    occurred_at: new Date(Date.now() + 1000).toISOString(),
    attrs: { reason: "sandbox_lost" },
  });

/**
 * Prepares a round: a task whose effects wait for their intents; one whose effects are in flight (for receipts); one
 * whose effects are unknown (for reconciles); two tasks with effects in flight whose interruption rides in a batch;
 * and the event batches. All through the crash server's API.
 */
async function prepareRound(): Promise<Round> {
  const round: Round = {
    effectTask: { intent: newTaskId("crash-int"), receipt: newTaskId("crash-rcp"), reconcile: newTaskId("crash-rec") },
    interruptTasks: new Map([
      [newTaskId("crash-irq"), 1],
      [newTaskId("crash-irq"), EVENT_BATCHES - 3],
    ]),
    batches: [],
    requests: [],
  };
  const { intent: intentTask, receipt: receiptTask, reconcile: reconcileTask } = round.effectTask;
  await must(declare(intentTask, effectNames("write")), "checkpoint");
  await must(declare(receiptTask, effectNames("write")), "checkpoint");
  await must(declare(reconcileTask, effectNames("write")), "checkpoint");
  for (const t of round.interruptTasks.keys()) await must(declare(t, ["write_a", "write_b"]), "checkpoint");
  const gos = [
    ...effectNames("write").flatMap((n) => [
      { t: receiptTask, n },
      { t: reconcileTask, n },
    ]),
    ...[...round.interruptTasks.keys()].flatMap((t) => [
      { t, n: "write_a" },
      { t, n: "write_b" },
    ]),
  ];
  await pool(gos, 4, async ({ t, n }) => void (await must(intent(t, n), `intent ${t}/${n}`)));
  await must(call(tenant.apiKey, "POST", "/api/v1/events", { events: [interruption(reconcileTask)] }), "interruption");

  const tag = rid(4);
  for (let b = 0; b < EVENT_BATCHES; b++) {
    const tasks = [0, 1, 2].map((k) => `crash-ev-${tag}-${b}-${k}`);
    const batch = Array.from({ length: EVENTS_PER_BATCH }, (_, i) =>
      makeEvent(tasks[i % 3]!, { id: `crash:${tag}:${b}:${i}`, attrs: { step: i, note: "x".repeat(40 + (i % 50)) } }),
    );
    for (const [t, at] of round.interruptTasks) if (at === b) batch.splice(EVENTS_PER_BATCH / 2, 0, interruption(t));
    round.batches.push(batch);
  }

  for (const [b, events] of round.batches.entries()) {
    round.requests.push({
      kind: "events",
      label: String(b),
      send: () => call(tenant.apiKey, "POST", "/api/v1/events", { events }),
    });
  }
  for (const name of effectNames("write")) {
    round.requests.push({ kind: "intent", label: name, send: () => intent(intentTask, name) });
    round.requests.push({
      kind: "receipt",
      label: name,
      send: () =>
        call(
          tenant.apiKey,
          "POST",
          effectPath(receiptTask, name, "receipt"),
          receiptBody(keyOf(receiptTask, name), { external_operation_id: `op-${name}` }),
        ),
    });
    round.requests.push({
      kind: "reconcile",
      label: name,
      send: () =>
        call(responder, "POST", effectPath(reconcileTask, name, "reconcile"), {
          outcome: "completed",
          external_operation_id: `op-found-${name}`,
          evidence: `The records service's log shows operation op-found-${name}.`,
        }),
    });
  }
  return round;
}

type KillAt = { afterMs: number } | { afterAcks: number };

/**
 * Sends every request of the round, LANES per kind at once, and kills the server with SIGKILL at `killAt`.
 * @returns how many requests of each kind were in flight (sent, not answered) when the kill was sent.
 */
async function sendAndKill(round: Round, killAt: KillAt): Promise<Record<Kind, number>> {
  let killed = false;
  let acks = 0;
  const inFlight: Record<Kind, number> = { events: 0, intent: 0, receipt: 0, reconcile: 0 };
  let onAck = () => {};
  const lanes = KINDS.map((kind) =>
    pool(
      round.requests.filter((r) => r.kind === kind),
      LANES,
      async (req) => {
        if (killed) return;
        inFlight[kind]++;
        try {
          req.before = await req.send();
          if (req.before.status < 300) {
            acks++;
            onAck();
          }
        } catch (err) {
          req.cutOff =
            err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? "")}` : String(err);
        } finally {
          inFlight[kind]--;
        }
      },
    ),
  );
  const trigger =
    "afterMs" in killAt
      ? new Promise<void>((r) => setTimeout(r, killAt.afterMs))
      : new Promise<void>((r) => {
          onAck = () => acks >= killAt.afterAcks && r();
        });
  const all = Promise.all(lanes);
  await Promise.race([trigger, all]);
  const atKill = { ...inFlight };
  killed = true;
  await server.kill("SIGKILL");
  await all;
  return atKill;
}

type EffectState = {
  task_id: string;
  name: string;
  status: string;
  intent_at: string | null;
  lease_expires_at: string | null;
  receipt: { external_operation_id: string } | null;
  last_reconcile: { by: string } | null;
  go_audits: number;
  receipt_audits: number;
  reconcile_audits: number;
  reconcile_events: number;
};

async function effectStates(taskIds: string[]): Promise<Map<string, EffectState>> {
  const rows = await queryRows<EffectState & Record<string, unknown>>(
    handle.db,
    sql`select s.task_id, s.name, s.status::text as status, s.intent_at::text as intent_at,
               s.lease_expires_at::text as lease_expires_at, s.receipt, s.last_reconcile,
               (select count(*) from audit_log a where a.tenant_id = s.tenant_id and a.action = 'side_effect.intent_recorded'
                  and a.target = 'side_effect:' || s.task_id || '/' || s.name and not a.details ? 'refused')::int as go_audits,
               (select count(*) from audit_log a where a.tenant_id = s.tenant_id and a.action = 'side_effect.receipt_recorded'
                  and a.target = 'side_effect:' || s.task_id || '/' || s.name and not a.details ? 'refused')::int as receipt_audits,
               (select count(*) from audit_log a where a.tenant_id = s.tenant_id and a.action = 'side_effect.reconciled'
                  and a.target = 'side_effect:' || s.task_id || '/' || s.name)::int as reconcile_audits,
               (select count(*) from events e where e.tenant_id = s.tenant_id and e.task_id = s.task_id
                  and e.type = 'decision.recorded' and e.attrs ->> 'kind' = 'reconcile' and e.attrs ->> 'side_effect' = s.name)::int
                 as reconcile_events
        from side_effects s
        where s.tenant_id = ${tenant.tenantId} and s.task_id in (${sql.join(
          taskIds.map((t) => sql`${t}`),
          sql`, `,
        )})`,
  );
  return new Map(rows.map((r) => [`${r.task_id}/${r.name}`, r]));
}

/** How many of each batch's events are stored. */
async function storedPerBatch(round: Round): Promise<number[]> {
  const counts: number[] = [];
  for (const batch of round.batches) {
    const [row] = await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from events where tenant_id = ${tenant.tenantId}
            and event_id in (${sql.join(
              batch.map((e) => sql`${e.id}`),
              sql`, `,
            )})`,
    );
    counts.push(row!.n);
  }
  return counts;
}

/**
 * What must hold for the whole tenant after any crash: nothing half-applied (see the file comment).
 * @returns a list of violations (empty when consistent).
 */
async function halfApplied(round: Round): Promise<string[]> {
  const problems: string[] = [];
  const tasks = [...Object.values(round.effectTask), ...round.interruptTasks.keys()];
  for (const [id, s] of await effectStates(tasks)) {
    if (s.status === "in_flight" && (!s.lease_expires_at || !s.intent_at))
      problems.push(`${id} is in flight without a lease`);
    if (s.go_audits !== (s.intent_at ? 1 : 0))
      problems.push(`${id}: intent at ${s.intent_at ?? "none"} but ${s.go_audits} go audit entries`);
    const byReceipt = s.status === "completed" && !s.last_reconcile;
    if (s.receipt_audits !== (byReceipt ? 1 : 0))
      problems.push(`${id}: status ${s.status} but ${s.receipt_audits} receipt audit entries`);
    if (s.reconcile_audits !== (s.last_reconcile ? 1 : 0) || s.reconcile_events !== s.reconcile_audits) {
      problems.push(
        `${id}: reconciled ${s.last_reconcile ? "yes" : "no"}, ${s.reconcile_audits} audit entries, ${s.reconcile_events} events`,
      );
    }
  }
  // Audit entries about effects that do not exist.
  const orphans = await queryRows<{ target: string }>(
    handle.db,
    sql`select a.target from audit_log a where a.tenant_id = ${tenant.tenantId} and a.action like 'side_effect.%'
          and not exists (select 1 from side_effects s where s.tenant_id = a.tenant_id
                            and a.target = 'side_effect:' || s.task_id || '/' || s.name)`,
  );
  for (const o of orphans) problems.push(`audit entry for ${o.target}, which does not exist`);
  // Checkpoints and their audit entries.
  const [cp] = await queryRows<{ checkpoints: number; audits: number }>(
    handle.db,
    sql`select (select count(*) from task_checkpoints where tenant_id = ${tenant.tenantId})::int as checkpoints,
               (select count(*) from audit_log where tenant_id = ${tenant.tenantId} and action = 'task.checkpointed')::int as audits`,
  );
  if (cp!.checkpoints !== cp!.audits)
    problems.push(`${cp!.checkpoints} checkpoints but ${cp!.audits} checkpoint audit entries`);
  // Events whose task row is missing (tasks are created in the same statement as their first events).
  const [homeless] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from events e where e.tenant_id = ${tenant.tenantId}
          and not exists (select 1 from tasks t where t.tenant_id = e.tenant_id and t.task_id = e.task_id)`,
  );
  if (homeless!.n) problems.push(`${homeless!.n} events without their task`);
  // An interruption is stored exactly when the effects it ends are unknown.
  for (const [t, b] of round.interruptTasks) {
    const interrupted = round.batches[b]!.find((e) => e.task_id === t)!;
    const [row] = await queryRows<{ stored: boolean; in_flight: number; unknown: number }>(
      handle.db,
      sql`select exists (select 1 from events where tenant_id = ${tenant.tenantId} and event_id = ${interrupted.id}) as stored,
                 (select count(*) from side_effects where tenant_id = ${tenant.tenantId} and task_id = ${t} and status = 'in_flight')::int as in_flight,
                 (select count(*) from side_effects where tenant_id = ${tenant.tenantId} and task_id = ${t} and status = 'unknown')::int as unknown`,
    );
    const expected = row!.stored ? { in_flight: 0, unknown: 2 } : { in_flight: 2, unknown: 0 };
    if (row!.in_flight !== expected.in_flight || row!.unknown !== expected.unknown) {
      problems.push(
        `${t}: interruption ${row!.stored ? "stored" : "not stored"} but ${row!.in_flight} in flight, ${row!.unknown} unknown`,
      );
    }
  }
  const chain = await verifyAuditChain({
    db: handle.db,
    actor: { kind: "system", tenantId: tenant.tenantId, label: "crash test" },
  });
  if (!chain.ok) problems.push(`audit chain: ${chain.message}`);
  return problems;
}

/** Acknowledged writes that are not stored as acknowledged. */
async function lostAcks(round: Round): Promise<string[]> {
  const lost: string[] = [];
  const states = await effectStates(Object.values(round.effectTask));
  const stored = await storedPerBatch(round);
  for (const req of round.requests) {
    if (!req.before || req.before.status >= 300) continue;
    if (req.kind === "events") {
      const b = Number(req.label);
      if (stored[b] !== round.batches[b]!.length)
        lost.push(`batch ${b}: acknowledged, ${stored[b]} of ${round.batches[b]!.length} stored`);
      continue;
    }
    const s = states.get(`${round.effectTask[req.kind]}/${req.label}`);
    const body = req.before.body as { decision?: string; audit_seq?: number };
    if (
      req.kind === "intent" &&
      !(body.decision === "go" && s?.intent_at && s.status === "in_flight" && s.go_audits === 1)
    ) {
      lost.push(`intent ${req.label}: answered ${req.before.text}, stored ${JSON.stringify(s)}`);
    }
    if (
      req.kind === "receipt" &&
      !(s?.status === "completed" && s.receipt?.external_operation_id === `op-${req.label}` && s.receipt_audits === 1)
    ) {
      lost.push(`receipt ${req.label}: acknowledged, stored ${JSON.stringify(s)}`);
    }
    if (req.kind === "reconcile") {
      const [entry] = await queryRows<{ target: string }>(
        handle.db,
        sql`select target from audit_log where tenant_id = ${tenant.tenantId} and seq = ${body.audit_seq ?? -1} and action = 'side_effect.reconciled'`,
      );
      if (!(
        s?.status === "completed" &&
        s.last_reconcile &&
        entry?.target === `side_effect:${round.effectTask.reconcile}/${req.label}`
      )) {
        lost.push(`reconcile ${req.label}: acknowledged (audit #${body.audit_seq}), stored ${JSON.stringify(s)}`);
      }
    }
  }
  return lost;
}

/** The answers to a resend that are not the idempotent answer. */
function wrongResendAnswers(round: Round): string[] {
  const wrong: string[] = [];
  for (const req of round.requests) {
    const acked = req.before !== undefined && req.before.status < 300;
    const a = req.after!;
    const code = (a.body as { error?: { code?: string } }).error?.code;
    const say = () =>
      `${req.kind} ${req.label} (${acked ? "acknowledged" : "not acknowledged"}) resent: ${a.status} ${a.text.slice(0, 300)}`;
    switch (req.kind) {
      case "events": {
        const statuses = new Set((a.body as { results?: Array<{ status: string }> }).results?.map((r) => r.status));
        const ok =
          a.status === 200 &&
          statuses.size === 1 &&
          (acked ? statuses.has("duplicate") : statuses.has("duplicate") || statuses.has("stored"));
        if (!ok) wrong.push(`${say()} → ${[...statuses].join(", ")}`);
        break;
      }
      case "intent":
        // The acknowledged go holds the lease: the resend finds it (no second go); an unanswered one may get its go now.
        if (
          !(a.status === 409 && code === "in_flight") &&
          !(!acked && a.status === 200 && (a.body as { decision?: string }).decision === "go")
        )
          wrong.push(say());
        break;
      case "receipt":
        if (!(a.status === 200 && (!acked || (a.body as { replayed?: boolean }).replayed === true))) wrong.push(say());
        break;
      case "reconcile":
        if (!(a.status === 409 && code === "conflict") && !(!acked && a.status === 200)) wrong.push(say());
        break;
    }
  }
  return wrong;
}

describe("crash safety: SIGKILL mid-write on PostgreSQL", () => {
  const kills: Array<{ killAt: KillAt; inFlight: Record<Kind, number>; acked: number; cutOff: number }> = [];

  test.each<[string, KillAt]>([
    ["60 ms after the first requests", { afterMs: 60 }],
    ["after 5 acknowledged writes", { afterAcks: 5 }],
    ["after 15 acknowledged writes", { afterAcks: 15 }],
  ])("kill %s: acknowledged writes stored once, nothing half-applied, resends idempotent", async (_name, killAt) => {
    if (!server.running) await server.start(); // an earlier round that failed may have left it killed
    const t0 = Date.now();
    const round = await prepareRound();
    const t1 = Date.now();
    const inFlight = await sendAndKill(round, killAt);
    const t2 = Date.now();
    const acked = round.requests.filter((r) => r.before && r.before.status < 300).length;
    const cutOff = round.requests.filter((r) => r.cutOff).length;
    kills.push({ killAt, inFlight, acked, cutOff });
    // No answer before the kill was a server error (a refusal would mean the round was prepared wrongly).
    const refused = round.requests.filter((r) => r.before && r.before.status >= 300);
    expect(refused.map((r) => `${r.kind} ${r.label}: ${r.before!.status} ${r.before!.text.slice(0, 200)}`)).toEqual([]);

    await server.start();
    const t3 = Date.now();
    console.log(`[crash] prepare ${t1 - t0} ms, send+kill ${t2 - t1} ms, restart ${t3 - t2} ms`);
    // Before anything is resent: what was acknowledged is there, and nothing is half-applied.
    expect(await lostAcks(round)).toEqual([]);
    expect(await halfApplied(round)).toEqual([]);
    for (const [b, n] of (await storedPerBatch(round)).entries())
      expect([0, round.batches[b]!.length], `batch ${b}: ${n} stored`).toContain(n);

    // The runtime and the responder resend everything they sent: each gets the idempotent answer.
    await pool(round.requests, 8, async (req) => {
      req.after = await req.send();
    });
    console.log(`[crash] checks+resend ${Date.now() - t3} ms`);
    expect(wrongResendAnswers(round)).toEqual([]);
    expect(await halfApplied(round)).toEqual([]);

    // The state a crash-free run ends in: every batch stored once, one go per intent, every receipt and reconcile applied once.
    expect(await storedPerBatch(round)).toEqual(round.batches.map((b) => b.length));
    const states = await effectStates(Object.values(round.effectTask));
    for (const name of effectNames("write")) {
      expect(states.get(`${round.effectTask.intent}/${name}`)).toMatchObject({ status: "in_flight", go_audits: 1 });
      expect(states.get(`${round.effectTask.receipt}/${name}`)).toMatchObject({
        status: "completed",
        go_audits: 1,
        receipt_audits: 1,
      });
      expect(states.get(`${round.effectTask.reconcile}/${name}`)).toMatchObject({
        status: "completed",
        go_audits: 1,
        reconcile_audits: 1,
        reconcile_events: 1,
      });
    }
  });

  test("every kind of write was in flight at some kill", () => {
    console.log(`[crash] kills: ${JSON.stringify(kills)}`);
    expect(kills).toHaveLength(3);
    for (const kind of KINDS)
      expect(
        kills.some((k) => k.inFlight[kind] > 0),
        `${kind}: ${JSON.stringify(kills)}`,
      ).toBe(true);
    // Some writes were cut off by a kill, and some were acknowledged before one.
    expect(kills.reduce((n, k) => n + k.cutOff, 0)).toBeGreaterThan(0);
    expect(kills.reduce((n, k) => n + k.acked, 0)).toBeGreaterThan(0);
  });
});
