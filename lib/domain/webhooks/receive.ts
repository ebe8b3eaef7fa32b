/**
 * `POST /api/v1/webhooks/{source}` (decision 0040; docs/concepts.md#webhook-sources): a tool owner's system reports
 * what happened to a write, signed with the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`; the `standardwebhooks` package verifies, with its 5-minute window). The report is kept as
 * evidence on the effect (found by its idempotency key); when the workspace trusts the source for the effect's action,
 * an `unknown` effect is settled by it through the one reconcile verb, with the source as the reconciler.
 */
import { sql } from "drizzle-orm";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { authorize, type SystemActor } from "../authz";
import { DomainError, isDomainError, notFound, validationError } from "../errors";
import { parseJsonText } from "../json/text";
import { MAX_JSON_DEPTH } from "../events/redact";
import { LIMITS } from "../limits";
import { canonicalName, IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE, plainName } from "../names";
import { reconcileSideEffect } from "../side-effects/reconcile";
import type { SigningContext, VerbContext } from "../context";
import { openSecret, sourceBinding, type SealKey } from "./seal";
import { SOURCE_NAME } from "./sources";

/** Largest body a source may send, in bytes (413 beyond). */
export const MAX_WEBHOOK_BYTES = 64 * 1024;

/** The window around the server's clock a `webhook-timestamp` must fall in (the package's tolerance). */
export const WEBHOOK_WINDOW_SECONDS = 5 * 60;

const WEBHOOK_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${LIMITS.webhookId.max}}$`);

export const outcomeReportSchema = z.object({
  type: z.literal("operation.outcome", { error: 'type must be "operation.outcome"' }),
  timestamp: z.string().max(64).optional(),
  data: z
    .strictObject({
      idempotency_key: z.string({ error: IDEMPOTENCY_KEY_RULE }).regex(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE),
      external_operation_id: plainName("external_operation_id", LIMITS.externalOperationId).optional(),
      outcome: z.enum(["applied", "not_applied"], { error: 'outcome must be "applied" or "not_applied"' }),
      result_digest: plainName("result_digest", LIMITS.digest).optional(),
    })
    .superRefine((v, ctx) => {
      if (v.outcome === "applied" && !v.external_operation_id)
        ctx.addIssue({
          code: "custom",
          path: ["external_operation_id"],
          message: "external_operation_id is required when the outcome is applied",
        });
      if (v.outcome === "not_applied" && v.external_operation_id)
        ctx.addIssue({
          code: "custom",
          path: ["external_operation_id"],
          message: "a write that was not applied has no external operation; leave external_operation_id out",
        });
    }),
});

export type WebhookHeaders = { id: string | null; timestamp: string | null; signature: string | null };

/** The actor a source acts as: named in the audit log and in the reconcile decision as `webhook:<name>`. */
export function webhookActor(tenantId: string, source: string): SystemActor {
  return { kind: "system", tenantId, label: `webhook:${source}` };
}

/**
 * Finds the workspace whose source of this name signed the message (pre-tenant: the secret decides, as an API key's
 * hash does; decision 0016), with any of its current secrets.
 * @param ownerDb the unwalled handle (the tenant is not known yet).
 * @returns the tenant and the message's id and parsed body.
 * @throws DomainError bad_request (400: a missing or malformed header, a body that is not JSON), unauthorized (401: an
 *   unknown source, a bad signature, a timestamp outside the window), validation_failed (422: the body's shape).
 */
export async function verifyWebhook(
  ownerDb: Db,
  {
    source,
    headers,
    body,
    sealKey,
    now = Date.now(),
  }: { source: string; headers: WebhookHeaders; body: string; sealKey: SealKey; now?: number },
): Promise<{ tenantId: string; webhookId: string; payload: z.infer<typeof outcomeReportSchema> }> {
  if (!headers.id || !headers.timestamp || !headers.signature) {
    throw new DomainError(
      "bad_request",
      "A Standard Webhooks message carries webhook-id, webhook-timestamp and webhook-signature headers; one is missing.",
    );
  }
  if (!WEBHOOK_ID.test(headers.id)) {
    throw new DomainError(
      "bad_request",
      `webhook-id must be 1–${LIMITS.webhookId.max} letters, digits, '.', '_', ':' or '-'.`,
    );
  }
  if (!/^\d{1,12}$/.test(headers.timestamp)) {
    throw new DomainError("bad_request", "webhook-timestamp must be whole seconds since 1970 (UTC).");
  }
  if (Math.abs(now / 1000 - Number(headers.timestamp)) > WEBHOOK_WINDOW_SECONDS) {
    throw new DomainError(
      "unauthorized",
      `webhook-timestamp is more than ${WEBHOOK_WINDOW_SECONDS / 60} minutes from the server's clock; sign the message when you send it.`,
    );
  }
  const refused = new DomainError(
    "unauthorized",
    `The signature does not verify for webhook source ${SOURCE_NAME.test(source) ? source : "(invalid name)"}: an unknown source, or a secret that is not current.`,
  );
  if (!SOURCE_NAME.test(source)) throw refused;
  const candidates = await queryRows<{ tenant_id: string; sealed: string }>(
    ownerDb,
    sql`select k.tenant_id, k.sealed from webhook_source_secrets k where k.source = ${source}`,
  );
  const wire = {
    "webhook-id": headers.id,
    "webhook-timestamp": headers.timestamp,
    "webhook-signature": headers.signature,
  };
  let tenantId: string | null = null;
  for (const c of candidates) {
    const secret = openSecret(sealKey, sourceBinding(c.tenant_id, source), c.sealed);
    if (!secret) continue;
    try {
      new Webhook(secret).verify(body, wire, { jsonParse: false });
      tenantId = c.tenant_id;
      break;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
    }
  }
  if (!tenantId) throw refused;

  const read = parseJsonText(body, MAX_JSON_DEPTH);
  if ("invalid" in read) throw new DomainError("bad_request", "The message body is not valid JSON.");
  if ("problem" in read) {
    const { problem } = read;
    throw new DomainError("validation_failed", `${problem.path || "The body"} ${problem.message}.`, {
      fields: [{ path: problem.path, message: problem.message }],
    });
  }
  const report = outcomeReportSchema.safeParse(read.value);
  if (!report.success) throw validationError(report.error.issues);
  return { tenantId, webhookId: headers.id, payload: report.data };
}

export type WebhookReceipt = {
  webhook_id: string;
  duplicate: boolean;
  /** `settled`: it reconciled the effect; `evidence`: kept for a person's reconcile; `unmatched`: no effect has the key. */
  disposition: "settled" | "evidence" | "unmatched";
  side_effect: { task_id: string; name: string; status: string } | null;
  /** Why a trusted source did not settle the effect (not unknown, or the reconcile refused), when it did not. */
  note?: string;
};

/**
 * Keeps a verified report (once per `webhook-id`) and settles the effect when the source is trusted for its action.
 * `ctx.actor` is {@link webhookActor}; `ctx.db` is walled to its tenant.
 * @returns what became of the report; a replayed `webhook-id` answers what the first one stored, and stores nothing.
 */
export async function recordWebhookReport(
  ctx: SigningContext,
  { source, webhookId, payload }: { source: string; webhookId: string; payload: z.infer<typeof outcomeReportSchema> },
): Promise<WebhookReceipt> {
  const { db, actor } = ctx;
  const tenantId = actor.tenantId;
  const seen = await findMessage(db, tenantId, source, webhookId);
  if (seen) return seen;

  const { data } = payload;
  const [effect] = await queryRows<{ task_id: string; name: string; status: string; action: string | null }>(
    db,
    sql`select task_id, name, status, action from side_effects where tenant_id = ${tenantId} and idempotency_key = ${data.idempotency_key}`,
  );
  const [src] = await queryRows<{ trusted_actions: string[] }>(
    db,
    sql`select trusted_actions from webhook_sources where tenant_id = ${tenantId} and name = ${source}`,
  );
  const trusted = !!effect?.action && !!src && src.trusted_actions.includes(canonicalName(effect.action));

  let disposition: WebhookReceipt["disposition"] = effect ? "evidence" : "unmatched";
  let status = effect?.status ?? null;
  let auditSeq: number | null = null;
  let note: string | undefined;
  if (effect && trusted && effect.status === "unknown") {
    try {
      const settled = await reconcileSideEffect(ctx, {
        taskId: effect.task_id,
        name: effect.name,
        body: {
          outcome: data.outcome === "applied" ? "completed" : "not_applied",
          ...(data.external_operation_id ? { external_operation_id: data.external_operation_id } : {}),
          ...(data.result_digest ? { result_digest: data.result_digest } : {}),
          evidence: `Webhook source ${source} reported ${data.outcome.replace("_", " ")} (webhook-id ${webhookId}${data.external_operation_id ? `, operation ${data.external_operation_id}` : ""}).`,
        },
      });
      disposition = "settled";
      status = settled.status;
      auditSeq = settled.audit_seq;
    } catch (err) {
      // Settled first by someone else, or refused by the reconcile rule (a lookup that contradicts the report):
      // the report stays evidence, and the refusal is said.
      if (!isDomainError(err) || (err.code !== "conflict" && err.code !== "validation_failed")) throw err;
      note = err.message;
    }
  } else if (effect && trusted) {
    note = `${effect.name} is ${effect.status.replace("_", " ")}, not unknown; the report is kept as evidence.`;
  } else if (effect) {
    note = `Webhook source ${source} is not trusted to settle ${effect.action ?? "this action"}; the report pre-fills a person's reconcile.`;
  }

  // Concurrent deliveries of one message both get here: the primary key keeps one row.
  const inserted = await queryRows(
    db,
    sql`insert into webhook_messages (tenant_id, source, webhook_id, task_id, side_effect, idempotency_key,
          external_operation_id, outcome, result_digest, disposition, audit_seq)
        values (${tenantId}, ${source}, ${webhookId}, ${effect?.task_id ?? null}, ${effect?.name ?? null},
          ${data.idempotency_key}, ${data.external_operation_id ?? null}, ${data.outcome}, ${data.result_digest ?? null},
          ${disposition}, ${auditSeq})
        on conflict (tenant_id, source, webhook_id) do nothing returning webhook_id`,
  );
  if (!inserted.length) return (await findMessage(db, tenantId, source, webhookId))!;
  return {
    webhook_id: webhookId,
    duplicate: false,
    disposition,
    side_effect: effect ? { task_id: effect.task_id, name: effect.name, status: status! } : null,
    ...(note ? { note } : {}),
  };
}

async function findMessage(
  db: Db,
  tenantId: string,
  source: string,
  webhookId: string,
): Promise<WebhookReceipt | null> {
  const [row] = await queryRows<{
    task_id: string | null;
    side_effect: string | null;
    disposition: WebhookReceipt["disposition"];
    status: string | null;
  }>(
    db,
    sql`select m.task_id, m.side_effect, m.disposition, e.status from webhook_messages m
        left join side_effects e on e.tenant_id = m.tenant_id and e.task_id = m.task_id and e.name = m.side_effect
        where m.tenant_id = ${tenantId} and m.source = ${source} and m.webhook_id = ${webhookId}`,
  );
  if (!row) return null;
  return {
    webhook_id: webhookId,
    duplicate: true,
    disposition: row.disposition,
    side_effect:
      row.task_id && row.side_effect
        ? { task_id: row.task_id, name: row.side_effect, status: row.status ?? "unknown" }
        : null,
  };
}

export type WebhookEvidence = {
  source: string;
  webhook_id: string;
  received_at: string;
  outcome: "applied" | "not_applied";
  external_operation_id: string | null;
  result_digest: string | null;
  disposition: WebhookReceipt["disposition"];
};

/**
 * The reports webhook sources sent about one effect (matched by its idempotency key, also ones that came before the
 * effect existed), newest first: what the reconcile dialog pre-fills from. Runtime keys and every role (`tasks.read`).
 * @throws DomainError forbidden, not_found (no such effect in the caller's workspace).
 */
export async function listWebhookEvidence(
  { db, actor }: VerbContext,
  { taskId, name }: { taskId: string; name: string },
): Promise<WebhookEvidence[]> {
  authorize(actor, "tasks.read");
  const [effect] = await queryRows<{ key: string }>(
    db,
    sql`select idempotency_key as key from side_effects where tenant_id = ${actor.tenantId} and task_id = ${taskId} and name = ${name}`,
  );
  if (!effect) throw notFound(`Side effect ${name} of task ${taskId}`);
  return queryRows<WebhookEvidence>(
    db,
    sql`select source, webhook_id, ${isoUtc("received_at")} as received_at, outcome, external_operation_id, result_digest, disposition
        from webhook_messages where tenant_id = ${actor.tenantId} and idempotency_key = ${effect.key}
        order by received_at desc, webhook_id limit 20`,
  );
}
