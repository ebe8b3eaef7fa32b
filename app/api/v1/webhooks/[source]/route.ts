import { dbFor, getOwnerDb } from "@/db";
import { secretsSealKey } from "@/lib/config/webhook-key";
import { getSigningKey } from "@/lib/config/signing-key";
import { DomainError } from "@/lib/domain/errors";
import { readCappedText } from "@/lib/domain/web/read-capped";
import { MAX_WEBHOOK_BYTES, recordWebhookReport, verifyWebhook, webhookActor } from "@/lib/domain/webhooks/receive";
import { otherMethods, publicRoute } from "@/lib/server/route";

const tooLarge = () =>
  new DomainError("payload_too_large", `A webhook message is at most ${MAX_WEBHOOK_BYTES / 1024} KiB.`);

/**
 * POST /api/v1/webhooks/{source} — a Standard Webhooks message from a registered source (no session or API key: the
 * signature is the credential). Body `{"type": "operation.outcome", "data": {idempotency_key, outcome: "applied" |
 * "not_applied", external_operation_id?, result_digest?}}` → `{webhook_id, duplicate, disposition: "settled" |
 * "evidence" | "unmatched", side_effect, note?}`. 400 a missing or malformed header or a body that is not JSON; 401 an
 * unknown source, a bad signature or a timestamp more than 5 minutes off; 413 a body over 64 KiB; 422 the body's shape
 * — nothing stored for any of them. A replayed `webhook-id` answers 200 with `duplicate: true` and stores nothing
 * (decision 0040).
 */
export const POST = publicRoute<{ source: string }>(async ({ req, params }) => {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > MAX_WEBHOOK_BYTES) throw tooLarge();
  if (!req.body) throw new DomainError("bad_request", "The message has no body.");
  const body = await readCappedText(req.body, MAX_WEBHOOK_BYTES);
  if (body === null) throw tooLarge();
  const sealKey = secretsSealKey();
  const verified = await verifyWebhook(await getOwnerDb(), {
    source: params.source,
    headers: {
      id: req.headers.get("webhook-id"),
      timestamp: req.headers.get("webhook-timestamp"),
      signature: req.headers.get("webhook-signature"),
    },
    body,
    sealKey,
  });
  const actor = webhookActor(verified.tenantId, params.source);
  const db = await dbFor({ tenantId: verified.tenantId, userId: null });
  return recordWebhookReport(
    { db, actor, signingKey: getSigningKey() },
    { source: params.source, webhookId: verified.webhookId, payload: verified.payload },
  );
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
