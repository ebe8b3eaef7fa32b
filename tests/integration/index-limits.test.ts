/**
 * Every indexed text value has a boundary limit (decision 0028). Walks the indexes and unique keys of the migrated test
 * database (`pg_index`, expression and partial indexes included) and fails when a key column or expression of variable
 * length has no entry in {@link BOUNDS} — so a new index over a value without a limit fails here — or when the longest
 * values the limits admit could not fit one B-tree entry (2,704 bytes on 8 KiB pages).
 * Each entry names the limit of lib/domain/limits.ts that is checked where the value enters (the unit tests
 * tests/unit/boundary-limits.test.ts and the API tests tests/integration/boundary-limits.test.ts show those checks).
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "@/db";
import { LIMITS, type BoundaryLimit } from "@/lib/domain/limits";
import { testDbForFile } from "./helpers";

const handle = testDbForFile();

/** The longest value an indexed expression can hold, in bytes, and why. */
type Bound = { maxBytes: number; how: string };

/** A value of a pattern of ASCII characters (one byte each). */
const ascii = (limit: BoundaryLimit): Bound => ({ maxBytes: limit.max, how: `the ${limit.name} limit (ASCII)` });
/** A value of any plain text: a UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair 4 for 2 units). */
const text = (limit: BoundaryLimit): Bound => ({ maxBytes: 3 * limit.max, how: `the ${limit.name} limit` });
/** A value the server makes (a hash, an id it composes from limited parts). */
const server = (maxBytes: number, how: string): Bound => ({ maxBytes, how });

const HASH = server(64, "sha256 hex the server computes");

/**
 * Every variable-length key of every index, as `table.expression` (`pg_get_indexdef(index, column, true)`), and the
 * bound that holds it.
 */
const BOUNDS: Record<string, Bound> = {
  "api_keys.key_hash": HASH,
  "approval_action_rules.action": text(LIMITS.actionName),
  "approval_requests.task_id": ascii(LIMITS.taskId),
  "approval_requests.idempotency_key": ascii(LIMITS.idempotencyKey),
  "approval_requests.COALESCE(payload_digest, ''::text)": text(LIMITS.digest),
  "approval_requests.side_effect": ascii(LIMITS.sideEffectName),
  "artifacts.task_id": ascii(LIMITS.taskId),
  "artifacts.object_ref": text(LIMITS.artifactRef),
  "artifacts.sha256": server(64, "a lower-case hex sha256 (the record's pattern)"),
  "artifact_contents.sha256": server(64, "a lower-case hex sha256 the server checked against the bytes"),
  "export_bundles.digest": HASH,
  // `side_effect:<task>/<name>`, `credential:<task>/<ref>`, `principal:<p>`, `tool:<t>`, `action:<a>`, or a uuid.
  "audit_log.target": server(
    Math.max(
      12 + LIMITS.taskId.max + 1 + LIMITS.sideEffectName.max,
      11 + LIMITS.taskId.max + 1 + 3 * LIMITS.credentialRef.max,
      10 + 3 * LIMITS.principal.max,
      5 + 3 * LIMITS.toolName.max,
      7 + 3 * LIMITS.actionName.max,
    ),
    "composed by the server from limited parts",
  ),
  "custody_maps.workflow": text(LIMITS.workflow),
  // A runtime's id, or one the server makes: `custody:revocation-check:<task>:<ref>:<seq>` is the longest.
  "events.event_id": server(
    Math.max(3 * LIMITS.eventId.max, 25 + LIMITS.taskId.max + 1 + 3 * LIMITS.credentialRef.max + 21),
    "the event id limit, or an id the server composes from limited parts",
  ),
  "event_ids.event_id": server(
    Math.max(3 * LIMITS.eventId.max, 25 + LIMITS.taskId.max + 1 + 3 * LIMITS.credentialRef.max + 21),
    "the same ids as events.event_id (decision 0054)",
  ),
  "events.task_id": ascii(LIMITS.taskId),
  "events.type": ascii(LIMITS.eventType),
  "events.environment_id": text(LIMITS.environmentId),
  "events.(attrs ->> 'credential_ref'::text)": text(LIMITS.credentialRef),
  // lower() may map a character to a longer one: at most 4 bytes per UTF-16 code unit.
  "events.lower(attrs ->> 'host'::text)": server(4 * LIMITS.host.max, `the ${LIMITS.host.name} limit, lower-cased`),
  "gate_asks.task_id": ascii(LIMITS.taskId),
  "invitations.email": text(LIMITS.email),
  "invitations.token_hash": HASH,
  "policy_versions.digest": HASH,
  "principal_revocations.principal": text(LIMITS.principal),
  "sessions.id_hash": HASH,
  "side_effect_payloads.task_id": ascii(LIMITS.taskId),
  "side_effect_payloads.name": ascii(LIMITS.sideEffectName),
  // The intent's payload_digest, lower-cased without its prefix (checked against the payload before it is kept).
  "side_effect_payloads.payload_digest": text(LIMITS.digest),
  "side_effects.task_id": ascii(LIMITS.taskId),
  "side_effects.name": ascii(LIMITS.sideEffectName),
  "side_effects.idempotency_key": ascii(LIMITS.idempotencyKey),
  "side_effects.call_id": text(LIMITS.callId),
  // The duplicate-payload probe (decision 0029): the payload digest without its `sha256:` prefix, lower-cased.
  "side_effects.lower(regexp_replace(payload_digest, '^sha256:'::text, ''::text, 'i'::text))": text(LIMITS.digest),
  "sign_in_throttle.email": text(LIMITS.signInEmail),
  "sign_in_throttle.source": ascii(LIMITS.clientAddress),
  "task_checkpoints.task_id": ascii(LIMITS.taskId),
  "tasks.task_id": ascii(LIMITS.taskId),
  "tasks.principal": text(LIMITS.principal),
  // `attrs.workflow` of a task.created event, checked on entry (decision 0049).
  "tasks.workflow": text(LIMITS.workflow),
  "tenants.slug": ascii(LIMITS.workspaceSlug),
  // Spending limits (decision 0033): principal and action in canonical form (ASCII, so lower case keeps the length).
  "spend_records.task_id": ascii(LIMITS.taskId),
  "spend_records.side_effect": ascii(LIMITS.sideEffectName),
  "spend_records.idempotency_key": ascii(LIMITS.idempotencyKey),
  "spend_records.principal": text(LIMITS.principal),
  "spend_records.action": text(LIMITS.actionName),
  "spend_records.currency": server(3, "an ISO 4217 code, checked by the intent schema"),
  "task_tool_definitions.task_id": ascii(LIMITS.taskId),
  // Canonical tool names (decision 0033): NFKC of a limited name may grow, at most 4 bytes per UTF-16 code unit.
  "task_tool_definitions.tool": server(4 * LIMITS.toolName.max, `the ${LIMITS.toolName.name} limit, in canonical form`),
  "tool_lookups.tool": text(LIMITS.toolName),
  "unapplied_receipts.task_id": ascii(LIMITS.taskId),
  "unapplied_receipts.name": ascii(LIMITS.sideEffectName),
  "users.email": text(LIMITS.email),
  // Standard Webhooks (decision 0040): source names and message ids of a restricted ASCII alphabet, checked on entry.
  "webhook_sources.name": ascii(LIMITS.webhookSourceName),
  "webhook_source_secrets.source": ascii(LIMITS.webhookSourceName),
  "webhook_messages.source": ascii(LIMITS.webhookSourceName),
  "webhook_messages.webhook_id": ascii(LIMITS.webhookId),
  "webhook_messages.idempotency_key": ascii(LIMITS.idempotencyKey),
  "notification_deliveries.id": server(36, "`msg_` and 32 hex digits the server derives"),
};

/** The largest B-tree entry on 8 KiB pages (PostgreSQL's `BTMaxItemSize`). */
const BTREE_MAX_ITEM = 2704;

type KeyColumn = { index: string; table: string; expr: string; varlena: boolean; size: number };

/**
 * The key columns of every index of the public schema (expression and partial indexes included). A partitioned
 * table's indexes are read on the table itself: each partition's copy has the same keys.
 */
async function indexKeys(): Promise<KeyColumn[]> {
  return queryRows<KeyColumn>(
    handle.db,
    sql`select i.relname as index, c.relname as "table", pg_get_indexdef(x.indexrelid, a.attnum, true) as expr,
               ty.typlen = -1 as varlena, greatest(ty.typlen, 0) as size
        from pg_index x
        join pg_class i on i.oid = x.indexrelid
        join pg_class c on c.oid = x.indrelid
        join pg_namespace n on n.oid = c.relnamespace
        join pg_attribute a on a.attrelid = x.indexrelid and a.attnum between 1 and x.indnkeyatts
        join pg_type ty on ty.oid = a.atttypid
        where n.nspname = 'public' and not c.relispartition
        order by 2, 1, a.attnum`,
  );
}

describe("every indexed text value has a boundary limit", () => {
  it("each variable-length key of each index or unique key is bound, and no bound is left over", async () => {
    const keys = await indexKeys();
    expect(keys.length).toBeGreaterThan(50);
    const varlena = [...new Set(keys.filter((k) => k.varlena).map((k) => `${k.table}.${k.expr}`))];
    const unbound = varlena.filter((k) => !(k in BOUNDS));
    expect(unbound, "indexed values without a boundary limit: add one to lib/domain/limits.ts and BOUNDS").toEqual([]);
    expect(Object.keys(BOUNDS).filter((k) => !varlena.includes(k))).toEqual([]);
    // The expression indexes on attrs are among them (a partial index's key is still a key).
    expect(varlena).toEqual(
      expect.arrayContaining(["events.(attrs ->> 'credential_ref'::text)", "events.lower(attrs ->> 'host'::text)"]),
    );
  });

  it("the longest values the limits admit fit one B-tree entry of every index", async () => {
    const keys = await indexKeys();
    const byIndex = new Map<string, KeyColumn[]>();
    for (const k of keys) byIndex.set(k.index, [...(byIndex.get(k.index) ?? []), k]);
    const tooBig: string[] = [];
    for (const [index, cols] of byIndex) {
      // 8 bytes of entry header, and per column at most 4 bytes of length header and 8 of alignment.
      const bytes =
        8 + cols.reduce((sum, k) => sum + 12 + (k.varlena ? BOUNDS[`${k.table}.${k.expr}`]!.maxBytes : k.size), 0);
      if (bytes > BTREE_MAX_ITEM) tooBig.push(`${index}: up to ${bytes} bytes`);
    }
    expect(tooBig).toEqual([]);
  });
});
