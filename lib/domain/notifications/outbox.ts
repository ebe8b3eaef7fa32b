/**
 * The notification outbox (decision 0040; docs/concepts.md#notifications): a fact that people should hear about is
 * written, in the transaction that records the fact, as one row per subscribed endpoint in `notification_deliveries`.
 * A crash before the commit loses the fact and its notification together; after it, the delivery worker
 * (deliver.ts) sends it. Each row's id — the `webhook-id` of every attempt — is derived from the endpoint and the
 * fact's key, so the same fact noticed twice is queued once.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db";

/** The events an endpoint may subscribe to. */
export const NOTIFICATION_EVENTS = [
  "approval.requested",
  "approval.stale",
  "side_effect.unknown",
  "gate.stopped",
  "task.needs_attention",
  "policy.activated",
  "egress.denied",
  "egress.drift",
] as const;

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/**
 * One fact to notify about. `key` names the fact (e.g. `side_effect.unknown:<task>/<name>:<audit or event id>`);
 * `data` holds ids, names and reasons only — never a payload, a credential or free text a runtime sent; `link` is a
 * path of the dashboard (the worker makes it absolute).
 */
export type NotificationFact = {
  event: NotificationEvent;
  key: string;
  data: Record<string, string | number | boolean | null>;
  link: string;
};

/**
 * Queues `facts` for every endpoint of the tenant subscribed to their event: one statement, nothing when no endpoint
 * wants them. Call inside the transaction that records the facts.
 */
export async function enqueueNotifications(tx: Db, tenantId: string, facts: NotificationFact[]): Promise<void> {
  if (!facts.length) return;
  const at = new Date().toISOString();
  const rows = facts.map((f) => ({
    event: f.event,
    key: f.key,
    payload: { type: f.event, timestamp: at, data: { ...f.data, link: f.link } },
  }));
  await tx.execute(sql`
    insert into notification_deliveries (tenant_id, id, endpoint_id, event, payload)
    select e.tenant_id,
           'msg_' || substr(encode(sha256(convert_to(e.id::text || '|' || f.key, 'UTF8')), 'hex'), 1, 32),
           e.id, f.event, f.payload
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as f(event text, key text, payload jsonb)
    join notification_endpoints e on e.tenant_id = ${tenantId} and f.event = any(e.events)
    on conflict (tenant_id, id) do nothing`);
}
