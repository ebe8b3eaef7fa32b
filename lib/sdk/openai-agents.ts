/**
 * Custody for `@openai/agents` runs whose tools need a person's approval
 * (docs/decisions/0013-openai-agents-run-state-import.md, docs/concepts.md#approvals). Node only (node:crypto, the
 * SDK); talks to Run Custody through {@link CustodyClient}.
 *
 * {@link runWithCustodyApprovals} runs an agent with the SDK's own loop. When the run pauses on `needsApproval` tools:
 * 1. the paused `RunState` is serialized and stored as a checkpoint artifact (the runtime's object store, sha256);
 * 2. each pending call posts its intent with `requires_approval` (payload digest of tool name + canonical arguments,
 *    RFC 8785; the arguments for the approver to read; the agent and its version): the server creates one approval
 *    request and answers `403 approval_required`;
 * 3. the approval is polled through the API until an approver decides; `approved` → the intent is posted again and
 *    answers `go` (the approval is used once), then `state.approve(item)`; `rejected` → `state.reject(item, {message})`;
 * 4. the run continues with `run(agent, state)`.
 * A tool that writes wraps its write in {@link CustodyApprovals.write}: with the `go` of its call it makes the write and
 * posts the receipt; with a `replay` (the write already completed) it returns the stored receipt and writes nothing.
 * A write that fails cleanly throws {@link NotAppliedError}: the helper posts a `not_applied` receipt, so the same key
 * may go again without a person. A call the server finds to be a second write of a payload another effect of the task
 * completed (`409 duplicate_payload`, e.g. the same call re-asked under a new call id) is answered from that effect's
 * receipt, without writing; give the binding a `repeats` to write the same payload again on purpose.
 */
import { createHash } from "node:crypto";
import { run, RunState, type Agent, type RunToolApprovalItem } from "@openai/agents";

/** Any agent (the SDK's own generic default). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyAgent = Agent<any, any>;
import canonicalize from "canonicalize";
import { CustodyApiError, type ApprovalAnswer, type CustodyClient } from "./runtime-client";
import type { Receipt } from "@/lib/contract/api";

/** Media type of a stored RunState artifact. */
export const RUN_STATE_MEDIA_TYPE = "application/vnd.openai-agents.run-state+json";

/** sha256 hex of UTF-8 text. */
export function sha256Text(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Payload digest of a tool call: sha256 hex of the RFC 8785 JSON of `{"tool", "arguments"}` (the server's
 * `toolCallDigest`, so an imported state and a live run bind the same approval).
 */
export function toolPayloadDigest(tool: string, args: unknown): string {
  const text = canonicalize({ tool, arguments: args ?? null });
  if (text === undefined) throw new Error(`arguments of ${tool} have no canonical JSON form`);
  return sha256Text(text);
}

/** The arguments of an approval item, parsed from their JSON text when they are JSON. */
export function itemArguments(item: RunToolApprovalItem): unknown {
  const raw = item.arguments;
  if (typeof raw !== "string") return raw ?? null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** The call id of an approval item (hosted calls: the provider's request id). */
export function itemCallId(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { callId?: string; id?: string; providerData?: { id?: string } };
  return raw.callId ?? raw.providerData?.id ?? raw.id ?? "";
}

/**
 * The side effect a tool call writes under: its name in the task and its idempotency key; `repeats` names an earlier
 * effect of the task with the same payload that this call deliberately writes again.
 */
export type EffectBinding = { name: string; idempotencyKey: string; action: string; repeats?: string };

/**
 * Thrown by a write that the tool owner knows failed with nothing applied (a declined card, a validation error): the
 * helper reports it as a `not_applied` receipt with this message, then rethrows it.
 */
export class NotAppliedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotAppliedError";
  }
}

export type CustodyApprovalOptions = {
  client: CustodyClient;
  taskId: string;
  /** The sandbox attempt running the agent. */
  attempt: number;
  /** The agent's version: an approval given under one version is not reused under another. */
  agentVersion?: string;
  /**
   * The effect a call writes under. Default: `<tool>.<call id>` with a key from the task and call id. Give a stable
   * binding (e.g. per task and tool) when a run resumed in a new attempt re-asks the same call under a new call id.
   */
  effectFor?: (tool: string, callId: string, args: unknown) => EffectBinding;
  /** Stores the serialized state in the runtime's object store; returns its reference (e.g. `obj://…`). */
  storeState: (text: string, sha256: string) => Promise<string>;
  /** Adds the stored state to the task record and checkpoints it. */
  checkpointState: (artifact: { ref: string; sha256: string; size: number; media_type: string }) => Promise<void>;
  /** Called with each paused state before the decisions are awaited (e.g. to stop here and resume elsewhere). */
  onPaused?: (state: RunState<unknown, Agent<unknown, "text">>, pending: RunToolApprovalItem[]) => Promise<void> | void;
  /** Poll interval of an approval (default 2000 ms). */
  pollMs?: number;
  /** Give up waiting for a decision after this long (default: wait forever). */
  timeoutMs?: number;
  log?: (line: string) => void;
};

type Grant = { binding: EffectBinding; digest: string; decision: "go" | "replay"; receipt?: Receipt };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One helper per agent run: the approvals it waited for and the goes it holds, by call id. */
export class CustodyApprovals {
  private readonly grants = new Map<string, Grant>();
  private readonly log: (line: string) => void;

  constructor(private readonly opts: CustodyApprovalOptions) {
    this.log = opts.log ?? (() => {});
  }

  /** The binding of a call (the configured one, or `<tool>.<call id>`). */
  bindingFor(tool: string, callId: string, args: unknown): EffectBinding {
    if (this.opts.effectFor) return this.opts.effectFor(tool, callId, args);
    const safe = `${tool}.${callId}`.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100);
    return {
      name: safe,
      idempotencyKey: `oai:${sha256Text(`${this.opts.taskId}\u0000${callId}`).slice(0, 40)}`,
      action: tool,
    };
  }

  /**
   * Waits for a person's decision on one pending call.
   * @returns `approve` (the intent got its `go`, or `replay`: already written) or `reject` with the approver's reason.
   * @throws CustodyApiError approval_mismatch (another payload is bound under this key), others from the API; Error on timeout.
   */
  async decide(item: RunToolApprovalItem): Promise<{ decision: "approve" } | { decision: "reject"; message: string }> {
    const tool = item.name ?? item.toolName ?? "tool";
    const callId = itemCallId(item);
    const args = itemArguments(item);
    const binding = this.bindingFor(tool, callId, args);
    const digest = toolPayloadDigest(tool, args);
    const started = Date.now();
    let lastStatus = "";
    let lastIntent = 0;
    for (;;) {
      if (Date.now() - lastIntent > 30_000 || lastStatus === "approved") {
        lastIntent = Date.now();
        try {
          const out = await this.opts.client.intent(this.opts.taskId, binding.name, {
            idempotency_key: binding.idempotencyKey,
            payload_digest: digest,
            action: binding.action,
            mutation: true,
            tool,
            attempt: this.opts.attempt,
            requires_approval: true,
            payload: args,
            agent: item.agent?.name,
            ...(this.opts.agentVersion ? { agent_version: this.opts.agentVersion } : {}),
            ...(binding.repeats ? { repeats: binding.repeats } : {}),
          });
          this.grants.set(callId, {
            binding,
            digest,
            decision: out.decision,
            ...(out.decision === "replay" ? { receipt: out.receipt } : {}),
          });
          this.log(
            `${binding.name}: intent → ${out.decision}${out.decision === "go" ? " (approved; the approval is used for this one write)" : " (already written)"}`,
          );
          return { decision: "approve" };
        } catch (err) {
          if (!(err instanceof CustodyApiError)) throw err;
          if (err.code === "approval_rejected") return { decision: "reject", message: rejection(err.message) };
          const duplicate = completedDuplicate(err);
          if (duplicate) {
            // The same payload was already written under another effect: use its receipt, write nothing.
            this.grants.set(callId, { binding, digest, decision: "replay", receipt: duplicate.receipt });
            this.log(`${binding.name}: ${duplicate.side_effect} already wrote this payload; using its receipt`);
            return { decision: "approve" };
          }
          if (err.code !== "approval_required") throw err;
          const id = (err.details as { approval_id?: string } | undefined)?.approval_id;
          if (!id) throw err;
          this.approvalId = id;
        }
      }
      let approval: ApprovalAnswer = await this.opts.client.getApproval(this.approvalId!);
      // Re-approving a stale approval makes a new request that supersedes it: follow the chain.
      for (let hops = 0; typeof approval.superseded_by === "string" && approval.superseded_by && hops < 20; hops++) {
        this.approvalId = approval.superseded_by;
        approval = await this.opts.client.getApproval(this.approvalId);
      }
      if (approval.status !== lastStatus) {
        lastStatus = approval.status;
        const why = approval.stale_reasons?.length ? ` (${approval.stale_reasons.join(", ")})` : "";
        this.log(
          `${binding.name}: approval ${approval.id} is ${approval.status}${why}${approval.status === "approved" ? "" : "; waiting for an approver"}`,
        );
      }
      if (approval.status === "rejected")
        return { decision: "reject", message: rejection(approval.decision?.reason ?? "") };
      if (approval.status === "approved") continue;
      if (this.opts.timeoutMs !== undefined && Date.now() - started > this.opts.timeoutMs) {
        throw new Error(`no decision on approval ${approval.id} within ${this.opts.timeoutMs} ms`);
      }
      await sleep(this.opts.pollMs ?? 2000);
    }
  }

  private approvalId: string | null = null;

  /**
   * Makes the write of an approved call once: with the call's `go`, runs `perform` and posts its receipt; with a
   * `replay`, returns the stored receipt without writing.
   * @param callId the call id (`details.toolCall.callId` in a tool's `execute`).
   * @throws Error when the call holds no go (it was never approved through {@link decide}); the
   *   {@link NotAppliedError} `perform` threw, after its `not_applied` receipt was posted.
   */
  async write(
    callId: string,
    perform: () => Promise<{ external_operation_id: string; result_digest: string }>,
  ): Promise<{ replayed: boolean; receipt: Receipt }> {
    const grant = this.grants.get(callId);
    if (!grant) throw new Error(`call ${callId} has no approved intent: refusing to write`);
    if (grant.decision === "replay") return { replayed: true, receipt: grant.receipt! };
    this.grants.delete(callId);
    let done: { external_operation_id: string; result_digest: string };
    try {
      done = await perform();
    } catch (err) {
      if (err instanceof NotAppliedError) {
        await this.opts.client.receipt(this.opts.taskId, grant.binding.name, {
          idempotency_key: grant.binding.idempotencyKey,
          outcome: "not_applied",
          error: err.message,
          attempt: this.opts.attempt,
        });
      }
      throw err;
    }
    const completed_at = new Date().toISOString();
    await this.opts.client.receipt(this.opts.taskId, grant.binding.name, {
      idempotency_key: grant.binding.idempotencyKey,
      external_operation_id: done.external_operation_id,
      result_digest: done.result_digest,
      completed_at,
      attempt: this.opts.attempt,
    });
    return { replayed: false, receipt: { ...done, completed_at } };
  }

  /**
   * Handles one pause: stores and checkpoints the state, waits for every decision, applies them to the state.
   * @returns the state, ready for `run(agent, state)`.
   */
  async settle<TContext, TAgent extends AnyAgent>(
    state: RunState<TContext, TAgent>,
    pending: RunToolApprovalItem[],
  ): Promise<RunState<TContext, TAgent>> {
    const text = state.toString();
    const sha256 = sha256Text(text);
    const ref = await this.opts.storeState(text, sha256);
    await this.opts.checkpointState({ ref, sha256, size: Buffer.byteLength(text), media_type: RUN_STATE_MEDIA_TYPE });
    this.log(`run paused on ${pending.length} approval(s); state stored as ${ref} (sha256 ${sha256.slice(0, 12)}…)`);
    await this.opts.onPaused?.(state as unknown as RunState<unknown, Agent<unknown, "text">>, pending);
    for (const item of pending) {
      const d = await this.decide(item);
      if (d.decision === "approve") state.approve(item);
      else state.reject(item, { message: d.message });
    }
    return state;
  }
}

/** The completed effect a `409 duplicate_payload` names, with its receipt; null for any other error. */
function completedDuplicate(err: CustodyApiError): { side_effect: string; receipt: Receipt } | null {
  if (err.code !== "duplicate_payload") return null;
  const d = err.details as { side_effect?: unknown; status?: unknown; receipt?: Receipt } | undefined;
  if (d?.status !== "completed" || !d.receipt || typeof d.side_effect !== "string") return null;
  return { side_effect: d.side_effect, receipt: d.receipt };
}

function rejection(reason: string): string {
  return reason ? `An approver rejected this call: ${reason}` : "An approver rejected this call.";
}

/**
 * Runs `agent` on `input` (text, or a RunState restored with `RunState.fromString`) until it finishes, settling every
 * approval pause through custody.
 * @returns the SDK's final result.
 */
export async function runWithCustodyApprovals<TAgent extends AnyAgent>(
  agent: TAgent,
  input: string | RunState<unknown, TAgent>,
  custody: CustodyApprovals,
  runOptions: { maxTurns?: number } = {},
) {
  let result = await run(agent, input as RunState<unknown, TAgent>, runOptions);
  for (let pauses = 0; result.interruptions && result.interruptions.length; pauses++) {
    if (pauses > 50) throw new Error("the run paused for approval more than 50 times");
    const state = await custody.settle(result.state as RunState<unknown, TAgent>, result.interruptions);
    result = await run(agent, state, runOptions);
  }
  return result;
}

/** Restores a stored RunState for `agent` (the SDK checks its schema version). */
export function restoreRunState<TAgent extends AnyAgent>(
  agent: TAgent,
  text: string,
): Promise<RunState<unknown, TAgent>> {
  return RunState.fromString(agent, text) as Promise<RunState<unknown, TAgent>>;
}
