/**
 * Gate asks: the evidence that a runtime is alive and polling the resume gate (docs/concepts.md#gate-asks). Each time a
 * runtime (an API key) asks `POST /api/v1/tasks/{id}/resume`, the count and time of asks for the task's current sandbox
 * attempt move on: counted by the gate's facts statement when the attempt's row exists (the usual poll: no statement of
 * its own unless the verdict changed), otherwise in one upsert. A person's page view evaluates the gate too (the task
 * page server-renders the verdict and the browser refreshes it with the person's session); those are not the runtime
 * asking and are not counted. No audit row: an ask decides nothing, and a runtime polling every few seconds would flood
 * the chain.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { GateAskView, GateVerdict } from "@/lib/contract/api";
import type { Actor } from "../authz";
import { gateStopped } from "../notifications/facts";
import { enqueueNotifications } from "../notifications/outbox";

/** An ask the gate's facts statement already counted (`readGateFacts` with `countAsk`): the row's verdict before it. */
export type AskCounted = { previousVerdict: GateVerdict["verdict"] };

/**
 * Records one ask of the gate when `actor` is a runtime API key, then hands back `verdict` unchanged (so the
 * caller can `return recordGateAsk(…, evaluateGate(facts))`). Asks by people and system actors record nothing.
 * @param task the task as the gate saw it: its id and current sandbox attempt (0 before any sandbox).
 * @param counted when the facts statement already counted this ask on the attempt's row: only a changed verdict is
 *   written then (between the two statements a reader may see the new count with the previous verdict).
 * @returns `verdict`, the same object.
 */
export async function recordGateAsk(
  db: Db,
  actor: Actor,
  task: { task_id: string; current_attempt: number },
  verdict: GateVerdict,
  counted: AskCounted | null = null,
): Promise<GateVerdict> {
  if (actor.kind !== "api_key") return verdict;
  // A stop is queued once per task, attempt and set of reasons (the delivery id is derived from them).
  if (verdict.verdict === "stop" && counted?.previousVerdict !== "stop") {
    await enqueueNotifications(
      db,
      actor.tenantId,
      gateStopped(
        task.task_id,
        task.current_attempt,
        verdict.reasons.map((r) => r.code),
      ),
    );
  }
  if (counted) {
    if (counted.previousVerdict !== verdict.verdict) {
      await db.execute(sql`
        update gate_asks set last_verdict = ${verdict.verdict}
        where tenant_id = ${actor.tenantId} and task_id = ${task.task_id} and attempt = ${task.current_attempt}`);
    }
    return verdict;
  }
  await db.execute(sql`
    insert into gate_asks (tenant_id, task_id, attempt, asks, first_asked_at, last_asked_at, last_verdict)
    values (${actor.tenantId}, ${task.task_id}, ${task.current_attempt}, 1, now(), now(), ${verdict.verdict})
    on conflict (tenant_id, task_id, attempt) do update
      set asks = gate_asks.asks + 1,
          last_asked_at = greatest(gate_asks.last_asked_at, excluded.last_asked_at),
          last_verdict = excluded.last_verdict`);
  return verdict;
}

/**
 * The runtime's gate asks of one task, one entry per attempt in attempt order. The caller has authorized the
 * read and scoped it to the actor's tenant.
 * @returns `[{attempt, asks, first_asked_at, last_asked_at, last_verdict, seconds_since_last_ask}]`; times are ISO
 *   8601 UTC; `seconds_since_last_ask` is measured on the server's clock when read (so a browser whose clock is off
 *   still shows the right age).
 */
export async function listGateAsks(db: Db, tenantId: string, taskId: string): Promise<GateAskView[]> {
  const rows = await queryRows<{
    attempt: number;
    asks: number;
    first_asked_at: string;
    last_asked_at: string;
    last_verdict: GateAskView["last_verdict"];
    seconds_since_last_ask: number | string;
  }>(
    db,
    sql`select attempt, asks, ${isoUtc("first_asked_at")} as first_asked_at, ${isoUtc("last_asked_at")} as last_asked_at,
               last_verdict, greatest(0, extract(epoch from (now() - last_asked_at)))::float8 as seconds_since_last_ask
        from gate_asks where tenant_id = ${tenantId} and task_id = ${taskId}
        order by attempt`,
  );
  return rows.map((r) => ({ ...r, asks: Number(r.asks), seconds_since_last_ask: Number(r.seconds_since_last_ask) }));
}
