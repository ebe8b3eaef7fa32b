/**
 * `GET /api/v1/tasks/{task_id}/side-effects/{name}/payload`: the request payload of a write, for the person who
 * reconciles it (decision 0045) — what the intent sent with its digest (kept by the intent route, secrets redacted),
 * else what its approval request holds. Pretty-printed and capped, so the dialog shows a bounded text.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { authorize } from "../authz";
import type { VerbContext } from "../context";
import { notFound } from "../errors";
import { normalDigest } from "../crypto/canonical";

/** The most characters of pretty-printed payload an answer carries. */
export const PAYLOAD_TEXT_MAX = 64 * 1024;

/** What the route answers. `text` is null when no payload is known (the runtime sent only a digest). */
export type EffectPayload = {
  payload_digest: string | null;
  source: "intent" | "approval" | null;
  text: string | null;
  truncated: boolean;
};

/**
 * The payload of one side effect for its current payload digest.
 * @throws DomainError not_found (no such effect in the caller's workspace).
 */
export async function getEffectPayload(
  { db, actor }: VerbContext,
  { taskId, name }: { taskId: string; name: string },
): Promise<EffectPayload> {
  authorize(actor, "tasks.read");
  const [effect] = await queryRows<{ payload_digest: string | null; idempotency_key: string }>(
    db,
    sql`select payload_digest, idempotency_key from side_effects
        where tenant_id = ${actor.tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  if (!effect) throw notFound(`Side effect ${name} of task ${taskId}`);
  const digest = effect.payload_digest ? normalDigest(effect.payload_digest) : null;
  let source: EffectPayload["source"] = null;
  let payload: unknown = undefined;
  if (digest) {
    const [kept] = await queryRows<{ payload: unknown }>(
      db,
      sql`select payload from side_effect_payloads
          where tenant_id = ${actor.tenantId} and task_id = ${taskId} and name = ${name} and payload_digest = ${digest}`,
    );
    if (kept) {
      source = "intent";
      payload = kept.payload;
    }
  }
  if (source === null) {
    // An approval request of the same write holds the payload it was asked with (same digest when one is known).
    const [asked] = await queryRows<{ payload: unknown }>(
      db,
      sql`select payload from approval_requests
          where tenant_id = ${actor.tenantId} and task_id = ${taskId} and idempotency_key = ${effect.idempotency_key}
            and payload is not null
            and (${digest}::text is null or lower(regexp_replace(coalesce(payload_digest, ''), '^sha256:', '', 'i')) = ${digest})
          order by requested_at desc limit 1`,
    );
    if (asked) {
      source = "approval";
      payload = asked.payload;
    }
  }
  if (source === null) return { payload_digest: effect.payload_digest, source, text: null, truncated: false };
  const full = JSON.stringify(payload, null, 2);
  const truncated = full.length > PAYLOAD_TEXT_MAX;
  return {
    payload_digest: effect.payload_digest,
    source,
    text: truncated ? full.slice(0, PAYLOAD_TEXT_MAX) : full,
    truncated,
  };
}
