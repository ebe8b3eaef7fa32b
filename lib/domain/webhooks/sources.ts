/**
 * Settings → Webhooks (decision 0040; docs/concepts.md#webhook-sources): owners and admins register the systems that
 * may report what happened to a write, with the actions each is trusted to settle. A source's `whsec_…` secret is
 * shown once; a rotation adds a second secret valid beside the first until the first is removed.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { LIMITS } from "../limits";
import { canonicalName, identifierName } from "../names";
import type { VerbContext } from "../context";
import { newWebhookSecret, sealSecret, sourceBinding, type SealKey } from "./seal";

/** A source name: lower-case letters, digits, `_` and `-`, starting with a letter or digit; it is the URL's last segment. */
export const SOURCE_NAME = new RegExp(`^[a-z0-9][a-z0-9_-]{0,${LIMITS.webhookSourceName.max - 1}}$`);
const SOURCE_NAME_RULE = `name must be 1–${LIMITS.webhookSourceName.max} lower-case letters, digits, '_' or '-', starting with a letter or digit`;

/** Most secrets a source holds at once: the current one and, during a rotation, the new one. */
const MAX_SECRETS = 2;

const trustedActions = z
  .array(identifierName("trusted_actions item", LIMITS.actionName), {
    error: "trusted_actions must be an array of action names",
  })
  .max(100, "trusted_actions holds at most 100 actions");

export const sourceBodySchema = z.strictObject({
  name: z.string({ error: SOURCE_NAME_RULE }).regex(SOURCE_NAME, SOURCE_NAME_RULE),
  trusted_actions: trustedActions.default([]),
});

export const trustBodySchema = z.strictObject({ trusted_actions: trustedActions });

export type WebhookSourceView = {
  name: string;
  trusted_actions: string[];
  secrets: Array<{ id: string; created_at: string }>;
  created_by: string;
  created_at: string;
};

/** Checks a source name taken from a path. @throws DomainError not_found for a name no source could have. */
function checkSourceName(name: string): void {
  if (!SOURCE_NAME.test(name)) throw notFound(`Webhook source ${name}`);
}

/** The tenant's webhook sources, with their secrets' ids and ages (never a secret). Any signed-in role. */
export async function listWebhookSources({ db, actor }: VerbContext): Promise<WebhookSourceView[]> {
  authorize(actor, "settings.read");
  return queryRows<WebhookSourceView>(
    db,
    sql`select s.name, s.trusted_actions, s.created_by, ${isoUtc("s.created_at")} as created_at,
          coalesce((select json_agg(json_build_object('id', k.id, 'created_at', ${isoUtc("k.created_at")}) order by k.created_at)
                    from webhook_source_secrets k where k.tenant_id = s.tenant_id and k.source = s.name), '[]'::json) as secrets
        from webhook_sources s where s.tenant_id = ${actor.tenantId} order by s.name`,
  );
}

/**
 * Registers a source: `{name, trusted_actions}` → `{name, secret, secret_id, url_path}`; the secret is shown only here.
 * @throws DomainError forbidden, validation_failed (name, trusted_actions), conflict (409: the name is taken).
 */
export async function createWebhookSource(
  { db, actor }: VerbContext,
  { body, sealKey }: { body: unknown; sealKey: SealKey },
): Promise<{ name: string; secret: string; secret_id: string; trusted_actions: string[]; url_path: string }> {
  authorize(actor, "webhooks.manage");
  const parsed = sourceBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { name } = parsed.data;
  const actions = [...new Set(parsed.data.trusted_actions.map(canonicalName))].sort();
  const secret = newWebhookSecret();
  return db.transaction(async (tx) => {
    const created = await queryRows<{ name: string }>(
      tx,
      sql`insert into webhook_sources (tenant_id, name, trusted_actions, created_by)
          values (${actor.tenantId}, ${name}, array(select json_array_elements_text(${JSON.stringify(actions)}::json)), ${actorRef(actor).label})
          on conflict (tenant_id, name) do nothing returning name`,
    );
    if (!created.length) throw new DomainError("conflict", `A webhook source named ${name} already exists.`);
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into webhook_source_secrets (tenant_id, source, sealed)
          values (${actor.tenantId}, ${name}, ${sealSecret(sealKey, sourceBinding(actor.tenantId, name), secret)}) returning id`,
    );
    await appendAudit(tx, actor, {
      action: "webhook_source.created",
      target: `webhook_source:${name}`,
      details: { trusted_actions: actions, secret_id: row!.id },
    });
    return { name, secret, secret_id: row!.id, trusted_actions: actions, url_path: `/api/v1/webhooks/${name}` };
  });
}

/**
 * Replaces the actions a source is trusted to settle: `{trusted_actions}` → the source.
 * @throws DomainError forbidden, validation_failed, not_found.
 */
export async function setWebhookTrust(
  { db, actor }: VerbContext,
  { name, body }: { name: string; body: unknown },
): Promise<{ name: string; trusted_actions: string[] }> {
  authorize(actor, "webhooks.manage");
  checkSourceName(name);
  const parsed = trustBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const actions = [...new Set(parsed.data.trusted_actions.map(canonicalName))].sort();
  return db.transaction(async (tx) => {
    const rows = await queryRows<{ name: string }>(
      tx,
      sql`update webhook_sources set trusted_actions = array(select json_array_elements_text(${JSON.stringify(actions)}::json))
          where tenant_id = ${actor.tenantId} and name = ${name} returning name`,
    );
    if (!rows.length) throw notFound(`Webhook source ${name}`);
    await appendAudit(tx, actor, {
      action: "webhook_source.trust_changed",
      target: `webhook_source:${name}`,
      details: { trusted_actions: actions },
    });
    return { name, trusted_actions: actions };
  });
}

/**
 * Adds a new secret beside the current one (a rotation) → `{name, secret, secret_id}`, shown once. Both verify until
 * the old one is removed.
 * @throws DomainError forbidden, not_found, conflict (409: two secrets already; remove the old one first).
 */
export async function rotateWebhookSecret(
  { db, actor }: VerbContext,
  { name, sealKey }: { name: string; sealKey: SealKey },
): Promise<{ name: string; secret: string; secret_id: string }> {
  authorize(actor, "webhooks.manage");
  checkSourceName(name);
  const secret = newWebhookSecret();
  return db.transaction(async (tx) => {
    // The source row's lock orders concurrent rotations, so the count below cannot be passed by two at once.
    const source = await queryRows<{ n: number }>(
      tx,
      sql`select (select count(*)::int from webhook_source_secrets k where k.tenant_id = s.tenant_id and k.source = s.name) as n
          from webhook_sources s where s.tenant_id = ${actor.tenantId} and s.name = ${name} for update`,
    );
    if (!source.length) throw notFound(`Webhook source ${name}`);
    if (source[0]!.n >= MAX_SECRETS) {
      throw new DomainError(
        "conflict",
        `Webhook source ${name} already has ${MAX_SECRETS} secrets; remove the old one before rotating again.`,
      );
    }
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into webhook_source_secrets (tenant_id, source, sealed)
          values (${actor.tenantId}, ${name}, ${sealSecret(sealKey, sourceBinding(actor.tenantId, name), secret)}) returning id`,
    );
    await appendAudit(tx, actor, {
      action: "webhook_source.secret_rotated",
      target: `webhook_source:${name}`,
      details: { secret_id: row!.id },
    });
    return { name, secret, secret_id: row!.id };
  });
}

/**
 * Removes one secret of a source (the old one after a rotation); messages signed with it no longer verify.
 * @throws DomainError forbidden, not_found, conflict (409: it is the source's only secret).
 */
export async function removeWebhookSecret(
  { db, actor }: VerbContext,
  { name, secretId }: { name: string; secretId: string },
): Promise<void> {
  authorize(actor, "webhooks.manage");
  checkSourceName(name);
  if (!z.uuid().safeParse(secretId).success) throw notFound(`Secret ${secretId} of webhook source ${name}`);
  await db.transaction(async (tx) => {
    const source = await queryRows<{ n: number }>(
      tx,
      sql`select (select count(*)::int from webhook_source_secrets k where k.tenant_id = s.tenant_id and k.source = s.name) as n
          from webhook_sources s where s.tenant_id = ${actor.tenantId} and s.name = ${name} for update`,
    );
    if (!source.length) throw notFound(`Webhook source ${name}`);
    const removed = await queryRows(
      tx,
      sql`delete from webhook_source_secrets where tenant_id = ${actor.tenantId} and source = ${name} and id = ${secretId}
          and ${source[0]!.n} > 1 returning id`,
    );
    if (!removed.length) {
      const exists = await queryRows(
        tx,
        sql`select 1 from webhook_source_secrets where tenant_id = ${actor.tenantId} and source = ${name} and id = ${secretId}`,
      );
      if (!exists.length) throw notFound(`Secret ${secretId} of webhook source ${name}`);
      throw new DomainError(
        "conflict",
        `That is the only secret of webhook source ${name}; rotate first, or delete the source.`,
      );
    }
    await appendAudit(tx, actor, {
      action: "webhook_source.secret_removed",
      target: `webhook_source:${name}`,
      details: { secret_id: secretId },
    });
  });
}

/** Deletes a source and its secrets; the messages it sent stay as evidence. @throws DomainError forbidden, not_found */
export async function deleteWebhookSource({ db, actor }: VerbContext, { name }: { name: string }): Promise<void> {
  authorize(actor, "webhooks.manage");
  checkSourceName(name);
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`delete from webhook_sources where tenant_id = ${actor.tenantId} and name = ${name} returning name`,
    );
    if (!rows.length) throw notFound(`Webhook source ${name}`);
    await tx.execute(sql`delete from webhook_source_secrets where tenant_id = ${actor.tenantId} and source = ${name}`);
    await appendAudit(tx, actor, { action: "webhook_source.deleted", target: `webhook_source:${name}` });
  });
}
