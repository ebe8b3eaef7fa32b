/**
 * `POST /api/v1/import/openai-agents/run-state?task_id=…` — import a serialized RunState of the OpenAI Agents SDK
 * (JavaScript or Python) into a task's custody (decision 0013). The state is read by
 * {@link parseRunState}; then, each through the path that already owns it:
 * - every executed tool output → a receipt: a `side_effect.intent` and a `side_effect.receipt` event for the call's
 *   effect (`<tool>.<call id>`, key from the task and call id), applied by the event path's side-effect rules — so a
 *   write the intent route would have refused becomes `unknown` with its receipt kept for the reconciler;
 * - every call with no output in a state that ended mid-turn → a mutating `tool.called` event, then the orphan-call rule
 *   ({@link flagOrphanToolCalls}) makes it an effect whose outcome is `unknown`;
 * - every pending approval → {@link requestApproval}, bound to the task's principal, the tool as action, the payload
 *   digest of tool + canonical arguments ({@link toolCallDigest}), the task's input digest, the current policy version,
 *   the agent that raised it and the agent version the caller names.
 * Events get ids made from the task and call id, so importing the same state again stores nothing new, and the
 * approval requests are found again by key and digest. A refused state writes nothing and quotes nothing.
 *
 * What one import may hold is bounded (decision 0034): at most `LIMITS.runStateCalls` tool calls and
 * `LIMITS.pendingApprovals` pending approvals, refused whole with a 422 naming the limit and the value. Everything is
 * checked and prepared before the first write, and the writes go in transactions of at most {@link IMPORT_BATCH_CALLS}
 * calls, so the embedded database's one connection is never held for the whole import (its other requests, the health
 * check among them, run between the batches). An import cut short by a failure can be sent again: its facts are
 * found again by their ids.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { appendAudit, sealAuditAfterCommit, withAuditSealed } from "../audit/append";
import { actorRef, authorize, type Actor } from "../authz";
import { applyApprovalDecision } from "../side-effects/lifecycle/statements";
import { canonicalDigest, sha256Hex } from "../crypto/canonical";
import { DomainError } from "../errors";
import { prepareFully, storeEvents, type PreparedEvent } from "../events/ingest";
import { approvalContext } from "../approvals/read";
import { approvalEvent, requestApproval } from "../approvals/requests";
import { sealDecisions } from "../approvals/seal";
import type { SigningKey } from "../crypto/signing";
import { flagOrphanToolCalls, toolCallEffectName, toolCallIdempotencyKey } from "../side-effects/attempts";
import { flushMoves, mover } from "../side-effects/lifecycle/moves";
import { LIMITS } from "../limits";
import { checkTaskId } from "../tasks/read";
import { withRetry } from "../tx";
import {
  parseRunState,
  RunStateImportError,
  toolCallDigest,
  type ParsedRunState,
  type RuntimeDecision,
} from "./openai-agents-run-state";
import type { SigningContext } from "../context";

export type RunStateImportResult = {
  task_id: string;
  sdk: ParsedRunState["sdk"];
  schema_version: string;
  /** Approval request ids, one per pending approval (the same ids on a repeated import). */
  approvals: string[];
  /**
   * The decisions the state's own `context.approvals` recorded for its pending calls (decision 0032): `rejected` —
   * the request was rejected by the import; `approved` — the runtime's record, shown on the request, which stays pending
   * (it is not an approval here).
   */
  runtime_decisions: Array<{ approval_id: string; call_id: string; decision: RuntimeDecision }>;
  /** Side-effect names of the executed tool calls. */
  receipts: string[];
  /** Side-effect names of the calls whose outcome is unknown. */
  unknown: string[];
  warnings: string[];
};

/** `agent_version` query parameter: the version of the agent that made the state (bound into approvals). */
export function readAgentVersion(value: string | null): string | null {
  if (value === null || value === "") return null;
  if (value.length > 200 || !/^[\x21-\x7e]+$/.test(value)) {
    throw new DomainError("validation_failed", "agent_version must be 1–200 visible ASCII characters.", {
      fields: [{ path: "agent_version", message: "1–200 visible ASCII characters" }],
    });
  }
  return value;
}

/** Maps a reader refusal to the API's 422 (the problem named in `details.problem`, the value's path in `details.fields`). */
function refusal(err: RunStateImportError): DomainError {
  const versionProblem =
    err.problem === "unsupported_schema_version" ||
    err.problem === "schema_version_missing" ||
    err.problem === "schema_version_not_string";
  return new DomainError(versionProblem ? "unsupported_schema_version" : "invalid_run_state", err.message, {
    problem: err.problem,
    ...(err.path ? { fields: [{ path: err.path, message: err.message }] } : {}),
  });
}

/** Tool calls written per transaction of an import (one intent and one receipt event per executed call). */
export const IMPORT_BATCH_CALLS = 50;

/** Splits a list into runs of at most `size` items, in order. */
function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Refuses a state that holds more than one import may (422 `invalid_run_state`, naming the limit and the value). */
function checkCounts(parsed: ParsedRunState): void {
  const calls = parsed.receipts.length + parsed.unknown.length + parsed.approvals.length;
  const over = (problem: "too_many_calls" | "too_many_approvals", what: string, limit: number, value: number) =>
    new DomainError(
      "invalid_run_state",
      `The RunState holds ${value.toLocaleString("en-US")} ${what}; one import may hold at most ${limit.toLocaleString("en-US")}. Import it in parts, or resume the run and import a later state.`,
      { problem, limit, value },
    );
  if (calls > LIMITS.runStateCalls.max) throw over("too_many_calls", "tool calls", LIMITS.runStateCalls.max, calls);
  if (parsed.approvals.length > LIMITS.pendingApprovals.max)
    throw over("too_many_approvals", "pending approvals", LIMITS.pendingApprovals.max, parsed.approvals.length);
}

/** Event id for one fact of one call of the task: stable, so a repeated import is a duplicate. */
function eventId(taskId: string, callId: string, fact: "1-intent" | "2-receipt" | "called"): string {
  return `import:oai:${sha256Hex(`${taskId}\u0000${callId}`).slice(0, 32)}:${fact}`;
}

/**
 * Imports a RunState into a task.
 * @param body the state: a JSON object, or a JSON string holding one.
 * @param opts.agentVersion bound into the approval requests (null when the caller does not say).
 * @returns the ids and names it made or found again, and the reader's warnings (plus receipts the side-effect rules
 *   did not apply, with why).
 * @throws DomainError forbidden (viewer, approver), not_found (task, also another tenant's), invalid_run_state /
 *   unsupported_schema_version (422, `details.problem`; nothing stored), validation_failed (a payload that cannot be
 *   stored).
 */
export async function importRunState(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, body, ...opts }: { taskId: string; body: unknown; agentVersion?: string | null },
): Promise<RunStateImportResult> {
  authorize(actor, "imports.run_state");
  checkTaskId(taskId);
  let parsed: ParsedRunState;
  try {
    parsed = parseRunState(body);
  } catch (err) {
    if (err instanceof RunStateImportError) throw refusal(err);
    throw err;
  }
  checkCounts(parsed);
  const tenantId = actor.tenantId;
  const warnings = [...parsed.warnings];
  const source = `import:${parsed.sdk}`;

  const [task] = await queryRows<{ current_attempt: number }>(
    db,
    sql`select current_attempt from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  if (!task)
    throw new DomainError(
      "not_found",
      `Task ${taskId} was not found: a task exists once its runtime has written a checkpoint (PUT /api/v1/tasks/{id}) or reported an event. Write the task's first checkpoint, then import the RunState again.`,
    );
  const attempt = Math.max(task.current_attempt, 1);
  const now = new Date().toISOString();

  // Every event is prepared (and could be refused) before anything is written.
  const events: Array<{ input: Record<string, unknown>; callId: string; effect: string }> = [];
  const receipts = parsed.receipts.map((r) => ({
    ...r,
    effect: toolCallEffectName(r.tool, r.callId),
    key: toolCallIdempotencyKey(taskId, r.callId),
  }));
  for (const r of receipts) {
    const common = { task_id: taskId, plane: "tools", occurred_at: now, attempt, actor: source };
    const attrs = { name: r.effect, idempotency_key: r.key, tool: r.tool, call_id: r.callId };
    events.push({
      callId: r.callId,
      effect: r.effect,
      input: {
        ...common,
        id: eventId(taskId, r.callId, "1-intent"),
        type: "side_effect.intent",
        attrs: { ...attrs, action: r.tool, mutation: true, payload_digest: toolCallDigest(r.tool, r.arguments) },
      },
    });
    events.push({
      callId: r.callId,
      effect: r.effect,
      input: {
        ...common,
        id: eventId(taskId, r.callId, "2-receipt"),
        type: "side_effect.receipt",
        attrs: {
          ...attrs,
          external_operation_id: `openai-agents:call:${r.callId}`.slice(0, 500),
          result_digest: canonicalDigest(r.output ?? null),
          completed_at: now,
        },
      },
    });
  }
  const unknown = parsed.unknown.map((u) => ({ ...u, effect: toolCallEffectName(u.tool, u.callId) }));
  for (const u of unknown) {
    events.push({
      callId: u.callId,
      effect: u.effect,
      input: {
        id: eventId(taskId, u.callId, "called"),
        task_id: taskId,
        plane: "tools",
        type: "tool.called",
        occurred_at: now,
        actor: source,
        attrs: {
          tool: u.tool,
          call_id: u.callId,
          mutation: true,
          payload_digest: toolCallDigest(u.tool, u.arguments),
          source: "openai-agents-run-state",
        },
      },
    });
  }
  const prepared: PreparedEvent[] = [];
  for (const e of events) {
    const p = prepareFully(e.input);
    if ("status" in p) {
      throw new DomainError(
        "invalid_run_state",
        `A tool call of the state cannot be recorded (${p.error.code}); nothing was imported.`,
        { problem: "unrecordable_call" },
      );
    }
    prepared.push(p);
  }
  const approvals = parsed.approvals.map((a) => ({
    ...a,
    effect: toolCallEffectName(a.tool, a.callId),
    key: toolCallIdempotencyKey(taskId, a.callId),
    digest: toolCallDigest(a.tool, a.arguments),
  }));

  // Facts already imported are not sent again (a repeated import is a no-op; their times would differ), also when
  // retention has dropped them since: `event_ids` keeps every id stored (decision 0054).
  const known = new Set<string>();
  for (const part of chunks(prepared, IMPORT_BATCH_CALLS * 2)) {
    const rows = await queryRows<{ event_id: string }>(
      db,
      sql`select event_id from event_ids where tenant_id = ${tenantId} and event_id in (${sql.join(
        part.map((p) => sql`${p.id}`),
        sql`, `,
      )})`,
    );
    for (const r of rows) known.add(r.event_id);
  }
  const fresh = prepared.filter((p) => !known.has(p.id));
  // Bounded transactions (an intent and its receipt stay in one: they are adjacent and the batch size is even).
  for (const part of chunks(fresh, IMPORT_BATCH_CALLS * 2)) {
    const outcome = await withAuditSealed(db, tenantId, () => storeEvents(db, actor, part, key));
    for (const p of part) {
      const note = outcome.get(p.id)?.effect;
      if (note && !note.applied && p.type === "side_effect.receipt") {
        warnings.push(
          `The receipt of ${note.name} was not applied (${note.code ?? "refused"}): ${note.message ?? ""}`.trim(),
        );
      } else if (note && !note.applied && p.type === "side_effect.intent") {
        warnings.push(`The reported write ${note.name} was not taken as sent (${note.code ?? "refused"}).`);
      }
    }
  }

  // The calls that become unknown effects, in bounded transactions too (audited as moved by the importer, sealed after
  // each commit); the approval requests (at most LIMITS.pendingApprovals) and the import's audit entry in the last.
  const unknownParts = chunks(unknown, IMPORT_BATCH_CALLS);
  let newUnknown = 0;
  for (const part of unknownParts.slice(0, -1)) {
    newUnknown += await withRetry(() =>
      db.transaction(async (tx) => {
        let n = 0;
        const by = mover(actor, "request");
        for (const u of part) n += (await flagOrphanToolCalls(tx, by, taskId, sql`true`, u.callId)).length;
        await flushMoves(tx, by);
        return n;
      }),
    );
    await sealAuditAfterCommit(db, tenantId);
  }
  const lastUnknown = unknownParts.at(-1) ?? [];
  const created = await withRetry(() =>
    db.transaction(async (tx) => {
      let flagged = newUnknown;
      const by = mover(actor, "request");
      for (const u of lastUnknown) flagged += (await flagOrphanToolCalls(tx, by, taskId, sql`true`, u.callId)).length;
      await flushMoves(tx, by);
      const ids: string[] = [];
      const decisions: RunStateImportResult["runtime_decisions"] = [];
      let newRequests = 0;
      if (approvals.length) {
        const ctx = await approvalContext(tx, tenantId, taskId);
        for (const a of approvals) {
          const r = await requestApproval(tx, {
            tenantId,
            taskId,
            sideEffect: a.effect,
            idempotencyKey: a.key,
            principal: ctx.principal,
            action: a.tool,
            tool: a.tool,
            payload: { tool: a.tool, arguments: a.arguments ?? null },
            payloadDigest: a.digest,
            inputDigest: ctx.input_digest,
            policyVersion: ctx.policy_version,
            agent: a.agent,
            agentVersion: opts.agentVersion ?? null,
            requestedBy: actor,
            providerRequestId: a.providerRequestId ?? null,
            origin: "import",
            callId: a.callId,
          });
          ids.push(r.id);
          if (r.created) newRequests += 1;
          if (a.runtimeDecision) {
            const decided = await keepRuntimeDecision(tx, key, actor, r.id, a.runtimeDecision, a.callId);
            if (decided) decisions.push(decided);
          }
        }
      }
      if (fresh.length || flagged || newRequests) {
        await appendAudit(tx, actor, {
          action: "run_state.imported",
          target: `task:${taskId}`,
          details: {
            sdk: parsed.sdk,
            schema_version: parsed.schemaVersion,
            approvals_created: newRequests,
            receipts: receipts.length,
            unknown: unknown.length,
            events_stored: fresh.length,
          },
        });
      }
      return { ids, decisions };
    }),
  );
  await sealAuditAfterCommit(db, tenantId);

  return {
    task_id: taskId,
    sdk: parsed.sdk,
    schema_version: parsed.schemaVersion,
    approvals: created.ids,
    runtime_decisions: created.decisions,
    receipts: receipts.map((r) => r.effect),
    unknown: unknown.map((u) => u.effect),
    warnings,
  };
}

/**
 * Keeps what the state recorded for one pending call on its approval request (decision 0032): the mark
 * (`runtime_decision`) always; a recorded rejection also rejects a request nobody decided yet — one guarded statement,
 * audited `approval.decided` (by the importer, `recorded_by: "runtime"`), with its session-lane event and its side
 * effect's move, as a person's rejection is. A recorded approval decides nothing: only an approver here approves.
 * @returns the decision kept, or null when the request carried it already (a repeated import).
 */
async function keepRuntimeDecision(
  tx: Db,
  key: SigningKey,
  actor: Actor,
  approvalId: string,
  decision: RuntimeDecision,
  callId: string,
): Promise<RunStateImportResult["runtime_decisions"][number] | null> {
  const tenantId = actor.tenantId;
  const by = actorRef(actor);
  const reason = "The run state recorded a rejection of this call (its context.approvals); imported as rejected.";
  const [row] = await queryRows<{ task_id: string; side_effect: string; idempotency_key: string; rejected: boolean }>(
    tx,
    sql`update approval_requests
        set runtime_decision = ${decision},
            decision = case when ${decision} = 'rejected' and decision is null then 'reject' else decision end,
            reason = case when ${decision} = 'rejected' and decision is null then ${reason} else reason end,
            decided_by_id = case when ${decision} = 'rejected' and decision is null then ${by.id} else decided_by_id end,
            decided_by = case when ${decision} = 'rejected' and decision is null then ${`${by.label} (run state)`} else decided_by end,
            decided_at = case when ${decision} = 'rejected' and decision is null then now() else decided_at end
        where tenant_id = ${tenantId} and id = ${approvalId}::uuid and superseded_by is null
          and runtime_decision is distinct from ${decision}
        returning task_id, side_effect, idempotency_key, (decision = 'reject' and decided_at = now()) as rejected`,
  );
  if (!row) return null;
  if (row.rejected) {
    // The rejection carries the server's seal, as a person's decision does (decision 0036).
    await sealDecisions(tx, key, tenantId, [approvalId]);
    const audit = await appendAudit(tx, actor, {
      action: "approval.decided",
      target: `approval:${approvalId}`,
      details: {
        task_id: row.task_id,
        side_effect: row.side_effect,
        decision: "reject",
        reason,
        recorded_by: "runtime",
      },
    });
    await approvalEvent(tx, tenantId, row.task_id, approvalId, "approval.decided", by.label, {
      side_effect: row.side_effect,
      decision: "reject",
      reason,
      recorded_by: "runtime",
      audit_seq: audit.seq,
    });
    await applyApprovalDecision(tx, {
      tenantId,
      taskId: row.task_id,
      name: row.side_effect,
      idempotencyKey: row.idempotency_key,
      decision: "reject",
      reason: `Rejected in the imported run state: ${reason}`,
    });
  }
  return { approval_id: approvalId, call_id: callId, decision };
}
