/**
 * Storing read spans through the events path (decision 0039): each span's events (./spans.ts) are checked and stored
 * by the same code as `POST /api/v1/events` (prepareFully, ingestEvents), so dedupe by event id, attempts, orphaned
 * mutating calls, redaction, receive order and the boundary limits of decision 0028 hold here exactly as there. What
 * this adds: the policy's tool list marks mutating tools, a tool call already reported by another span (a model's
 * output, then the tool's own span) is reported once, and a span is answered as a whole — rejected, with the first
 * reason, when any of its events is.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { authorize } from "../authz";
import type { SigningContext } from "../context";
import { ingestEvents, MAX_EVENTS_PER_BATCH, prepareFully } from "../events/ingest";
import { canonicalName } from "../names";
import { policyDocumentCached } from "../policies/egress";
import { spanEvents, type EventInput, type ReadSpan } from "./spans";

/** A span read, or one its reader rejected (with why). */
export type SpanInput = ReadSpan | { label: string; message: string };

/** Why a span was not stored, by its position in the request. */
export type SpanRejection = { index: number; label: string; message: string };

/**
 * Canonical names of the tools the active policy marks `mutation: true` (empty when no policy is active).
 * Source: docs/concepts.md#tool-calls; the policy's tool list (decision 0033).
 */
export async function mutatingTools(db: Db, tenantId: string): Promise<Set<string>> {
  const [ref] = await queryRows<{ version: number; digest: string }>(
    db,
    sql`select version, digest from policy_versions where tenant_id = ${tenantId} and activated_at is not null
        order by activated_at desc limit 1`,
  );
  if (!ref) return new Set();
  const { document } = await policyDocumentCached(db, tenantId, ref);
  return new Set((document?.tools ?? []).filter((t) => t.mutation).map((t) => canonicalName(t.name)));
}

/**
 * Stores the spans of one request, in request order (the receive order of their events).
 * @param spans read spans, or rejections by the reader, in request order.
 * @returns how many spans were stored (or found stored before: a resend stores nothing twice), and the rejected ones
 *   with their position and the first reason.
 * @throws DomainError forbidden (not a runtime key).
 */
export async function storeSpans(
  ctx: SigningContext,
  spans: SpanInput[],
): Promise<{ accepted: number; rejected: SpanRejection[] }> {
  authorize(ctx.actor, "events.write");
  const { db, actor } = ctx;
  const rejected = new Map<number, SpanRejection>();
  const units: Array<{ index: number; label: string; events: EventInput[] }> = [];
  const mutating = spans.some((s) => "meaning" in s) ? await mutatingTools(db, actor.tenantId) : new Set<string>();
  spans.forEach((s, index) => {
    if ("meaning" in s) units.push({ index, label: s.label, events: spanEvents(s, mutating) });
    else rejected.set(index, { index, label: s.label, message: s.message });
  });
  await dropRepeatedCalls(db, actor.tenantId, units);

  // Each event checked as the events path checks it: a span with one refused event is rejected whole.
  const ready: typeof units = [];
  for (const u of units) {
    const refusal = u.events.map((e) => prepareFully(e)).find((p) => "error" in p && p.error);
    if (refusal && "error" in refusal && refusal.error) {
      rejected.set(u.index, { index: u.index, label: u.label, message: refusal.error.message });
    } else ready.push(u);
  }

  // Batches of at most MAX_EVENTS_PER_BATCH events, a span's events never split, sent in order.
  let chunk: typeof units = [];
  let size = 0;
  const flush = async () => {
    if (!chunk.length) return;
    const events = chunk.flatMap((u) => u.events);
    const { results } = await ingestEvents(ctx, { body: { events } });
    let at = 0;
    for (const u of chunk) {
      const mine = results.slice(at, at + u.events.length);
      at += u.events.length;
      const bad = mine.find((r) => r.status === "rejected" || r.status === "conflict");
      if (bad) {
        const why =
          bad.status === "conflict"
            ? `${bad.id} was received before with other content (a span's ids are its dedupe key; nothing of it was stored again)`
            : (bad.error?.message ?? "rejected");
        rejected.set(u.index, { index: u.index, label: u.label, message: why });
      }
    }
    chunk = [];
    size = 0;
  };
  for (const u of ready) {
    if (size + u.events.length > MAX_EVENTS_PER_BATCH) await flush();
    chunk.push(u);
    size += u.events.length;
  }
  await flush();
  const list = [...rejected.values()].sort((a, b) => a.index - b.index);
  return { accepted: spans.length - list.length, rejected: list };
}

/**
 * A tool call is reported once: a `tool.called` whose task and call id another event already reported (stored before
 * under another id, or earlier in this request) is left out — the model's output and the tool's own span both name
 * the call, and its outcome pairs with whichever came first. One query.
 */
async function dropRepeatedCalls(db: Db, tenantId: string, units: Array<{ events: EventInput[] }>): Promise<void> {
  const calls = units.flatMap((u) =>
    u.events
      .filter((e) => e.type === "tool.called" && typeof e.attrs.call_id === "string")
      .map((e) => ({ task_id: e.task_id, call_id: e.attrs.call_id as string, event_id: e.id })),
  );
  if (!calls.length) return;
  const stored = await queryRows<{ task_id: string; call_id: string; event_id: string }>(
    db,
    sql`select e.task_id, e.attrs ->> 'call_id' as call_id, e.event_id from events e
        join (select distinct task_id, call_id from json_to_recordset(${JSON.stringify(calls)}::json)
              as p(task_id text, call_id text, event_id text)) p
          on e.task_id = p.task_id and e.attrs ->> 'call_id' = p.call_id
        where e.tenant_id = ${tenantId} and e.type = 'tool.called'`,
  );
  const owner = new Map<string, string>();
  for (const r of stored)
    if (!owner.has(`${r.task_id}\u0000${r.call_id}`)) owner.set(`${r.task_id}\u0000${r.call_id}`, r.event_id);
  for (const u of units) {
    u.events = u.events.filter((e) => {
      if (e.type !== "tool.called" || typeof e.attrs.call_id !== "string") return true;
      const key = `${e.task_id}\u0000${e.attrs.call_id}`;
      const first = owner.get(key);
      if (first === undefined) {
        owner.set(key, e.id);
        return true;
      }
      return first === e.id;
    });
  }
}
