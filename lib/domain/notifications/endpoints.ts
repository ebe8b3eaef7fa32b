/**
 * Settings → Notifications (decision 0040; docs/concepts.md#notifications): owners and admins register HTTPS endpoints
 * and the events each wants, read the delivery log, and send a delivery again. The endpoint's signing secret is shown
 * once. Whether endpoints may be on loopback or private addresses is a workspace setting (off by default).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { redactString } from "../events/redact";
import { outboundCall, type Resolver } from "../web/outbound";
import { UNSAFE_TEXT } from "../typed-text";
import type { VerbContext } from "../context";
import { endpointBinding, newWebhookSecret, sealSecret, type SealKey } from "../webhooks/seal";
import { endpointUrlReason, privateAddressReason } from "./addresses";
import { NOTIFICATION_EVENTS } from "./outbox";

/** Most endpoints one workspace may register. */
const MAX_ENDPOINTS = 20;

export const endpointBodySchema = z.strictObject({
  url: z
    .url({ message: "url must be an absolute https:// URL" })
    .max(2000, "url is at most 2000 characters")
    .refine((u) => /^https:\/\//i.test(u), "url must start with https:// (notifications are sent over TLS only)")
    .refine((u) => {
      const parsed = URL.parse(u);
      return !parsed || (!parsed.username && !parsed.password);
    }, "url must not carry credentials")
    .refine((u) => !UNSAFE_TEXT.test(u), "url contains a character that cannot be shown")
    .refine(
      (u) => redactString(u).kinds.length === 0,
      "url must not carry a credential (deliveries are signed; the secret you are given verifies them)",
    ),
  events: z
    .array(z.enum(NOTIFICATION_EVENTS, { error: `each event is one of ${NOTIFICATION_EVENTS.join(", ")}` }), {
      error: "events must be an array of event names",
    })
    .min(1, "events must name at least one event")
    .max(NOTIFICATION_EVENTS.length),
  format: z.enum(["standard", "slack"], { error: 'format must be "standard" or "slack"' }).default("standard"),
});

export const notificationSettingsSchema = z.strictObject({
  allow_private_addresses: z.boolean({ error: "allow_private_addresses must be true or false" }),
});

export type EndpointView = {
  id: string;
  url: string;
  events: string[];
  format: "standard" | "slack";
  created_by: string;
  created_at: string;
};

export type DeliveryView = {
  id: string;
  endpoint_id: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  payload: unknown;
};

/** Whether endpoints may be on loopback or private addresses (default false). */
export async function allowsPrivateAddresses(db: VerbContext["db"], tenantId: string): Promise<boolean> {
  const [row] = await queryRows<{ allow: boolean }>(
    db,
    sql`select allow_private_addresses as allow from notification_settings where tenant_id = ${tenantId}`,
  );
  return row?.allow ?? false;
}

/** The workspace's notification settings. Any signed-in role. */
export async function getNotificationSettings({
  db,
  actor,
}: VerbContext): Promise<{ allow_private_addresses: boolean }> {
  authorize(actor, "settings.read");
  return { allow_private_addresses: await allowsPrivateAddresses(db, actor.tenantId) };
}

/** `{allow_private_addresses}` → the settings. @throws DomainError forbidden, validation_failed */
export async function setNotificationSettings(
  { db, actor }: VerbContext,
  { body }: { body: unknown },
): Promise<{ allow_private_addresses: boolean }> {
  authorize(actor, "notifications.manage");
  const parsed = notificationSettingsSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const allow = parsed.data.allow_private_addresses;
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into notification_settings (tenant_id, allow_private_addresses) values (${actor.tenantId}, ${allow})
      on conflict (tenant_id) do update set allow_private_addresses = excluded.allow_private_addresses, updated_at = now()`);
    await appendAudit(tx, actor, {
      action: "notification_settings.changed",
      target: `workspace:${actor.tenantId}`,
      details: { allow_private_addresses: allow },
    });
  });
  return { allow_private_addresses: allow };
}

/** The tenant's endpoints (never a secret). Any signed-in role. */
export async function listNotificationEndpoints({ db, actor }: VerbContext): Promise<EndpointView[]> {
  authorize(actor, "settings.read");
  return queryRows<EndpointView>(
    db,
    sql`select id, url, events, format, created_by, ${isoUtc("created_at")} as created_at
        from notification_endpoints where tenant_id = ${actor.tenantId} order by created_at, id`,
  );
}

/**
 * Registers an endpoint: `{url, events, format}` → `{id, secret, url, events, format}` (the secret shown only here).
 * The address is checked as deliveries will be (HTTPS; not link-local or metadata; not loopback or private unless the
 * workspace allows it), and the url is asked once with GET: an answer that redirects is refused.
 * @throws DomainError forbidden, validation_failed (url with the reason, events, format), conflict (too many endpoints).
 */
export async function createNotificationEndpoint(
  { db, actor }: VerbContext,
  { body, sealKey, resolve }: { body: unknown; sealKey: SealKey; resolve?: Resolver },
): Promise<EndpointView & { secret: string; warnings: string[] }> {
  authorize(actor, "notifications.manage");
  const parsed = endpointBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const url = new URL(parsed.data.url);
  const allowPrivate = await allowsPrivateAddresses(db, actor.tenantId);
  const refuse = (message: string) => validationError([{ path: ["url"], message: `url refused: ${message}` }]);
  const why = await endpointUrlReason(url, { allowPrivate, resolve });
  if (why) throw refuse(why);
  const warnings: string[] = [];
  const probe = await outboundCall(url, {
    method: "GET",
    timeoutMs: 3000,
    maxBytes: 4096,
    resolve,
    refuse: allowPrivate ? undefined : privateAddressReason,
  });
  if (probe.kind === "refused") throw refuse(probe.reason);
  if (probe.kind === "answer" && probe.status >= 300 && probe.status < 400) {
    throw refuse(
      `it redirects (${probe.status}${probe.location ? ` to ${probe.location.slice(0, 300)}` : ""}); notifications are never sent through a redirect, so register the address it points to`,
    );
  }
  if (probe.kind !== "answer") {
    warnings.push(
      `The endpoint did not answer a test request (${probe.kind === "timeout" ? "timed out" : probe.message}); deliveries will be retried.`,
    );
  }
  const events = [...new Set(parsed.data.events)].sort();
  const secret = newWebhookSecret();
  return db.transaction(async (tx) => {
    const [count] = await queryRows<{ n: number }>(
      tx,
      sql`select count(*)::int as n from notification_endpoints where tenant_id = ${actor.tenantId}`,
    );
    if ((count?.n ?? 0) >= MAX_ENDPOINTS) {
      throw new DomainError("conflict", `A workspace may have at most ${MAX_ENDPOINTS} notification endpoints.`);
    }
    const [{ id }] = (await queryRows<{ id: string }>(tx, sql`select gen_random_uuid()::text as id`)) as [
      { id: string },
    ];
    const [row] = await queryRows<EndpointView>(
      tx,
      sql`insert into notification_endpoints (tenant_id, id, url, events, format, sealed_secret, created_by)
          values (${actor.tenantId}, ${id}, ${url.toString()}, array(select json_array_elements_text(${JSON.stringify(events)}::json)), ${parsed.data.format},
                  ${sealSecret(sealKey, endpointBinding(actor.tenantId, id), secret)}, ${actorRef(actor).label})
          returning id, url, events, format, created_by, ${isoUtc("created_at")} as created_at`,
    );
    await appendAudit(tx, actor, {
      action: "notification_endpoint.created",
      target: `notification_endpoint:${id}`,
      details: { url: row!.url, events, format: parsed.data.format },
    });
    return { ...row!, secret, warnings };
  });
}

/** Removes an endpoint; its pending deliveries are dropped, its log kept. @throws DomainError forbidden, not_found */
export async function deleteNotificationEndpoint({ db, actor }: VerbContext, { id }: { id: string }): Promise<void> {
  authorize(actor, "notifications.manage");
  if (!z.uuid().safeParse(id).success) throw notFound(`Notification endpoint ${id}`);
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`delete from notification_endpoints where tenant_id = ${actor.tenantId} and id = ${id} returning id`,
    );
    if (!rows.length) throw notFound(`Notification endpoint ${id}`);
    await tx.execute(sql`update notification_deliveries set status = 'failed', last_error = 'endpoint removed'
      where tenant_id = ${actor.tenantId} and endpoint_id = ${id} and status = 'pending'`);
    await appendAudit(tx, actor, { action: "notification_endpoint.deleted", target: `notification_endpoint:${id}` });
  });
}

const DELIVERY_COLUMNS = sql`id, endpoint_id, event, status, attempts, max_attempts,
  case when status = 'pending' then ${isoUtc("next_attempt_at")} end as next_attempt_at,
  ${isoUtc("last_attempt_at")} as last_attempt_at, last_status_code, last_error, ${isoUtc("created_at")} as created_at,
  ${isoUtc("delivered_at")} as delivered_at, payload`;

/**
 * The delivery log, newest first (`limit` 1–200, default 50), optionally for one endpoint. Any signed-in role.
 * @throws DomainError forbidden, validation_failed (limit).
 */
export async function listDeliveries(
  { db, actor }: VerbContext,
  { endpointId, limit = 50 }: { endpointId?: string; limit?: number },
): Promise<DeliveryView[]> {
  authorize(actor, "settings.read");
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw validationError([{ path: ["limit"], message: "limit is a whole number from 1 to 200" }]);
  if (endpointId !== undefined && !z.uuid().safeParse(endpointId).success)
    throw notFound(`Notification endpoint ${endpointId}`);
  return queryRows<DeliveryView>(
    db,
    sql`select ${DELIVERY_COLUMNS} from notification_deliveries where tenant_id = ${actor.tenantId}
        ${endpointId ? sql`and endpoint_id = ${endpointId}` : sql``}
        order by created_at desc, id desc limit ${limit}`,
  );
}

/**
 * "Send again": queues a delivery for one more round of attempts now, under the same `webhook-id` (receivers dedupe
 * by it). A delivery still pending is only moved forward.
 * @throws DomainError forbidden, not_found.
 */
export async function resendDelivery({ db, actor }: VerbContext, { id }: { id: string }): Promise<DeliveryView> {
  authorize(actor, "notifications.manage");
  if (!/^msg_[0-9a-f]{32}$/.test(id)) throw notFound(`Delivery ${id}`);
  return db.transaction(async (tx) => {
    const [row] = await queryRows<DeliveryView>(
      tx,
      sql`update notification_deliveries d set status = 'pending', next_attempt_at = now(),
            max_attempts = greatest(d.max_attempts, d.attempts + 8)
          where d.tenant_id = ${actor.tenantId} and d.id = ${id}
            and exists (select 1 from notification_endpoints e where e.tenant_id = d.tenant_id and e.id = d.endpoint_id)
          returning ${DELIVERY_COLUMNS}`,
    );
    if (!row) throw notFound(`Delivery ${id}`);
    await appendAudit(tx, actor, {
      action: "notification_delivery.requeued",
      target: `notification_delivery:${id}`,
      details: { endpoint_id: row.endpoint_id, event: row.event },
    });
    return row;
  });
}
