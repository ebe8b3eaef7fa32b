/**
 * Sandbox attempts: the fencing token of a task (docs/concepts.md#attempts-and-fencing: a write from an attempt
 * older than the task's current one is refused) and what happens to writes when an attempt ends.
 *
 * Every path that learns of an attempt calls {@link observeAttempt}: `sandbox.created` events, checkpoints, intents and
 * receipts (route or event). When the current attempt rises, or an attempt ends (`run.interrupted`, `run.stopped`,
 * `sandbox.destroyed`), {@link endAttempts} applies one rule whichever path got there first:
 * - every `in_flight` effect whose intent came from an ended attempt becomes `unknown` (request sent, no receipt);
 * - every mutating `tool.called` (`attrs.mutation === true`) of an ended attempt with no `tool.completed` /
 *   `tool.failed` for its call id becomes an effect whose outcome is `unknown` — unless it belongs to a declared effect
 *   (named by `attrs.side_effect` or `attrs.idempotency_key`, or the same tool with an intent from the same attempt),
 *   in which case that effect answers for it.
 * Decisions follow the attempt and the order the server received facts in, never the runtime's clock against the
 * server's (docs/concepts.md#receive-order).
 */
import { createHash } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { SideEffectStatus } from "@/db/schema/enums";
import { queryRows, type Db } from "@/db";
import { DomainError } from "../errors";
import { ATTEMPT_STEP } from "../limits";
import { SIDE_EFFECT_NAME } from "../names";
import type { Mover } from "./lifecycle/moves";
import { createOrphanCallEffect, endInFlight, markOrphanCallEffect } from "./lifecycle/statements";
import { mayLeave } from "./lifecycle/transitions";

/** Which attempts an end applies to. `all`: every attempt so far (an interruption that names none). */
export type AttemptScope = { through: number } | { before: number } | "all";

function scopeCondition(column: string, scope: AttemptScope): SQL {
  const col = sql.raw(column);
  if (scope === "all") return sql`true`;
  if ("through" in scope) return sql`(${col} is null or ${col} <= ${scope.through})`;
  return sql`(${col} is null or ${col} < ${scope.before})`;
}

/**
 * The refusal of an attempt more than {@link ATTEMPT_STEP} ahead of the task's current one (decision 0032): no single
 * report may fence a task out of reach.
 */
export function attemptTooFarAhead(attempt: number, current: number, path = "attempt"): DomainError {
  return new DomainError(
    "attempt_too_far_ahead",
    `${path} is ${attempt}, more than ${ATTEMPT_STEP} ahead of the task's current attempt ${current}: an attempt moves ahead by at most ${ATTEMPT_STEP}. Name attempt ${current + 1} for a new sandbox; an owner or responder can fence the task to a new attempt (POST /api/v1/tasks/{id}/fence).`,
    {
      attempt,
      current_attempt: current,
      max_attempt: current + ATTEMPT_STEP,
      fields: [{ path, message: `at most ${current + ATTEMPT_STEP}` }],
    },
  );
}

/**
 * Records that `attempt` exists. When it is higher than the task's current attempt (by at most {@link ATTEMPT_STEP}),
 * the current attempt rises and every older attempt ends ({@link endAttempts}). `by` names who reported the attempt (a
 * request or an event) and carries the audit entries of the effects that end with the older attempts.
 * @returns the task's current attempt afterwards and whether this call raised it; `current: null` when the task does
 *   not exist.
 * @throws DomainError attempt_too_far_ahead for a request naming an attempt too far ahead (an event naming one was
 *   rejected before it was stored; one that slips past in a race raises nothing).
 */
export async function observeAttempt(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  attempt: number,
  cause: string,
): Promise<{ current: number | null; raised: boolean }> {
  const tenantId = by.actor.tenantId;
  const raised = await queryRows<{ current_attempt: number }>(
    tx,
    sql`update tasks set current_attempt = ${attempt}, updated_at = now()
        where tenant_id = ${tenantId} and task_id = ${taskId} and current_attempt < ${attempt}
          and ${attempt} <= current_attempt + ${ATTEMPT_STEP}
        returning current_attempt`,
  );
  if (raised[0]) {
    await endAttempts(
      tx,
      by,
      taskId,
      { before: attempt },
      `${cause} (attempt ${attempt}) started before a receipt was recorded.`,
    );
    return { current: raised[0].current_attempt, raised: true };
  }
  const rows = await queryRows<{ current_attempt: number }>(
    tx,
    sql`select current_attempt from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  const current = rows[0]?.current_attempt ?? null;
  if (current !== null && attempt > current + ATTEMPT_STEP && by.cause === "request")
    throw attemptTooFarAhead(attempt, current);
  return { current, raised: false };
}

/**
 * Ends the attempts in `scope`: their in-flight writes become `unknown` with `reason`, and their mutating tool calls
 * without an outcome become unknown effects (transitions `attempt_ended`, `orphan_call_*`, audited on `by`). Guarded
 * updates and inserts that do nothing on conflict: safe to repeat.
 * @returns the names of effects that became unknown.
 */
export async function endAttempts(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  scope: AttemptScope,
  reason: string,
): Promise<string[]> {
  const moved = await endInFlight(tx, by, taskId, scopeCondition("intent_attempt", scope), reason);
  const orphans = await flagOrphanToolCalls(tx, by, taskId, scopeCondition("c.attempt", scope), null);
  return [...moved, ...orphans];
}

/**
 * True when the task's attempt `attempt` has ended as far as the server knows: a newer attempt exists, or the last
 * of `run.interrupted` / `run.stopped` / `sandbox.destroyed` / `run.resumed` received for it (or for no attempt in
 * particular) is an end, in the server's receive order — up to the event `atEvent` when given (what the server knew when
 * it received that event; within a batch, the batch's order).
 */
export async function attemptEnded(
  tx: Db,
  tenantId: string,
  taskId: string,
  attempt: number | null,
  atEvent?: string,
): Promise<boolean> {
  const rows = await queryRows<{ ended: boolean }>(
    tx,
    sql`select (
          ${attempt === null ? sql`false` : sql`${attempt} < t.current_attempt`}
          or coalesce((
            select e.type <> 'run.resumed' from events e
            where e.tenant_id = t.tenant_id and e.task_id = t.task_id and e.retention_class = 'fact'
              and e.type in ('run.interrupted', 'run.stopped', 'sandbox.destroyed', 'run.resumed')
              and ${attempt === null ? sql`true` : sql`(e.attempt is null or e.attempt = ${attempt})`}
              ${atEvent === undefined ? sql`` : sql`and e.seq <= (select x.seq from events x where x.tenant_id = t.tenant_id and x.event_id = ${atEvent})`}
            order by e.seq desc limit 1), false)
        ) as ended
        from tasks t where t.tenant_id = ${tenantId} and t.task_id = ${taskId}`,
  );
  return rows[0]?.ended === true;
}

/**
 * The effect name for a tool call that no declared effect answers for: `<tool>.<call id>`, reduced to the characters
 * effect names allow; a short digest is added when that changed anything (so two calls never share a name).
 */
export function toolCallEffectName(tool: string, callId: string): string {
  const raw = `${tool}.${callId}`;
  let name = raw.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "");
  if (name !== raw || name.length > 100 || !SIDE_EFFECT_NAME.test(name)) {
    const digest = createHash("sha256").update(raw).digest("hex").slice(0, 8);
    name = `${(name || "call").slice(0, 90)}-${digest}`;
  }
  return name;
}

/** The idempotency key the server gives an effect made from a tool call (the runtime gave none). */
export function toolCallIdempotencyKey(taskId: string, callId: string): string {
  return `tool-call:${createHash("sha256").update(`${taskId}\u0000${callId}`).digest("hex").slice(0, 40)}`;
}

type OpenCall = {
  event_id: string;
  attempt: number | null;
  tool: string | null;
  call_id: string;
  side_effect: string | null;
  idempotency_key: string | null;
  /** The declared effect this call belongs to, when one answers for it. */
  effect_name: string | null;
  effect_status: SideEffectStatus | null;
};

/**
 * Mutating tool calls without an outcome, among the calls matching `where` (or the one `callId`): each becomes an
 * `unknown` effect, or — when it belongs to a declared effect that never registered an intent for it — makes that effect
 * `unknown`. Calls pair with outcomes by call id, never by order.
 * @returns the names of effects that became unknown.
 */
export async function flagOrphanToolCalls(
  tx: Db,
  by: Mover<"request" | "event">,
  taskId: string,
  where: SQL,
  callId: string | null,
): Promise<string[]> {
  const tenantId = by.actor.tenantId;
  const calls = await queryRows<OpenCall>(
    tx,
    sql`select c.event_id, c.attempt, c.attrs ->> 'tool' as tool, c.attrs ->> 'call_id' as call_id,
               c.attrs ->> 'side_effect' as side_effect, c.attrs ->> 'idempotency_key' as idempotency_key,
               s.name as effect_name, s.status as effect_status
        from events c
        left join lateral (
          select s.name, s.status from side_effects s
          where s.tenant_id = c.tenant_id and s.task_id = c.task_id and s.origin <> 'tool_call'
            and (s.name = c.attrs ->> 'side_effect' or s.idempotency_key = c.attrs ->> 'idempotency_key'
                 or (s.tool = c.attrs ->> 'tool' and s.intent_attempt is not distinct from c.attempt and s.intent_at is not null))
          order by (s.name = c.attrs ->> 'side_effect') desc nulls last, (s.idempotency_key = c.attrs ->> 'idempotency_key') desc nulls last, s.name
          limit 1) s on true
        where c.tenant_id = ${tenantId} and c.task_id = ${taskId} and c.type = 'tool.called'
          and (c.attrs ->> 'mutation') = 'true' and coalesce(c.attrs ->> 'call_id', '') <> ''
          and ${callId === null ? sql`true` : sql`c.attrs ->> 'call_id' = ${callId}`}
          and ${where}
          and not exists (
            select 1 from events o
            where o.tenant_id = c.tenant_id and o.task_id = c.task_id and o.type in ('tool.completed', 'tool.failed')
              and o.attrs ->> 'call_id' = c.attrs ->> 'call_id')
        order by c.seq`,
  );
  const flagged: string[] = [];
  for (const c of calls) {
    const tool = c.tool && c.tool.trim() ? c.tool : "tool";
    const why = `Tool call ${c.call_id} (${tool}, attempt ${c.attempt ?? "unknown"}) was a write and its attempt ended with no outcome recorded.`;
    if (c.effect_name) {
      // The declared effect answers for the call: when it never got an intent, the write was made without one.
      if (c.effect_status && mayLeave("orphan_call_declared", c.effect_status))
        flagged.push(
          ...(await markOrphanCallEffect(
            tx,
            by,
            taskId,
            c.effect_name,
            c.effect_status,
            `${why} No intent was registered for it.`,
          )),
        );
      continue;
    }
    const name = toolCallEffectName(tool, c.call_id);
    flagged.push(
      ...(await createOrphanCallEffect(
        tx,
        by,
        {
          taskId,
          name,
          idempotencyKey: toolCallIdempotencyKey(taskId, c.call_id),
          tool,
          attempt: c.attempt,
          callId: c.call_id,
        },
        `${why} The runtime gave no idempotency key for it.`,
      )),
    );
  }
  return flagged;
}
