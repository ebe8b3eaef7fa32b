/**
 * The facts that notify (decision 0040), each turned into {@link NotificationFact}s by the verb that records it and
 * queued in that verb's transaction. Only ids, names, reasons and a link: never a payload, an error text a runtime
 * sent, or a credential.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { policyAllowsHost } from "../policies/hosts";
import type { PolicyDocument } from "../policies/document";
import { enqueueNotifications, type NotificationFact } from "./outbox";

const taskLink = (taskId: string) => `/tasks/${encodeURIComponent(taskId)}`;

/** A new approval request (lib/domain/approvals/requests.ts). */
export function approvalRequested(r: {
  id: string;
  taskId: string;
  sideEffect: string;
  action: string | null;
  tool: string | null;
}): NotificationFact {
  return {
    event: "approval.requested",
    key: `approval.requested:${r.id}`,
    data: { approval_id: r.id, task_id: r.taskId, side_effect: r.sideEffect, action: r.action, tool: r.tool },
    link: `/approvals/${r.id}`,
  };
}

/** Effects that became `unknown` (lib/domain/side-effects/lifecycle/moves.ts): one fact each, and one per task. */
export function effectsUnknown(
  moves: ReadonlyArray<{ taskId: string; name: string; idempotencyKey: string; transition: string; eventId?: string }>,
): NotificationFact[] {
  const occurrence = randomUUID();
  const facts: NotificationFact[] = moves.map((m) => ({
    event: "side_effect.unknown",
    key: `side_effect.unknown:${m.taskId}/${m.name}:${m.eventId ?? occurrence}`,
    data: { task_id: m.taskId, side_effect: m.name, idempotency_key: m.idempotencyKey, reason: m.transition },
    link: taskLink(m.taskId),
  }));
  for (const taskId of new Set(moves.map((m) => m.taskId))) {
    facts.push({
      event: "task.needs_attention",
      key: `task.needs_attention:${taskId}:${occurrence}`,
      data: { task_id: taskId, reason: "side_effect_unknown" },
      link: taskLink(taskId),
    });
  }
  return facts;
}

/** A runtime's gate ask answered `stop`: once per task, attempt and set of reasons. */
export function gateStopped(taskId: string, attempt: number, codes: readonly string[]): NotificationFact[] {
  const reasons = [...new Set(codes)].sort().join(",");
  return [
    {
      event: "gate.stopped",
      key: `gate.stopped:${taskId}:${attempt}:${reasons}`,
      data: { task_id: taskId, attempt, reasons },
      link: taskLink(taskId),
    },
    {
      event: "task.needs_attention",
      key: `task.needs_attention:${taskId}:${attempt}:gate:${reasons}`,
      data: { task_id: taskId, reason: "gate_stopped", attempt, reasons },
      link: taskLink(taskId),
    },
  ];
}

/** Stored `egress.denied` events (lib/domain/events/ingest.ts). */
export function egressDenied(
  events: ReadonlyArray<{ id: string; task_id: string; attrs: Record<string, unknown> }>,
): NotificationFact[] {
  return events.map((e) => ({
    event: "egress.denied",
    key: `egress.denied:${e.id}`,
    data: {
      task_id: e.task_id,
      event_id: e.id,
      host: typeof e.attrs.host === "string" ? e.attrs.host.slice(0, 255) : null,
    },
    link: taskLink(e.task_id),
  }));
}

/**
 * A policy version made current (lib/domain/policies/current.ts): `policy.activated`, `approval.stale` for each
 * approval it invalidated, and `egress.drift` for each host a task reached that the new document no longer admits
 * (read only when an endpoint wants that event; at most 200 hosts).
 */
export async function notifyPolicyActivated(
  tx: Db,
  tenantId: string,
  a: {
    version: number;
    previous: number | null;
    document: PolicyDocument | null;
    invalidated: ReadonlyArray<{ id: string; task_id: string; side_effect: string }>;
  },
): Promise<void> {
  const facts: NotificationFact[] = [
    {
      event: "policy.activated",
      key: `policy.activated:${a.version}:${randomUUID()}`,
      data: { version: a.version, previous: a.previous },
      link: `/policies/${a.version}`,
    },
    ...a.invalidated.map((r): NotificationFact => ({
      event: "approval.stale",
      key: `approval.stale:${r.id}:policy_changed:${a.version}`,
      data: { approval_id: r.id, task_id: r.task_id, side_effect: r.side_effect, reason: "policy_changed" },
      link: `/approvals/${r.id}`,
    })),
  ];
  const doc = a.document;
  if (doc) {
    const reached = await queryRows<{ host: string; task_id: string }>(
      tx,
      sql`select distinct on (lower(e.attrs->>'host')) lower(e.attrs->>'host') as host, e.task_id
          from events e
          where e.tenant_id = ${tenantId} and e.retention_class = 'fact' and e.type = 'egress.allowed' and e.attrs ? 'host'
            and exists (select 1 from notification_endpoints n where n.tenant_id = ${tenantId} and 'egress.drift' = any(n.events))
          order by lower(e.attrs->>'host'), e.occurred_at desc
          limit 200`,
    );
    for (const r of reached.filter((h) => !policyAllowsHost(doc, h.host))) {
      facts.push({
        event: "egress.drift",
        key: `egress.drift:${r.host}:${a.version}`,
        data: { host: r.host, task_id: r.task_id, policy_version: a.version },
        link: taskLink(r.task_id),
      });
    }
  }
  await enqueueNotifications(tx, tenantId, facts);
}
