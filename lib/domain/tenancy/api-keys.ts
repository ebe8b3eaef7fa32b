/**
 * Runtime API keys: tenant-scoped, stored as a sha256 hash, shown once, revocable.
 * Generated keys look like `rck_<43 base64url chars>` (the prefix lets secret scanners and our redaction find
 * them). A key is found by its hash alone; api_keys is small and can be a Citus reference table — see
 * docs/decisions/0002-api-keys.md.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { appendAudit } from "../audit/append";
import { authorize, type ApiKeyActor } from "../authz";
import { sha256Hex } from "../crypto/canonical";
import { DomainError, notFound, validationError } from "../errors";
import { typedText } from "../typed-text";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { VerbContext } from "../context";
import { API_KEY_SCOPES, type ApiKeyScopeKind } from "@/db/schema/enums";
import { scopeFromRow } from "./api-key-scope";

/** A new random key (256 bits). */
export function newApiKey(): string {
  return `rck_${randomBytes(32).toString("base64url")}`;
}

/** Keys chosen by an operator (e.g. `CUSTODY_DEMO_API_KEY`) must be long printable tokens. */
export function isAcceptableKey(key: string): boolean {
  return /^[\x21-\x7e]{20,200}$/.test(key);
}

/** What lists show of a key: its first and last characters. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}

export type ApiKeyView = {
  id: string;
  name: string;
  display_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** From this instant the key is refused (401 api_key_expired); null = never. */
  expires_at: string | null;
  /** The expiry has come: the key is refused (401 api_key_expired). */
  expired: boolean;
  scope: ApiKeyScopeKind;
  /** With scope `task_prefix`: the prefix task ids must start with. */
  task_prefix: string | null;
};

/** The longest a key may live: one year and a day (a yearly rotation with a day's overlap). */
export const MAX_KEY_LIFETIME_DAYS = 366;

/**
 * Body of `POST /api/v1/settings/api-keys`: a name; optionally a scope (default `full`), the task prefix a
 * `task_prefix` key is bound to, and `expires_at` (RFC 3339 with an offset, in the future, at most
 * {@link MAX_KEY_LIFETIME_DAYS} days ahead; absent or null = never). Unknown fields are refused, as elsewhere.
 */
export const createApiKeyBodySchema = z
  .strictObject({
    name: typedText("name", { max: 100, hint: "give the key a name, e.g. the runtime it is for" }),
    scope: z.enum(API_KEY_SCOPES).optional(),
    task_prefix: typedText("task_prefix", { max: 100, hint: "the start every task id of this key shares" }).optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.scope === "task_prefix") !== (b.task_prefix !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["task_prefix"],
        message:
          b.scope === "task_prefix"
            ? "a task_prefix key needs the prefix its task ids start with"
            : "task_prefix is given only with scope task_prefix",
      });
    }
  });

/**
 * Creates a key from a request body `{name}`. Returns the key once; only its hash is stored.
 * @param opts.key a pre-chosen key (must be of this tenant's format), otherwise a random one.
 * @throws DomainError forbidden (role), validation_failed (422: name missing, empty, too long, with control or
 *   bidi override characters, unknown fields; key format).
 */
export async function createApiKey(
  { db, actor }: VerbContext,
  { body, ...opts }: { body: unknown; key?: string },
): Promise<{
  id: string;
  key: string;
  name: string;
  scope: ApiKeyScopeKind;
  task_prefix: string | null;
  expires_at: string | null;
}> {
  authorize(actor, "api_keys.manage");
  const parsed = createApiKeyBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const { name, scope = "full", task_prefix = null, expires_at = null } = parsed.data;
  if (expires_at !== null) {
    const at = Date.parse(expires_at);
    const now = Date.now();
    if (at <= now)
      throw new DomainError("validation_failed", "expires_at: must be in the future.", {
        fields: [{ path: "expires_at", message: "must be in the future" }],
      });
    if (at > now + MAX_KEY_LIFETIME_DAYS * 86_400_000) {
      throw new DomainError(
        "validation_failed",
        `expires_at: a key lives at most ${MAX_KEY_LIFETIME_DAYS} days; make a new one before it expires.`,
        { fields: [{ path: "expires_at", message: `at most ${MAX_KEY_LIFETIME_DAYS} days ahead` }] },
      );
    }
  }
  const key = opts.key ?? newApiKey();
  if (!isAcceptableKey(key)) {
    throw new DomainError("validation_failed", "key: a chosen key must be 20–200 printable characters without spaces.");
  }
  return db.transaction(async (tx) => {
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into api_keys (tenant_id, name, display_prefix, key_hash, created_by, scope, task_prefix, expires_at)
          values (${actor.tenantId}, ${name}, ${displayPrefix(key)}, ${sha256Hex(key)},
                  ${actor.kind === "user" ? actor.userId : null}, ${scope}, ${task_prefix}, ${expires_at})
          returning id`,
    );
    await appendAudit(tx, actor, {
      action: "api_key.created",
      target: `api_key:${row!.id}`,
      details: { name, scope, ...(task_prefix !== null ? { task_prefix } : {}), expires_at },
    });
    return { id: row!.id, key, name, scope, task_prefix, expires_at };
  });
}

/** Lists a tenant's keys (never the key). @throws DomainError forbidden */
export async function listApiKeys({ db, actor }: VerbContext): Promise<ApiKeyView[]> {
  authorize(actor, "settings.read");
  return queryRows<ApiKeyView>(
    db,
    sql`select id, name, display_prefix, ${isoUtc("created_at")} as created_at,
               ${isoUtc("last_used_at")} as last_used_at, ${isoUtc("revoked_at")} as revoked_at,
               ${isoUtc("expires_at")} as expires_at, coalesce(expires_at <= now(), false) as expired, scope, task_prefix
        from api_keys where tenant_id = ${actor.tenantId} order by created_at desc limit 200`,
  );
}

/** Revokes a key; requests with it get 401 from then on. @throws DomainError forbidden, not_found, conflict */
export async function revokeApiKey({ db, actor }: VerbContext, { keyId }: { keyId: string }): Promise<void> {
  authorize(actor, "api_keys.manage");
  if (!/^[0-9a-f-]{36}$/.test(keyId)) throw notFound("API key");
  await db.transaction(async (tx) => {
    const rows = await queryRows<{ name: string }>(
      tx,
      sql`update api_keys set revoked_at = now()
          where tenant_id = ${actor.tenantId} and id = ${keyId} and revoked_at is null returning name`,
    );
    if (!rows.length) {
      const exists = await queryRows(
        tx,
        sql`select 1 from api_keys where tenant_id = ${actor.tenantId} and id = ${keyId}`,
      );
      if (!exists.length) throw notFound("API key");
      throw new DomainError("conflict", "This key is already revoked.");
    }
    await appendAudit(tx, actor, {
      action: "api_key.revoked",
      target: `api_key:${keyId}`,
      details: { name: rows[0]!.name },
    });
  });
}

/**
 * Resolves a bearer key to its actor with its scope (decision 0044), or null when unknown or revoked. Touches
 * `last_used_at` at most once a minute (not for an expired key).
 * @throws DomainError api_key_expired (401) — the key's `expires_at` has come (the instant itself counts as expired);
 *   details `{expired_at}`.
 */
export async function authenticateApiKey(db: Db, key: string): Promise<ApiKeyActor | null> {
  if (!isAcceptableKey(key)) return null;
  const rows = await queryRows<{
    tenant_id: string;
    id: string;
    name: string;
    stale: boolean;
    read_only: boolean;
    expired_at: string | null;
    scope: ApiKeyScopeKind;
    task_prefix: string | null;
  }>(
    db,
    sql`select k.tenant_id, k.id, k.name, k.scope, k.task_prefix,
               (k.last_used_at is null or k.last_used_at < now() - interval '1 minute') as stale,
               (t.read_only_since is not null) as read_only,
               case when k.expires_at <= now() then ${isoUtc("k.expires_at")} end as expired_at
        from api_keys k join tenants t on t.id = k.tenant_id
        where k.key_hash = ${sha256Hex(key)} and k.revoked_at is null`,
  );
  const row = rows[0];
  if (!row) return null;
  if (row.expired_at) {
    throw new DomainError(
      "api_key_expired",
      `This API key expired at ${row.expired_at}. Create a new one under Settings → Runtime API keys.`,
      { expired_at: row.expired_at },
    );
  }
  const tenantId = row.tenant_id;
  if (row.stale) {
    await db.execute(sql`update api_keys set last_used_at = now() where tenant_id = ${tenantId} and id = ${row.id}`);
  }
  const scope = scopeFromRow(row.scope, row.task_prefix);
  return {
    kind: "api_key",
    tenantId,
    keyId: row.id,
    keyName: row.name,
    ...(scope.kind === "full" ? {} : { scope }),
    ...(row.read_only ? { readOnly: true } : {}),
  };
}
