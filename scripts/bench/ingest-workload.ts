/**
 * The ingest benchmark's workload: realistic runtime events over many tasks and all four planes, cut into
 * batches per sender, with a chosen share of duplicate posts (ids already sent — re-deliveries of earlier
 * batches, ids racing in concurrent batches of other senders, and a few repeated inside one batch).
 * Deterministic for a given seed.
 */
import { createHash } from "node:crypto";
import type { EventInput, Plane } from "@/lib/contract/api";

/** Workload shape. `dupRatio` is the share of posted events whose id was (or is being) posted already. */
export type WorkloadOptions = {
  total: number;
  batchSize: number;
  senders: number;
  dupRatio: number;
  tasks: number;
  seed: number;
};

export type DuplicateKind = "race" | "replay" | "in_batch";

/** One batch of one sender; `round` is its position in the sender's sequence. */
export type PlannedBatch = { sender: number; round: number; events: EventInput[]; body: string };

export type Workload = {
  /** Each event once, as generated (attrs not yet redacted). */
  unique: EventInput[];
  /** Batches per sender, in sending order. */
  perSender: PlannedBatch[][];
  posted: number;
  planned: Record<DuplicateKind, number>;
  taskIds: string[];
  byPlane: Record<Plane, number>;
  largestBodyBytes: number;
};

/** mulberry32: a small seeded PRNG in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type TaskState = {
  id: string;
  clock: number;
  seq: number;
  attempt: number;
  sandbox: string;
  phase: number;
  checkpoint: number;
  effects: number;
  openIntents: Array<{ name: string; key: string; digest: string }>;
  openCalls: Array<{ call: string; tool: string }>;
};

const PHASES = ["intake", "read_inputs", "extract", "update_records", "draft_report", "review", "publish"];
const TOOLS = [
  "pdf.extract",
  "records.lookup",
  "records.update",
  "search.query",
  "fs.write",
  "http.get",
  "report.render",
];
const CREDS = [
  { id: "cred/records-rw", scope: "records:write", host: "records.internal.example" },
  { id: "cred/records-ro", scope: "records:read", host: "records.internal.example" },
  { id: "cred/search", scope: "search:query", host: "api.search.example" },
  { id: "cred/storage", scope: "objects:put", host: "storage.example.net" },
];

/** Relative frequencies of event types (mostly tool and credential traffic, few state transitions). */
const TYPE_WEIGHTS: Array<[Plane, string, number]> = [
  ["tools", "tool.called", 22],
  ["tools", "tool.completed", 20],
  ["tools", "tool.failed", 1],
  ["tools", "egress.allowed", 14],
  ["tools", "egress.denied", 0.6],
  ["tools", "tool.definition_changed", 0.05],
  ["tools", "side_effect.intent", 0.3],
  ["tools", "side_effect.receipt", 0.25],
  ["vault", "credential.used", 12],
  ["vault", "credential.issued", 1.2],
  ["vault", "credential.attached", 1.2],
  ["vault", "credential.revoked", 0.15],
  ["vault", "credential.expired", 0.15],
  ["vault", "credential.denied", 0.15],
  ["session", "constraint.checked", 3],
  ["session", "checkpoint.saved", 3],
  ["session", "decision.recorded", 2],
  ["session", "phase.changed", 1.2],
  ["session", "compaction.performed", 0.8],
  ["session", "approval.requested", 0.3],
  ["session", "approval.decided", 0.3],
  ["session", "run.interrupted", 0.04],
  ["environment", "snapshot.saved", 2],
  ["environment", "manifest.applied", 1],
  ["environment", "sandbox.replaced", 0.04],
];
const TOTAL_WEIGHT = TYPE_WEIGHTS.reduce((s, [, , w]) => s + w, 0);

/** A deterministic hex digest (stands in for content digests; 64 hex chars). */
function digest(...parts: Array<string | number>): string {
  return createHash("sha256").update(parts.join("|")).digest("hex");
}

class EventFactory {
  private readonly rnd: () => number;
  private readonly tasks: TaskState[];
  private readonly cumulative: number[];
  private n = 0;

  constructor(taskCount: number, seed: number, runTag: string) {
    this.rnd = prng(seed);
    const start = Date.now() - 3 * 24 * 3600_000;
    this.tasks = Array.from({ length: taskCount }, (_, i) => ({
      id: `bench-${runTag}-task-${String(i).padStart(4, "0")}`,
      clock: start + Math.floor(this.rnd() * 3600_000),
      seq: 0,
      attempt: 0,
      sandbox: "",
      phase: 0,
      checkpoint: 0,
      effects: 0,
      openIntents: [],
      openCalls: [],
    }));
    // Skewed activity: a few busy tasks, a long tail of quieter ones (weight ~ 1/sqrt(rank)).
    let acc = 0;
    this.cumulative = this.tasks.map((_, i) => (acc += 1 / Math.sqrt(i + 1)));
  }

  get taskIds(): string[] {
    return this.tasks.map((t) => t.id);
  }

  private pickTask(): TaskState {
    const x = this.rnd() * this.cumulative[this.cumulative.length - 1]!;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.tasks[lo]!;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)]!;
  }

  private hex(len: number): string {
    let s = "";
    while (s.length < len)
      s += Math.floor(this.rnd() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
    return s.slice(0, len);
  }

  /** The next event of some task, in that task's time order. */
  next(): EventInput {
    const t = this.pickTask();
    t.clock += 20 + Math.floor(this.rnd() * 4000);
    t.seq += 1;
    this.n += 1;
    const base = {
      id: `ev-${this.n.toString(36).padStart(5, "0")}-${this.hex(8)}`,
      task_id: t.id,
      occurred_at: new Date(t.clock).toISOString(),
      actor: "runtime:doc-agent@2.4.1",
    };
    if (t.seq === 1) {
      return {
        ...base,
        plane: "session",
        type: "task.created",
        attrs: {
          principal: `tenant/bench:user/${this.n % 97}`,
          policy_version: "pv-7",
          inputs: [{ ref: `s3://inbox/${t.id}/case.pdf`, sha256: digest(t.id, "input") }],
        },
      };
    }
    if (t.attempt === 0 || (t.seq > 2 && this.rnd() < 0.0004)) {
      t.attempt += 1;
      t.sandbox = `sbx-${this.hex(12)}`;
      return {
        ...base,
        plane: "environment",
        type: "sandbox.created",
        environment_id: t.sandbox,
        attempt: t.attempt,
        attrs: {
          image: "registry.example/agents/doc-worker:2.4.1",
          image_digest: `sha256:${digest("img", 241)}`,
          cpu: 2,
          memory_mb: 4096,
          region: "eu-west-1",
        },
      };
    }
    const env = { environment_id: t.sandbox, attempt: t.attempt };
    let r = this.rnd() * TOTAL_WEIGHT;
    let choice = TYPE_WEIGHTS[0]!;
    for (const w of TYPE_WEIGHTS) {
      r -= w[2];
      if (r <= 0) {
        choice = w;
        break;
      }
    }
    const [plane, type] = choice;
    const e = (attrs: Record<string, unknown>): EventInput => ({ ...base, ...env, plane, type, attrs });
    switch (type) {
      case "tool.called": {
        const tool = this.pick(TOOLS);
        const call = `call_${this.hex(16)}`;
        t.openCalls.push({ call, tool });
        if (t.openCalls.length > 8) t.openCalls.shift();
        const attrs: Record<string, unknown> = {
          tool,
          call_id: call,
          args_digest: `sha256:${digest(call, "args")}`,
          input_tokens: 200 + Math.floor(this.rnd() * 6000),
          timeout_ms: 30000,
        };
        // A small share of calls leak a credential in their arguments: the server must redact it.
        if (this.rnd() < 0.003) attrs.headers = { authorization: `Bearer ${this.hex(40)}`, accept: "application/json" };
        return e(attrs);
      }
      case "tool.completed":
      case "tool.failed": {
        const open = t.openCalls.shift() ?? { call: `call_${this.hex(16)}`, tool: this.pick(TOOLS) };
        return e(
          type === "tool.completed"
            ? {
                tool: open.tool,
                call_id: open.call,
                duration_ms: 5 + Math.floor(this.rnd() * 9000),
                output_digest: `sha256:${digest(open.call, "out")}`,
                output_bytes: Math.floor(this.rnd() * 200000),
              }
            : {
                tool: open.tool,
                call_id: open.call,
                duration_ms: 30000,
                error: { code: "timeout", message: "upstream did not answer within 30s" },
                retryable: true,
              },
        );
      }
      case "tool.definition_changed":
        return e({
          tool: this.pick(TOOLS),
          old_digest: `sha256:${digest(t.id, "def", t.seq - 1)}`,
          new_digest: `sha256:${digest(t.id, "def", t.seq)}`,
          source: "mcp://tools.example/records",
        });
      case "egress.allowed":
      case "egress.denied": {
        const cred = this.pick(CREDS);
        const host =
          type === "egress.allowed"
            ? cred.host
            : this.pick(["paste.example.com", "unknown-cdn.example", "203.0.113.7"]);
        return e({
          host,
          port: 443,
          method: this.pick(["GET", "GET", "POST", "PUT"]),
          policy_version: "pv-7",
          tool: this.pick(TOOLS),
          credential_ref: cred.id,
          action_class: this.pick(["read", "read", "write"]),
          outcome: type === "egress.allowed" ? "allowed" : "denied",
          bytes_out: Math.floor(this.rnd() * 4000),
        });
      }
      case "side_effect.intent": {
        t.effects += 1;
        const name = `update-record-${t.effects}`;
        const key = `${t.id}:${name}`;
        const payload = `sha256:${digest(key, "payload")}`;
        t.openIntents.push({ name, key, digest: payload });
        return e({
          name,
          idempotency_key: key,
          payload_digest: payload,
          action: "records.update",
          tool: "records.update",
        });
      }
      case "side_effect.receipt": {
        const open = t.openIntents.shift();
        if (!open)
          return e({
            name: "publish-report",
            idempotency_key: `${t.id}:publish-report:${t.seq}`,
            external_operation_id: `op-${this.hex(10)}`,
            result_digest: `sha256:${digest(t.id, t.seq)}`,
            completed_at: base.occurred_at,
          });
        return e({
          name: open.name,
          idempotency_key: open.key,
          external_operation_id: `rec-${this.hex(10)}`,
          result_digest: `sha256:${digest(open.key, "result")}`,
          completed_at: base.occurred_at,
        });
      }
      case "credential.used":
      case "credential.issued":
      case "credential.attached":
      case "credential.revoked":
      case "credential.expired":
      case "credential.denied": {
        const cred = this.pick(CREDS);
        return e({
          credential_id: cred.id,
          scope: cred.scope,
          allowed_hosts: [cred.host],
          host: cred.host,
          expires_at: new Date(t.clock + 3600_000).toISOString(),
          issuer: "vault.example",
          lease_id: `lease-${this.hex(12)}`,
        });
      }
      case "checkpoint.saved":
        t.checkpoint += 1;
        return e({
          version: t.checkpoint,
          digest: `sha256:${digest(t.id, "ckpt", t.checkpoint)}`,
          phase: PHASES[t.phase]!,
          bytes: 2000 + Math.floor(this.rnd() * 30000),
        });
      case "phase.changed": {
        const from = PHASES[t.phase]!;
        t.phase = Math.min(t.phase + 1, PHASES.length - 1);
        return e({ from, to: PHASES[t.phase]!, reason: "step finished" });
      }
      case "constraint.checked":
        return e({
          constraint: this.pick(["no-pii-egress", "records-write-approved", "budget-under-limit"]),
          result: "pass",
          after_compaction: this.rnd() < 0.2,
        });
      case "decision.recorded":
        return e({
          decision_id: `dec-${this.hex(8)}`,
          summary: "chose the newest record revision as the source of truth",
          alternatives: 2,
        });
      case "compaction.performed":
        return e({
          tokens_before: 180000,
          tokens_after: 42000,
          constraints_rechecked: true,
          summary_digest: `sha256:${digest(t.id, "summary", t.seq)}`,
        });
      case "approval.requested":
      case "approval.decided":
        return e({
          side_effect: "publish-report",
          approver: "user:approver@bench.test",
          policy_version: "pv-7",
          payload_digest: `sha256:${digest(t.id, "report")}`,
          ...(type === "approval.decided" ? { decision: "approved" } : {}),
        });
      case "run.interrupted":
        return e({ reason: "sandbox lost", signal: "SIGKILL", exit_code: 137 });
      case "snapshot.saved":
        return e({
          snapshot_id: `snap-${this.hex(10)}`,
          provenance_digest: `sha256:${digest(t.id, "snap", t.seq)}`,
          bytes: Math.floor(this.rnd() * 5e7),
        });
      case "manifest.applied":
        return e({ manifest_digest: `sha256:${digest(t.id, "manifest")}`, packages: 42, files: 311 });
      case "sandbox.replaced":
        return e({ old_environment_id: t.sandbox, reason: "health check failed" });
      default:
        return e({ note: "unclassified" });
    }
  }
}

/**
 * Builds the workload: `total` posted events in batches of `batchSize`, batch b going to sender
 * b mod senders. About `dupRatio` of the posted events repeat an id: a third race (ids that another sender
 * posts in the same round, so both requests are in flight together), a few repeat inside one batch, the
 * rest replay ids of earlier rounds. Bodies are serialized here so sending costs no client CPU.
 * @throws Error when a batch body would exceed the API's 1 MB limit.
 */
export function buildWorkload(opts: WorkloadOptions, runTag: string): Workload {
  const rnd = prng(opts.seed ^ 0x9e3779b9);
  const factory = new EventFactory(opts.tasks, opts.seed, runTag);
  const batchCount = Math.ceil(opts.total / opts.batchSize);
  const rounds = Math.ceil(batchCount / opts.senders);
  const freshShare = 1 - opts.dupRatio;
  const perSender: PlannedBatch[][] = Array.from({ length: opts.senders }, () => []);
  const unique: EventInput[] = [];
  const planned: Record<DuplicateKind, number> = { race: 0, replay: 0, in_batch: 0 };
  let postedSoFar = 0;
  let earlierFresh: EventInput[] = [];

  for (let round = 0; round < rounds; round++) {
    const roundBatches: Array<{ sender: number; size: number; fresh: EventInput[] }> = [];
    for (let sender = 0; sender < opts.senders; sender++) {
      const b = round * opts.senders + sender;
      if (b >= batchCount) break;
      const size = Math.min(opts.batchSize, opts.total - b * opts.batchSize);
      const freshCount = Math.floor((postedSoFar + size) * freshShare) - Math.floor(postedSoFar * freshShare);
      postedSoFar += size;
      const fresh = Array.from({ length: freshCount }, () => factory.next());
      unique.push(...fresh);
      roundBatches.push({ sender, size, fresh });
    }
    for (const rb of roundBatches) {
      const events = [...rb.fresh];
      const inBatch = new Set(events.map((e) => e.id));
      const others = roundBatches.filter((o) => o.sender !== rb.sender).flatMap((o) => o.fresh);
      let dups = rb.size - rb.fresh.length;
      const take = (pool: EventInput[], kind: DuplicateKind, want: number) => {
        const budget = want * 20;
        for (let tries = 0; want > 0 && pool.length > 0 && tries < budget; tries++) {
          const ev = pool[Math.floor(rnd() * pool.length)]!;
          if (kind !== "in_batch" && inBatch.has(ev.id)) continue;
          inBatch.add(ev.id);
          events.push(ev);
          planned[kind] += 1;
          want -= 1;
          dups -= 1;
        }
      };
      take(rb.fresh, "in_batch", Math.round(dups * 0.03));
      take(others, "race", Math.round(dups / 3));
      take(earlierFresh, "replay", dups);
      take(others, "race", dups);
      take(rb.fresh, "in_batch", dups);
      if (dups !== 0) throw new Error(`could not place ${dups} duplicates in batch ${rb.sender}/${round}`);
      for (let i = events.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [events[i], events[j]] = [events[j]!, events[i]!];
      }
      perSender[rb.sender]!.push({ sender: rb.sender, round, events, body: JSON.stringify({ events }) });
    }
    earlierFresh = earlierFresh.concat(roundBatches.flatMap((rb) => rb.fresh));
  }

  const byPlane: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
  for (const e of unique) byPlane[e.plane] += 1;
  let largestBodyBytes = 0;
  for (const list of perSender)
    for (const b of list) largestBodyBytes = Math.max(largestBodyBytes, Buffer.byteLength(b.body));
  if (largestBodyBytes > 1024 * 1024)
    throw new Error(`a batch body has ${largestBodyBytes} bytes, above the API's 1 MiB limit`);
  return { unique, perSender, posted: postedSoFar, planned, taskIds: factory.taskIds, byPlane, largestBodyBytes };
}
