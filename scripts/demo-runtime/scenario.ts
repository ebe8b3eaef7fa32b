/**
 * The reference scenario (docs/concepts.md#reference-scenario), driven through the public HTTP API only.
 * See `scripts/demo-runtime.ts` for the story, the environment variables and the crash points.
 */
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import canonicalize from "canonicalize";
import { CustodyApiError, CustodyClient, type ReceiptInput } from "@/lib/sdk/runtime-client";
import type { GateVerdict, Receipt, TaskRecord } from "@/lib/contract/api";
import { startRecordsService, type RecordUpdateResult } from "../records-service";
import { CustodyApprovals, toolPayloadDigest } from "@/lib/sdk/openai-agents";
import {
  buildTools,
  runAgent,
  toolDefinitionDigests,
  type PlannedCall,
  type PublishArgs,
  type ReportPart,
  type ToolHost,
} from "./agent";
import { caseDocument, reportFirstHalf, reportSecondHalf, sha256Hex } from "./documents";
import { EventReporter, MonotonicClock } from "./reporter";
import { CRASH_POINTS, type CrashPoint } from "@/lib/demo/interruption-points";
import { Sandbox, SandboxLostError, SnapshotStore, storeObject } from "./sandbox";

export { CRASH_POINTS, type CrashPoint };

export type ScenarioConfig = {
  custodyUrl: string;
  apiKey: string;
  /** Root of the runtime's sandboxes, snapshots and object store. */
  workDir: string;
  /** Records service base URL; when absent one is started in-process on a free port. */
  recordsUrl?: string;
  /** Port of the in-process records service (default: a free one). */
  recordsPort?: number;
  taskId: string;
  /** Exit hard at this point of attempt 1 instead of the scripted sandbox loss. */
  crashAt?: CrashPoint;
  /**
   * Lose the sandbox at this point of attempt 1 instead of the scripted loss (an interruption exercise): the
   * orchestrator reports run.interrupted and sandbox.destroyed, and attempt 2 waits for the gate as usual.
   */
  interruptAt?: CrashPoint;
  /** Resume-gate polling interval while the verdict is `stop`. */
  pollMs: number;
  /**
   * The approval story: attempt 1 asks, once the draft is checkpointed, for the approval of publish_report (the
   * demo orchestrator approves it under policy version 1, then changes the policy while the sandbox is down);
   * the last attempt's agent calls publish_report, which needs approval: the run pauses, its RunState is stored as a
   * checkpoint artifact, and it continues only with a fresh approval — the report is published once.
   */
  publish?: boolean;
  log?: (line: string) => void;
};

export const PRINCIPAL = "tenant/demo:user/olive";
export const POLICY_VERSION = "policy-v1";
export const EFFECT = "update_record";
export const EFFECT_ACTION = "records.update";
/** The approval story's effect: publishing report.md (a tool with needsApproval). */
export const PUBLISH_EFFECT = "publish_report";
export const PUBLISH_ACTION = "reports.publish";
/** The agent's version, bound into its approvals. */
export const AGENT_VERSION = "doc-processor@1.0.0";
export const CREDENTIAL_REF = "records-api";
const IMAGE = "demo/doc-agent:1.0";
const ORCHESTRATOR = "runtime:orchestrator";
const AGENT = "agent:doc-processor";
const VAULT = "vault:demo";
const EGRESS = "egress-proxy:demo";
const CREDENTIAL_TTL_MS = 60 * 60 * 1000;
/** Phases of the task record, in order. */
export const PHASES = [
  "started",
  "document_read",
  "record_updated",
  "report_drafted",
  "report_written",
  "report_published",
  "done",
];

/** Exit code of a simulated hard crash (as if killed by SIGKILL). */
export const CRASH_EXIT_CODE = 137;

type Attempt = {
  n: number;
  rep: EventReporter;
  sandbox: Sandbox;
  record: TaskRecord;
  credentialId: string;
  /** Scripted story: the receipt sits in the sandbox's buffer and is lost with it. */
  bufferReceipts: boolean;
  crashAt?: CrashPoint;
  interruptAt?: CrashPoint;
  finished: boolean;
  /** The checkpoint version this attempt last read or wrote (sent as If-Match; null before any). */
  version: number | null;
};

/** Record id in the records service for a task (its id made safe for a URL path segment). */
export function recordIdFor(taskId: string): string {
  return `REC-${taskId.replace(/[^A-Za-z0-9._-]/g, "-")}`.slice(0, 100);
}

/** The idempotency key of publishing the report (stable for the task: an approval given in attempt 1 binds it). */
export function publishKeyFor(taskId: string): string {
  return `idem:${taskId}:${PUBLISH_EFFECT}:1`;
}

/** Record id of the published report in the records service. */
export function reportRecordIdFor(taskId: string): string {
  return `REPORT-${taskId.replace(/[^A-Za-z0-9._-]/g, "-")}`.slice(0, 100);
}

/** The fixed arguments of the publish_report call (one payload digest for the whole story). */
export function publishArgsFor(taskId: string): PublishArgs {
  return { report: "report.md", channel: `case-reports/${taskId}` };
}

/** The idempotency key of the scenario's record update (stable for the task, kept in the task record). */
export function idempotencyKeyFor(taskId: string): string {
  return `idem:${taskId}:${EFFECT}:1`;
}

function canonicalSha256(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("value cannot be canonicalized");
  return sha256Hex(text);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The demo runtime: one instance per process. */
export class DemoRuntime {
  private readonly client: CustodyClient;
  private readonly clock = new MonotonicClock();
  private readonly snapshots: SnapshotStore;
  private readonly tools = buildTools(this.hostPlaceholder());
  private readonly toolDefs = toolDefinitionDigests(this.tools);
  private readonly log: (line: string) => void;
  private recordsUrl = "";
  private closeRecords: (() => Promise<void>) | null = null;
  private current: Attempt | null = null;
  /** The approval helper of the running attempt (the approval story only). */
  private custody: CustodyApprovals | null = null;

  constructor(private readonly cfg: ScenarioConfig) {
    this.client = new CustodyClient({ baseUrl: cfg.custodyUrl, apiKey: cfg.apiKey });
    this.snapshots = new SnapshotStore(cfg.workDir);
    this.log = cfg.log ?? ((line) => console.log(`[runtime] ${line}`));
  }

  /**
   * Runs the scenario from wherever the server says the task is.
   * @returns the process exit code: 0 when the task is done, 1 on an error.
   */
  async main(): Promise<number> {
    fs.mkdirSync(this.cfg.workDir, { recursive: true });
    await this.startRecords();
    try {
      const task = await this.client.getTask(this.cfg.taskId);
      if (!task) {
        const cut = this.cfg.crashAt
          ? ` (will crash ${this.cfg.crashAt})`
          : this.cfg.interruptAt
            ? ` (will lose its sandbox ${this.cfg.interruptAt})`
            : "";
        this.log(`task ${this.cfg.taskId} is new: starting the scenario${cut}`);
        await this.firstAttempt();
        return await this.continueAttempt(2);
      }
      if (task.phase === "done") {
        this.log(
          `task ${this.cfg.taskId} is done (checkpoint v${task.version}); the scenario is complete, nothing to do`,
        );
        return 0;
      }
      const next = task.current_attempt + 1;
      this.log(
        `task ${this.cfg.taskId} stopped midway (phase ${task.phase}, attempt ${task.current_attempt}): continuing with attempt ${next}`,
      );
      return await this.continueAttempt(next);
    } catch (err) {
      this.log(`failed: ${describeError(err)}`);
      await this.reportFailure(err).catch(() => {});
      return 1;
    } finally {
      await this.stopRecords();
    }
  }

  /**
   * Reports a clean interruption of the current attempt (Ctrl-C / SIGTERM), then stops the records service.
   * Best effort, bounded by a few seconds.
   */
  async interrupt(signal: string): Promise<void> {
    const a = this.current;
    if (a && !a.finished) {
      a.finished = true;
      a.rep.emit(
        "session",
        "run.interrupted",
        { reason: "runtime_stopped", signal, phase: a.record.phase },
        { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
      );
      a.rep.emit(
        "environment",
        "sandbox.destroyed",
        { reason: "stopped", environment_id: a.sandbox.environmentId, attempt: a.n },
        { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
      );
      a.sandbox.destroy();
      await Promise.race([a.rep.flush(), sleep(3000)]).catch(() => {});
      this.log(`attempt ${a.n}: stopped by ${signal}; reported run.interrupted`);
    }
    await this.stopRecords();
  }

  // ---------------------------------------------------------------- attempts

  /** Attempt 1: the story up to the sandbox loss (or a hard crash at `crashAt`). */
  private async firstAttempt(): Promise<void> {
    const record = this.baseRecord();
    const a = this.newAttempt(1, record, {
      bufferReceipts: !this.cfg.crashAt && !this.cfg.interruptAt,
      crashAt: this.cfg.crashAt,
      interruptAt: this.cfg.interruptAt,
    });
    a.rep.emit(
      "session",
      "task.created",
      {
        principal: PRINCIPAL,
        policy_version: POLICY_VERSION,
        workflow: "document-processing",
        runtime: "demo-runtime (@openai/agents 0.20.0)",
      },
      { actor: ORCHESTRATOR },
    );
    this.startSandbox(a, null);
    this.issueCredential(a);
    await a.rep.flush();
    const plan: PlannedCall[] = [
      { tool: "read_document", args: { path: `${this.cfg.taskId}.pdf` } },
      { tool: "update_record", args: { record_id: recordIdFor(this.cfg.taskId), status: "reviewed" } },
      { tool: "write_report", args: { part: "first_half" } },
      { tool: "write_report", args: { part: "second_half" } },
    ];
    try {
      await this.runPlan(
        a,
        plan,
        `Process case file ${this.cfg.taskId}: read the document, mark the record reviewed, write report.md.`,
      );
    } catch (err) {
      if (a.sandbox.lost) {
        await this.reportSandboxLoss(a);
        return;
      }
      throw err;
    }
    await this.finish(a);
  }

  /** Attempt n ≥ 2: fresh sandbox, restore, ask the gate until it lets the run continue, finish the task. */
  private async continueAttempt(n: number): Promise<number> {
    const view = await this.client.getTask(this.cfg.taskId);
    const record: TaskRecord = view?.record
      ? (JSON.parse(JSON.stringify(view.record)) as TaskRecord)
      : this.baseRecord();
    if (!record.side_effects[EFFECT]) record.side_effects[EFFECT] = this.declaredEffect();
    record.tool_definitions = { ...this.toolDefs };
    const a = this.newAttempt(n, record, { bufferReceipts: false, version: view?.version || null });
    this.log(`attempt ${n}: resuming from checkpoint v${view?.version ?? 0} (phase ${view?.phase ?? "unknown"})`);

    const previous = await this.lastEnvironment();
    this.startSandbox(a, previous.environmentId);
    await a.rep.flush();
    await this.restoreSnapshot(a, previous.snapshot);
    this.issueCredential(a);
    await a.rep.flush();

    const verdict = await this.waitForGate(a);
    a.rep.emit(
      "session",
      "run.resumed",
      {
        verdict: verdict.verdict,
        from_checkpoint_version: view?.version ?? 0,
        next_phase: verdict.next_phase,
        permitted_side_effects: verdict.permitted_side_effects,
      },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();

    const plan: PlannedCall[] = [];
    if (record.inputs.length === 0) plan.push({ tool: "read_document", args: { path: `${this.cfg.taskId}.pdf` } });
    plan.push({ tool: "update_record", args: { record_id: recordIdFor(this.cfg.taskId), status: "reviewed" } });
    if (!this.draftIntact(a)) plan.push({ tool: "write_report", args: { part: "first_half" } });
    plan.push({ tool: "write_report", args: { part: "second_half" } });
    if (this.cfg.publish) plan.push({ tool: "publish_report", args: publishArgsFor(this.cfg.taskId) });
    this.log(
      `attempt ${n}: gate said ${verdict.verdict}; plan: ${plan.map((p) => p.tool + ("part" in p.args ? `(${p.args.part})` : "")).join(" → ")}`,
    );

    await this.runPlan(
      a,
      plan,
      `Resume case file ${this.cfg.taskId} from its last checkpoint (phase ${record.phase}).`,
    );
    await this.finish(a);
    return 0;
  }

  private async runPlan(a: Attempt, plan: PlannedCall[], input: string): Promise<void> {
    const host = this.hostFor(a);
    const tools = buildTools(host);
    this.custody = this.cfg.publish ? this.custodyFor(a) : null;
    const final = await runAgent({
      tools,
      host,
      plan,
      input,
      finalText: `Case ${this.cfg.taskId} processed.`,
      callPrefix: `a${a.n}`,
      custody: this.custody ?? undefined,
    });
    this.log(`attempt ${a.n}: agent finished: "${final}"`);
  }

  /** Final checkpoint, run.stopped, sandbox teardown, and the records service's count. */
  private async finish(a: Attempt): Promise<void> {
    await this.checkpoint(a, "done");
    a.rep.emit(
      "session",
      "run.stopped",
      { reason: "completed", phase: "done" },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    a.rep.emit(
      "environment",
      "sandbox.destroyed",
      { reason: "completed", environment_id: a.sandbox.environmentId, attempt: a.n },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    a.sandbox.destroy();
    a.finished = true;
    await a.rep.flush();
    const recordId = recordIdFor(this.cfg.taskId);
    const res = await fetch(`${this.recordsUrl}/records/${encodeURIComponent(recordId)}`);
    const body = res.ok ? ((await res.json()) as { update_count?: number }) : null;
    this.log(`attempt ${a.n}: done. Records service: ${recordId} updated ${body?.update_count ?? "?"} time(s).`);
    if (this.cfg.publish) {
      const reportId = reportRecordIdFor(this.cfg.taskId);
      const r = await fetch(`${this.recordsUrl}/records/${encodeURIComponent(reportId)}`);
      const published = r.ok ? ((await r.json()) as { update_count?: number }) : null;
      this.log(`attempt ${a.n}: Records service: ${reportId} published ${published?.update_count ?? "?"} time(s).`);
    }
  }

  /** Orchestrator's view of a lost sandbox: the buffered receipt is gone; report the interruption. */
  private async reportSandboxLoss(a: Attempt): Promise<void> {
    const dropped = a.rep.dropHeld();
    a.finished = true;
    this.log(
      dropped.length
        ? `attempt ${a.n}: sandbox ${a.sandbox.environmentId} lost; ${dropped.length} buffered event(s) (the receipt of ${EFFECT}) were never sent`
        : `attempt ${a.n}: sandbox ${a.sandbox.environmentId} lost`,
    );
    a.rep.emit(
      "session",
      "run.interrupted",
      {
        reason: "sandbox_lost",
        environment_id: a.sandbox.environmentId,
        phase: a.record.phase,
        detail: "the sandbox host stopped answering",
      },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    a.rep.emit(
      "environment",
      "sandbox.destroyed",
      { reason: "lost", environment_id: a.sandbox.environmentId, attempt: a.n },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();
    this.log(`attempt ${a.n}: reported run.interrupted and sandbox.destroyed (lost)`);
  }

  /** After an unexpected error: tell the server the run stopped (best effort). */
  private async reportFailure(err: unknown): Promise<void> {
    const a = this.current;
    if (!a || a.finished) return;
    a.finished = true;
    const code =
      err instanceof CustodyApiError ? err.code : err instanceof SandboxLostError ? "sandbox_lost" : "runtime_error";
    a.rep.emit(
      "session",
      "run.stopped",
      { reason: "error", code, phase: a.record.phase },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    a.rep.emit(
      "environment",
      "sandbox.destroyed",
      { reason: "error", environment_id: a.sandbox.environmentId, attempt: a.n },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    a.sandbox.destroy();
    await a.rep.flush();
  }

  // ---------------------------------------------------------------- gate

  /** Asks the resume gate until it answers `resume` (or `replay` with no mutation left to make). */
  private async waitForGate(a: Attempt): Promise<GateVerdict> {
    let lastKey = "";
    let lastLog = 0;
    for (;;) {
      const v = await this.client.resume(this.cfg.taskId, { tool_definitions: this.toolDefs, attempt: a.n });
      const key = `${v.verdict}|${v.reasons.map((r) => `${r.code}:${r.target}`).join(",")}`;
      if (key !== lastKey) {
        lastKey = key;
        lastLog = Date.now();
        this.log(`attempt ${a.n}: gate → ${v.verdict}${v.reasons.length ? "" : " (no blocking reasons)"}`);
        for (const r of v.reasons) this.log(`attempt ${a.n}:   - ${r.code} (${r.target}): ${r.message}`);
        a.rep.emit(
          "session",
          "x.resume_gate.verdict",
          {
            verdict: v.verdict,
            reasons: v.reasons.map((r) => ({ code: r.code, target: r.target })),
            next_phase: v.next_phase,
          },
          { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
        );
        await a.rep.flush();
        if (v.verdict === "stop")
          this.log(`attempt ${a.n}: waiting for a person (polling the gate every ${this.cfg.pollMs} ms)`);
      } else if (Date.now() - lastLog > 30_000) {
        lastLog = Date.now();
        this.log(`attempt ${a.n}: still ${v.verdict}: ${v.reasons.map((r) => r.code).join(", ")}`);
      }
      if (v.verdict === "resume") return v;
      if (v.verdict === "replay") {
        // Reads may repeat; continue only if no new mutation is needed (the write is completed and will replay),
        // or if the only reason is a missing checkpoint (the plan checkpoints before its first write).
        if (v.reasons.every((r) => r.code === "no_checkpoint")) return v;
        const view = await this.client.getTask(this.cfg.taskId);
        if (view?.side_effects[EFFECT]?.status === "completed") return v;
      }
      if (v.reasons.some((r) => r.code === "credential_expired")) {
        this.issueCredential(a);
        await a.rep.flush();
      }
      await sleep(this.cfg.pollMs);
    }
  }

  // ---------------------------------------------------------------- tools

  /** The tools' work for one attempt. */
  private hostFor(a: Attempt): ToolHost {
    return {
      beforeTurn: () => a.sandbox.assertAlive(),
      readDocument: (args, callId) => this.toolReadDocument(a, args, callId),
      updateRecord: (args, callId) => this.toolUpdateRecord(a, args, callId),
      writeReport: (args, callId) => this.toolWriteReport(a, args, callId),
      publishReport: (args, callId) => this.toolPublishReport(a, args, callId),
    };
  }

  /** Tools built only to compute definition digests (never executed). */
  private hostPlaceholder(): ToolHost {
    const never = async (): Promise<Record<string, unknown>> => {
      throw new Error("placeholder host");
    };
    return { beforeTurn: () => {}, readDocument: never, updateRecord: never, writeReport: never, publishReport: never };
  }

  private toolCalled(a: Attempt, name: string, args: unknown, callId: string): number {
    // update_record writes to the records service: a mutation, answered for by the declared side effect.
    const write =
      name === "update_record"
        ? { mutation: true, side_effect: EFFECT, idempotency_key: idempotencyKeyFor(this.cfg.taskId) }
        : name === "publish_report"
          ? { mutation: true, side_effect: PUBLISH_EFFECT, idempotency_key: publishKeyFor(this.cfg.taskId) }
          : { mutation: false };
    a.rep.emit(
      "tools",
      "tool.called",
      {
        tool: name,
        call_id: callId,
        arguments_digest: canonicalSha256(args),
        definition_digest: this.toolDefs[name] ?? null,
        ...write,
      },
      { actor: AGENT, environmentId: a.sandbox.environmentId },
    );
    return Date.now();
  }

  private toolCompleted(
    a: Attempt,
    name: string,
    callId: string,
    started: number,
    attrs: Record<string, unknown>,
    hold = false,
  ) {
    a.rep.emit(
      "tools",
      "tool.completed",
      { tool: name, call_id: callId, duration_ms: Date.now() - started, ...attrs },
      { actor: AGENT, environmentId: a.sandbox.environmentId, hold },
    );
  }

  private async toolReadDocument(a: Attempt, args: { path: string }, callId: string): Promise<Record<string, unknown>> {
    a.sandbox.assertAlive();
    const started = this.toolCalled(a, "read_document", args, callId);
    const name = `${this.cfg.taskId}.pdf`;
    if (args.path !== name) throw new Error(`read_document: only ${name} exists in this workspace`);
    const bytes = caseDocument(this.cfg.taskId);
    fs.writeFileSync(a.sandbox.file(name), bytes);
    const sha256 = sha256Hex(fs.readFileSync(a.sandbox.file(name)));
    const ref = storeObject(this.cfg.workDir, this.cfg.taskId, name, bytes, sha256);
    a.record.inputs = [{ ref, sha256 }];
    a.record.decisions = [
      {
        id: "d1",
        summary: `Evidence in ${name} is complete: set record ${recordIdFor(this.cfg.taskId)} to reviewed.`,
        by: AGENT,
      },
    ];
    this.toolCompleted(a, "read_document", callId, started, {
      ref,
      sha256,
      size: bytes.length,
      media_type: "application/pdf",
    });
    a.rep.emit(
      "session",
      "decision.recorded",
      { decision_id: "d1", summary: a.record.decisions[0]!.summary, by: AGENT },
      { actor: AGENT, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();
    this.log(`attempt ${a.n}: read_document ${name} → sha256 ${sha256.slice(0, 12)}…`);
    await this.snapshotAndCheckpoint(a, "document_read");
    return { ref, sha256, size: bytes.length, pages: 1 };
  }

  private async toolUpdateRecord(
    a: Attempt,
    args: { record_id: string; status: string },
    callId: string,
  ): Promise<Record<string, unknown>> {
    a.sandbox.assertAlive();
    const effect = a.record.side_effects[EFFECT] ?? (a.record.side_effects[EFFECT] = this.declaredEffect());
    const documentSha = a.record.inputs[0]?.sha256;
    if (!documentSha) throw new Error("update_record: the document has not been read yet");
    const fields = { status: args.status, case_id: this.cfg.taskId, document_sha256: documentSha, reviewed_by: AGENT };
    const payload = { record_id: args.record_id, fields };
    const payloadDigest = canonicalSha256(payload);
    const started = this.toolCalled(a, "update_record", args, callId);
    await a.rep.flush();

    const intent = await this.client.intent(this.cfg.taskId, EFFECT, {
      idempotency_key: effect.idempotency_key,
      payload_digest: payloadDigest,
      action: EFFECT_ACTION,
      mutation: true,
      tool: "update_record",
      attempt: a.n,
    });
    this.log(`attempt ${a.n}: intent ${EFFECT} → ${intent.decision}`);
    a.rep.emit(
      "tools",
      "side_effect.intent",
      {
        name: EFFECT,
        idempotency_key: effect.idempotency_key,
        payload_digest: payloadDigest,
        action: EFFECT_ACTION,
        tool: "update_record",
        mutation: true,
        decision: intent.decision,
        ...(intent.decision === "go" ? { lease_expires_at: intent.lease_expires_at } : {}),
      },
      { actor: AGENT, environmentId: a.sandbox.environmentId },
    );
    this.crashPoint(a, "after_intent");
    await a.rep.flush();

    if (intent.decision === "replay") {
      effect.status = "completed";
      effect.receipt = intent.receipt;
      this.toolCompleted(a, "update_record", callId, started, {
        replayed: true,
        external_operation_id: intent.receipt.external_operation_id,
      });
      await a.rep.flush();
      this.log(
        `attempt ${a.n}: ${EFFECT} replayed from the stored receipt (${intent.receipt.external_operation_id}); no second write`,
      );
      await this.snapshotAndCheckpoint(a, "record_updated");
      return { record_id: args.record_id, operation_id: intent.receipt.external_operation_id, replayed: true };
    }

    const url = new URL(`/records/${encodeURIComponent(args.record_id)}`, this.recordsUrl);
    a.rep.emit(
      "vault",
      "credential.used",
      {
        credential_ref: CREDENTIAL_REF,
        credential_id: a.credentialId,
        host: url.hostname,
        tool: "update_record",
        purpose: EFFECT_ACTION,
      },
      { actor: VAULT, environmentId: a.sandbox.environmentId },
    );
    const res = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "application/json", "idempotency-key": effect.idempotency_key },
      body: JSON.stringify(fields),
    });
    const text = await res.text();
    a.rep.emit(
      "tools",
      "egress.allowed",
      {
        host: url.hostname,
        port: Number(url.port || 80),
        method: "PUT",
        path: url.pathname,
        policy_version: a.record.policy_version,
        credential_ref: CREDENTIAL_REF,
        tool: "update_record",
        action_class: "mutation",
        outcome: "allowed",
        http_status: res.status,
      },
      { actor: EGRESS, environmentId: a.sandbox.environmentId },
    );
    if (!res.ok) {
      a.rep.emit(
        "tools",
        "tool.failed",
        { tool: "update_record", call_id: callId, http_status: res.status },
        { actor: AGENT, environmentId: a.sandbox.environmentId },
      );
      await a.rep.flush();
      throw new Error(`update_record: the records service answered ${res.status}: ${text.slice(0, 200)}`);
    }
    const result = JSON.parse(text) as RecordUpdateResult;
    const replayedByService = res.headers.get("idempotent-replayed") === "true";
    this.log(
      `attempt ${a.n}: records service accepted the update (operation ${result.operation_id}, update_count ${result.update_count}${replayedByService ? ", replayed by the service" : ""})`,
    );
    const receipt: ReceiptInput = {
      idempotency_key: effect.idempotency_key,
      external_operation_id: result.operation_id,
      result_digest: canonicalSha256(result),
      completed_at: result.applied_at,
      attempt: a.n,
    };
    this.crashPoint(a, "after_external_write");
    const { attempt: _attempt, ...receiptFields } = receipt;
    const receiptAttrs = { name: EFFECT, ...receiptFields };
    const completedAttrs = { external_operation_id: result.operation_id, http_status: res.status };
    if (a.bufferReceipts) {
      a.rep.emit("tools", "side_effect.receipt", receiptAttrs, {
        actor: AGENT,
        environmentId: a.sandbox.environmentId,
        hold: true,
      });
      this.toolCompleted(a, "update_record", callId, started, completedAttrs, true);
      effect.status = "in_flight";
      await a.rep.flush();
      this.log(`attempt ${a.n}: receipt of ${EFFECT} held in the sandbox's buffer (sent when the agent run ends)`);
    } else {
      await this.client.receipt(this.cfg.taskId, EFFECT, receipt);
      a.rep.emit("tools", "side_effect.receipt", receiptAttrs, {
        actor: AGENT,
        environmentId: a.sandbox.environmentId,
      });
      this.toolCompleted(a, "update_record", callId, started, completedAttrs);
      effect.status = "completed";
      effect.receipt = {
        external_operation_id: receipt.external_operation_id,
        result_digest: receipt.result_digest,
        completed_at: receipt.completed_at,
      } satisfies Receipt;
      await a.rep.flush();
      this.log(`attempt ${a.n}: receipt ${EFFECT} → recorded (${receipt.external_operation_id})`);
      this.crashPoint(a, "after_receipt");
    }
    await this.snapshotAndCheckpoint(a, "record_updated");
    return {
      record_id: result.record_id,
      operation_id: result.operation_id,
      update_count: result.update_count,
      replayed: false,
    };
  }

  private async toolWriteReport(
    a: Attempt,
    args: { part: ReportPart },
    callId: string,
  ): Promise<Record<string, unknown>> {
    a.sandbox.assertAlive();
    const started = this.toolCalled(a, "write_report", args, callId);
    await a.rep.flush();
    const documentSha = a.record.inputs[0]?.sha256;
    if (!documentSha) throw new Error("write_report: the document has not been read yet");
    const file = a.sandbox.file("report.md");
    const first = reportFirstHalf(this.cfg.taskId, documentSha);
    if (args.part === "first_half") {
      if (a.crashAt === "during_report" || a.interruptAt === "during_report") {
        fs.writeFileSync(file, first.slice(0, Math.floor(first.length * 0.4)));
        this.crashPoint(a, "during_report");
      }
      fs.writeFileSync(file, first);
    } else {
      const current = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      if (current !== first) throw new Error("write_report: report.md does not hold the first half; write it first");
      fs.appendFileSync(file, reportSecondHalf(recordIdFor(this.cfg.taskId)));
    }
    const bytes = fs.readFileSync(file);
    const sha256 = sha256Hex(bytes);
    const ref = storeObject(this.cfg.workDir, this.cfg.taskId, "report.md", bytes, sha256);
    a.record.artifacts = [
      ...a.record.artifacts.filter((x) => x.ref !== ref),
      { ref, sha256, size: bytes.length, media_type: "text/markdown" },
    ];
    this.toolCompleted(a, "write_report", callId, started, { part: args.part, ref, sha256, size: bytes.length });
    await a.rep.flush();
    // The report's bytes go to the custody server before the checkpoint lists them, so the task page can show them.
    await this.uploadArtifact(a, sha256, bytes);
    this.log(
      `attempt ${a.n}: write_report ${args.part} → report.md ${bytes.length} bytes, sha256 ${sha256.slice(0, 12)}…`,
    );
    await this.snapshotAndCheckpoint(a, args.part === "first_half" ? "report_drafted" : "report_written");
    if (args.part === "first_half") {
      // The approval story asks now, with the draft checkpointed: a pending request stops every write of the task at
      // the gate until someone decides, so it is asked for after the run's last write of this attempt.
      if (this.cfg.publish && a.n === 1) await this.requestPublishApproval(a);
      this.crashPoint(a, "after_checkpoint");
      if (a.bufferReceipts) a.sandbox.markLost();
    }
    return { ref, sha256, size: bytes.length, part: args.part };
  }

  /**
   * Uploads an artifact's bytes (content-addressed; the same bytes again store nothing). A refusal is logged, not fatal:
   * the task page then says the bytes were not uploaded, and the run's custody does not depend on them.
   */
  private async uploadArtifact(a: Attempt, sha256: string, bytes: Buffer): Promise<void> {
    try {
      const out = await this.client.uploadArtifact(this.cfg.taskId, sha256, bytes);
      this.log(
        `attempt ${a.n}: uploaded ${bytes.length} bytes as ${sha256.slice(0, 12)}…${out.created ? "" : " (already there)"}`,
      );
    } catch (err) {
      this.log(`attempt ${a.n}: could not upload ${sha256.slice(0, 12)}…: ${(err as Error).message}`);
    }
  }

  // ---------------------------------------------------------------- the approval story

  /**
   * Attempt 1 asks in advance for the approval of publishing the report (its exact payload digest), so an approver
   * can decide while the run works: the server creates one approval request and answers 403 approval_required.
   */
  private async requestPublishApproval(a: Attempt): Promise<void> {
    const args = publishArgsFor(this.cfg.taskId);
    try {
      const out = await this.client.intent(this.cfg.taskId, PUBLISH_EFFECT, {
        idempotency_key: publishKeyFor(this.cfg.taskId),
        payload_digest: toolPayloadDigest("publish_report", args),
        action: PUBLISH_ACTION,
        mutation: true,
        tool: "publish_report",
        attempt: a.n,
        requires_approval: true,
        payload: args,
        agent: "doc-processor",
        agent_version: AGENT_VERSION,
      });
      this.log(
        `attempt ${a.n}: ${PUBLISH_EFFECT} asked in advance → ${out.decision} (unexpected: nothing approved it yet)`,
      );
    } catch (err) {
      if (err instanceof CustodyApiError && err.code === "approval_required") {
        const id = (err.details as { approval_id?: string } | undefined)?.approval_id ?? "?";
        this.log(
          `attempt ${a.n}: ${PUBLISH_EFFECT} needs an approver's decision: approval ${id} requested (policy bound now)`,
        );
        return;
      }
      throw err;
    }
  }

  /** The approval helper of an attempt: publish_report writes under the task's stable publish key. */
  private custodyFor(a: Attempt): CustodyApprovals {
    return new CustodyApprovals({
      client: this.client,
      taskId: this.cfg.taskId,
      attempt: a.n,
      agentVersion: AGENT_VERSION,
      pollMs: this.cfg.pollMs,
      effectFor: () => ({
        name: PUBLISH_EFFECT,
        idempotencyKey: publishKeyFor(this.cfg.taskId),
        action: PUBLISH_ACTION,
      }),
      storeState: async (text, sha256) =>
        storeObject(this.cfg.workDir, this.cfg.taskId, "run-state.json", Buffer.from(text), sha256),
      checkpointState: async (artifact) => {
        a.record.artifacts = [...a.record.artifacts.filter((x) => x.ref !== artifact.ref), artifact];
        await this.checkpoint(a, a.record.phase);
      },
      log: (line) => this.log(`attempt ${a.n}: ${line}`),
    });
  }

  /** publish_report: runs after the approval's go; publishes report.md to the records service once, then the receipt. */
  private async toolPublishReport(a: Attempt, args: PublishArgs, callId: string): Promise<Record<string, unknown>> {
    a.sandbox.assertAlive();
    const custody = this.custody;
    if (!custody) throw new Error("publish_report runs only in the approval story");
    const started = this.toolCalled(a, "publish_report", args, callId);
    await a.rep.flush();
    const file = a.sandbox.file(args.report);
    if (!fs.existsSync(file)) throw new Error(`publish_report: ${args.report} is not in the workspace`);
    const reportSha = sha256Hex(fs.readFileSync(file));
    const recordId = reportRecordIdFor(this.cfg.taskId);
    const out = await custody.write(callId, async () => {
      const url = new URL(`/records/${encodeURIComponent(recordId)}`, this.recordsUrl);
      a.rep.emit(
        "vault",
        "credential.used",
        {
          credential_ref: CREDENTIAL_REF,
          credential_id: a.credentialId,
          host: url.hostname,
          tool: "publish_report",
          purpose: PUBLISH_ACTION,
        },
        { actor: VAULT, environmentId: a.sandbox.environmentId },
      );
      const res = await fetch(url, {
        method: "PUT",
        headers: { "content-type": "application/json", "idempotency-key": publishKeyFor(this.cfg.taskId) },
        body: JSON.stringify({ status: "published", channel: args.channel, report_sha256: reportSha }),
      });
      const text = await res.text();
      // The egress proxy reports every request it lets through, so each credential.used has its request on the tab.
      a.rep.emit(
        "tools",
        "egress.allowed",
        {
          host: url.hostname,
          port: Number(url.port || 80),
          method: "PUT",
          path: url.pathname,
          policy_version: a.record.policy_version,
          credential_ref: CREDENTIAL_REF,
          tool: "publish_report",
          action_class: "mutation",
          outcome: "allowed",
          http_status: res.status,
        },
        { actor: EGRESS, environmentId: a.sandbox.environmentId },
      );
      if (!res.ok) throw new Error(`publish_report: the records service answered ${res.status}: ${text.slice(0, 200)}`);
      const result = JSON.parse(text) as RecordUpdateResult;
      this.log(
        `attempt ${a.n}: records service published ${recordId} (operation ${result.operation_id}, update_count ${result.update_count})`,
      );
      return { external_operation_id: result.operation_id, result_digest: canonicalSha256(result) };
    });
    this.toolCompleted(a, "publish_report", callId, started, {
      external_operation_id: out.receipt.external_operation_id,
      replayed: out.replayed,
    });
    await a.rep.flush();
    await this.snapshotAndCheckpoint(a, "report_published");
    return {
      published: true,
      record_id: recordId,
      operation_id: out.receipt.external_operation_id,
      replayed: out.replayed,
    };
  }

  // ---------------------------------------------------------------- helpers

  private newAttempt(
    n: number,
    record: TaskRecord,
    opts: { bufferReceipts: boolean; crashAt?: CrashPoint; interruptAt?: CrashPoint; version?: number | null },
  ): Attempt {
    const rep = new EventReporter(this.client, this.cfg.taskId, n, this.clock, (l) => this.log(`attempt ${n}: ${l}`));
    const a: Attempt = {
      n,
      rep,
      sandbox: Sandbox.create(this.cfg.workDir, n),
      record,
      credentialId: "",
      bufferReceipts: opts.bufferReceipts,
      crashAt: opts.crashAt,
      interruptAt: opts.interruptAt,
      finished: false,
      version: opts.version ?? null,
    };
    this.current = a;
    return a;
  }

  private baseRecord(): TaskRecord {
    return {
      task_id: this.cfg.taskId,
      principal: PRINCIPAL,
      policy_version: POLICY_VERSION,
      phase: "started",
      attempt: 1,
      inputs: [],
      decisions: [],
      artifacts: [],
      side_effects: { [EFFECT]: this.declaredEffect() },
      approval: null,
      tool_definitions: { ...this.toolDefs },
    };
  }

  private declaredEffect(): TaskRecord["side_effects"][string] {
    return {
      idempotency_key: idempotencyKeyFor(this.cfg.taskId),
      status: "not_started",
      action: EFFECT_ACTION,
      tool: "update_record",
      mutation: true,
    };
  }

  private recordsHost(): { host: string; port: number } {
    const u = new URL(this.recordsUrl);
    return { host: u.hostname, port: Number(u.port || 80) };
  }

  private startSandbox(a: Attempt, previousEnvironmentId: string | null): void {
    const env = a.sandbox.environmentId;
    a.rep.emit(
      "environment",
      "sandbox.created",
      {
        attempt: a.n,
        environment_id: env,
        provider: "local-directory",
        image: IMAGE,
        reason: a.n === 1 ? "start" : "resume",
        ...(previousEnvironmentId ? { previous_environment_id: previousEnvironmentId } : {}),
      },
      { actor: ORCHESTRATOR, environmentId: env },
    );
    const { host } = this.recordsHost();
    const manifest = {
      image: IMAGE,
      workdir: "/workspace",
      network: { access: "restricted", allowed_domains: [host] },
      tools: Object.keys(this.toolDefs).sort(),
      credentials: [CREDENTIAL_REF],
    };
    a.rep.emit(
      "environment",
      "manifest.applied",
      { manifest_digest: canonicalSha256(manifest), ...manifest },
      { actor: ORCHESTRATOR, environmentId: env },
    );
    this.log(`attempt ${a.n}: sandbox ${env} created`);
  }

  private issueCredential(a: Attempt): void {
    const env = a.sandbox.environmentId;
    const { host } = this.recordsHost();
    a.credentialId = `cred-${randomBytes(5).toString("hex")}`;
    const expiresAt = new Date(Date.now() + CREDENTIAL_TTL_MS).toISOString();
    a.rep.emit(
      "vault",
      "credential.issued",
      {
        credential_ref: CREDENTIAL_REF,
        credential_id: a.credentialId,
        scope: "records:write",
        expires_at: expiresAt,
        allowed_hosts: [host],
      },
      { actor: VAULT, environmentId: env },
    );
    a.rep.emit(
      "vault",
      "credential.attached",
      { credential_ref: CREDENTIAL_REF, credential_id: a.credentialId, environment_id: env, delivery: "egress-proxy" },
      { actor: VAULT, environmentId: env },
    );
    this.log(`attempt ${a.n}: credential ${CREDENTIAL_REF} issued (${a.credentialId}, expires ${expiresAt})`);
  }

  private async snapshotAndCheckpoint(a: Attempt, phase: string): Promise<void> {
    const snap = this.snapshots.save(a.sandbox);
    a.rep.emit(
      "environment",
      "snapshot.saved",
      { digest: snap.digest, snapshot_ref: snap.ref, files: snap.files, bytes: snap.bytes, phase },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();
    await this.checkpoint(a, phase);
  }

  private async checkpoint(a: Attempt, wanted: string): Promise<void> {
    const from = a.record.phase;
    // A replayed step (e.g. update_record after a restart) never moves the phase backwards.
    const phase = PHASES.indexOf(wanted) < PHASES.indexOf(from) ? from : wanted;
    a.record.phase = phase;
    a.record.tool_definitions = { ...this.toolDefs };
    if (from !== phase)
      a.rep.emit(
        "session",
        "phase.changed",
        { from, to: phase },
        { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
      );
    a.record.attempt = a.n;
    const res = await this.client.checkpoint(
      this.cfg.taskId,
      a.record,
      a.version !== null ? { baseVersion: a.version } : {},
    );
    a.version = res.version;
    a.rep.emit(
      "session",
      "checkpoint.saved",
      {
        version: res.version,
        digest: res.digest,
        phase,
        artifacts: a.record.artifacts.length,
        side_effects: Object.keys(a.record.side_effects).length,
      },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();
    this.log(`attempt ${a.n}: checkpoint v${res.version} (${phase}) digest ${res.digest.slice(0, 12)}…`);
  }

  /** The last sandbox and snapshot the timeline knows of. */
  private async lastEnvironment(): Promise<{
    environmentId: string | null;
    snapshot: { digest: string; environmentId: string | null } | null;
  }> {
    let cursor: string | null = null;
    let environmentId: string | null = null;
    let snapshot: { digest: string; environmentId: string | null } | null = null;
    do {
      const page = await this.client.timeline(this.cfg.taskId, { cursor, limit: 1000 });
      for (const e of page.events) {
        if (e.type === "sandbox.created" && e.environment_id) environmentId = e.environment_id;
        if (e.type === "snapshot.saved" && typeof e.attrs.digest === "string")
          snapshot = { digest: e.attrs.digest, environmentId: e.environment_id };
      }
      cursor = page.next_cursor;
    } while (cursor);
    return { environmentId, snapshot };
  }

  private async restoreSnapshot(
    a: Attempt,
    snapshot: { digest: string; environmentId: string | null } | null,
  ): Promise<void> {
    if (!snapshot) {
      this.log(`attempt ${a.n}: no snapshot on the timeline; starting from an empty workspace`);
      return;
    }
    const restored = this.snapshots.restore(snapshot.digest, a.sandbox);
    if (!restored) {
      this.log(
        `attempt ${a.n}: snapshot ${snapshot.digest.slice(0, 12)}… is not in the store; starting from an empty workspace`,
      );
      return;
    }
    a.rep.emit(
      "environment",
      "snapshot.restored",
      {
        digest: restored.actualDigest,
        snapshot_ref: restored.ref,
        files: restored.files,
        ...(snapshot.environmentId ? { source_environment_id: snapshot.environmentId } : {}),
      },
      { actor: ORCHESTRATOR, environmentId: a.sandbox.environmentId },
    );
    await a.rep.flush();
    const note =
      restored.actualDigest === snapshot.digest
        ? "digest verified"
        : `DIGEST MISMATCH (recorded ${snapshot.digest.slice(0, 12)}…)`;
    this.log(
      `attempt ${a.n}: snapshot ${restored.actualDigest.slice(0, 12)}… restored (${restored.files.join(", ")}; ${note})`,
    );
  }

  /** True when the restored workspace holds exactly the checkpointed first half of report.md. */
  private draftIntact(a: Attempt): boolean {
    const documentSha = a.record.inputs[0]?.sha256;
    const file = a.sandbox.file("report.md");
    if (!documentSha || !fs.existsSync(file)) return false;
    const bytes = fs.readFileSync(file);
    const sha = sha256Hex(bytes);
    const checkpointed = a.record.artifacts.some((x) => x.sha256 === sha);
    return checkpointed && bytes.toString("utf8") === reportFirstHalf(this.cfg.taskId, documentSha);
  }

  /** At a crash point: exit hard (DEMO_CRASH_AT), or lose the sandbox (an interruption exercise's `interruptAt`). */
  private crashPoint(a: Attempt, point: CrashPoint): void {
    if (a.crashAt === point) this.crash(a, point);
    if (a.interruptAt === point) {
      this.log(`attempt ${a.n}: INTERRUPT at ${point}: sandbox ${a.sandbox.environmentId} lost`);
      a.sandbox.markLost();
      throw new SandboxLostError(a.sandbox.environmentId);
    }
  }

  /** A hard crash: nothing queued is sent, no interruption is reported. */
  private crash(a: Attempt, point: CrashPoint): never {
    this.log(`attempt ${a.n}: CRASH at ${point} (exit ${CRASH_EXIT_CODE}; nothing flushed)`);
    process.exit(CRASH_EXIT_CODE);
  }

  private async startRecords(): Promise<void> {
    if (this.cfg.recordsUrl) {
      this.recordsUrl = this.cfg.recordsUrl.replace(/\/+$/, "");
      return;
    }
    const service = await startRecordsService({
      port: this.cfg.recordsPort ?? 0,
      stateFile: `${this.cfg.workDir}/records-service.json`,
    });
    this.recordsUrl = service.url;
    this.closeRecords = service.close;
    this.log(`records service started in-process at ${service.url} (lookup: ${service.url}/lookup)`);
  }

  private async stopRecords(): Promise<void> {
    const close = this.closeRecords;
    this.closeRecords = null;
    if (close) await close().catch(() => {});
  }
}

function describeError(err: unknown): string {
  if (err instanceof CustodyApiError) return `${err.code} (HTTP ${err.status}): ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
