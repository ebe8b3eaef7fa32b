/**
 * The delivery worker's step (decision 0040): claims due deliveries of every workspace with `FOR UPDATE SKIP LOCKED`
 * (so several servers share the outbox without sending a row twice at once), leases them by moving their next attempt
 * ahead, commits, then sends each one signed with the Standard Webhooks scheme under its fixed `webhook-id`, and
 * records the outcome. A server killed mid-send leaves the row pending: when the lease runs out another server (or the
 * restarted one) sends it again under the same `webhook-id`, which receivers dedupe by.
 */
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { queryRows, type Db } from "@/db";
import { outboundCall, type Resolver } from "../web/outbound";
import { endpointBinding, openSecret, type SealKey } from "../webhooks/seal";
import { privateAddressReason } from "./addresses";
import { slackMessage } from "./format";

/** Seconds before attempt n+1 after attempt n failed (n = 1…); the last entry repeats. */
export const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600];

/** The whole call, connection to last byte. */
const CALL_TIMEOUT_MS = 10_000;

type Claimed = {
  tenant_id: string;
  id: string;
  endpoint_id: string;
  event: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  attempts: number;
  max_attempts: number;
  url: string | null;
  format: "standard" | "slack" | null;
  sealed_secret: string | null;
  allow_private: boolean | null;
};

export type DeliverOptions = {
  sealKey: SealKey;
  /** The dashboard's address, to make each payload's `link` absolute. */
  siteUrl: string;
  /** Most deliveries claimed per step. */
  limit?: number;
  /** How long a claimed delivery is held before another server may send it (longer than one call). */
  leaseSeconds?: number;
  resolve?: Resolver;
};

/**
 * Sends the deliveries due now, at most `limit`.
 * @param ownerDb the unwalled handle: the outbox is shared by every workspace (decision 0016 lists this use).
 * @returns how many were attempted.
 */
export async function deliverDue(ownerDb: Db, opts: DeliverOptions): Promise<number> {
  const lease = opts.leaseSeconds ?? 30;
  const claimed = await queryRows<Claimed>(
    ownerDb,
    sql`with due as (
          select tenant_id, id from notification_deliveries
          where status = 'pending' and next_attempt_at <= now()
          order by next_attempt_at limit ${opts.limit ?? 10}
          for update skip locked),
        claimed as (
          update notification_deliveries d
          set attempts = d.attempts + 1, last_attempt_at = now(),
              next_attempt_at = now() + make_interval(secs => ${lease})
          from due where d.tenant_id = due.tenant_id and d.id = due.id
          returning d.tenant_id, d.id, d.endpoint_id, d.event, d.payload, d.attempts, d.max_attempts)
        select c.*, e.url, e.format, e.sealed_secret, s.allow_private_addresses as allow_private
        from claimed c
        left join notification_endpoints e on e.tenant_id = c.tenant_id and e.id = c.endpoint_id
        left join notification_settings s on s.tenant_id = c.tenant_id`,
  );
  await Promise.all(claimed.map((row) => deliverOne(ownerDb, row, opts)));
  return claimed.length;
}

async function deliverOne(db: Db, row: Claimed, opts: DeliverOptions): Promise<void> {
  const secret =
    row.sealed_secret && openSecret(opts.sealKey, endpointBinding(row.tenant_id, row.endpoint_id), row.sealed_secret);
  if (!row.url || !secret) {
    await record(db, row, {
      ok: false,
      final: true,
      status: null,
      error: row.url ? "secret does not open" : "endpoint removed",
    });
    return;
  }
  const link = typeof row.payload.data.link === "string" ? `${opts.siteUrl}${row.payload.data.link}` : null;
  const payload = { ...row.payload, data: { ...row.payload.data, ...(link ? { link } : {}) } };
  const body = JSON.stringify(row.format === "slack" ? slackMessage(payload) : payload);
  const now = new Date();
  const signature = new Webhook(secret).sign(row.id, now, body);
  const answer = await outboundCall(new URL(row.url), {
    method: "POST",
    body,
    timeoutMs: CALL_TIMEOUT_MS,
    maxBytes: 16 * 1024,
    resolve: opts.resolve,
    refuse: row.allow_private ? undefined : privateAddressReason,
    headers: {
      "content-type": "application/json",
      "user-agent": "run-custody-notifications/1",
      "webhook-id": row.id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": signature,
    },
  });
  if (answer.kind === "answer" && answer.status >= 200 && answer.status < 300) {
    await record(db, row, { ok: true, status: answer.status, error: null });
    return;
  }
  const error =
    answer.kind === "answer"
      ? answer.status >= 300 && answer.status < 400
        ? `redirect refused (${answer.status}${answer.location ? ` to ${answer.location.slice(0, 200)}` : ""})`
        : `HTTP ${answer.status}`
      : answer.kind === "timeout"
        ? `no answer within ${CALL_TIMEOUT_MS / 1000} s`
        : answer.kind === "refused"
          ? `refused: ${answer.reason}`
          : answer.message.slice(0, 300);
  await record(db, row, {
    ok: false,
    final: row.attempts >= row.max_attempts,
    status: answer.kind === "answer" ? answer.status : null,
    error,
  });
}

async function record(
  db: Db,
  row: Claimed,
  outcome:
    { ok: true; status: number; error: null } | { ok: false; final: boolean; status: number | null; error: string },
): Promise<void> {
  if (outcome.ok) {
    await db.execute(sql`update notification_deliveries set status = 'delivered', delivered_at = now(),
        last_status_code = ${outcome.status}, last_error = null
      where tenant_id = ${row.tenant_id} and id = ${row.id} and status = 'pending'`);
    return;
  }
  const wait = BACKOFF_SECONDS[Math.min(row.attempts, BACKOFF_SECONDS.length) - 1] ?? 5;
  // Only the claim that made this attempt records its failure: a later claim (after the lease ran out) owns the row.
  await db.execute(sql`update notification_deliveries
      set status = ${outcome.final ? "failed" : "pending"}, last_status_code = ${outcome.status}, last_error = ${outcome.error},
          next_attempt_at = now() + make_interval(secs => ${wait})
      where tenant_id = ${row.tenant_id} and id = ${row.id} and status = 'pending' and attempts = ${row.attempts}`);
}
