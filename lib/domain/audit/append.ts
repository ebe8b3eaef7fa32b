/**
 * Appends one entry to a tenant's hash-chained audit log (docs/concepts.md#audit-log).
 * The chain's head (last seq and hash per tenant) lives in `audit_heads`: one statement moves the head and inserts
 * the entry, so entries of one tenant are serialized by the head row's lock (held to the end of the transaction) and
 * the chain never forks. PostgreSQL computes the hash from the previous one — sha256(prev_hash || RFC 8785 JSON of
 * the entry) — with the JSON assembled here around the one field it cannot know in advance, `seq`.
 * Call inside the transaction that makes the change being audited.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { sql, type SQL } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { actorRef, type Actor } from "../authz";
import { canonicalJson, sha256Hex } from "../crypto/canonical";
import type { AuditAction } from "./actions";

export const GENESIS_HASH = "0".repeat(64);

export type AuditEntryInput = {
  /** One of the closed vocabulary {@link AuditAction} (lib/domain/audit/actions.ts: names and their rule). */
  action: AuditAction;
  /** What the action touched, e.g. `task:case-918` or `side_effect:case-918/update_record`. */
  target: string;
  details?: Record<string, unknown>;
};

/**
 * The hashed fields of an entry. `action` is text: an entry written before the vocabulary's naming rule keeps the name
 * it was written under, and its hash covers that name.
 */
export type AuditEntryContent = {
  tenantId: string;
  seq: number;
  at: string;
  actorKind: string;
  actorId: string;
  actorLabel: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
};

/** The hashed content of an entry: sha256(prev_hash || RFC 8785 JSON of the entry fields). */
export function auditEntryHash(prevHash: string, entry: AuditEntryContent): string {
  return sha256Hex(prevHash + canonicalJson(entry));
}

/**
 * The RFC 8785 JSON of an entry split around its `seq`: `prefix + String(seq) + suffix === canonicalJson(entry)`.
 * RFC 8785 sorts keys, and `seq` sorts after action, actorId, actorKind, actorLabel, at and details and before target
 * and tenantId, so both halves are canonical JSON of the other fields.
 */
export function auditEntryJsonAroundSeq(entry: Omit<AuditEntryContent, "seq">): { prefix: string; suffix: string } {
  const head = canonicalJson({
    action: entry.action,
    actorId: entry.actorId,
    actorKind: entry.actorKind,
    actorLabel: entry.actorLabel,
    at: entry.at,
    details: entry.details,
  });
  const tail = canonicalJson({ target: entry.target, tenantId: entry.tenantId });
  return { prefix: `${head.slice(0, -1)},"seq":`, suffix: `,${tail.slice(1)}` };
}

/** What both ways of writing an entry store: the actor's reference, the time, and the entry's JSON around `seq`. */
function entryParts(actor: Actor, input: AuditEntryInput) {
  const tenantId = actor.tenantId;
  const ref = actorRef(actor);
  const at = new Date().toISOString();
  const details = input.details ?? {};
  const { prefix, suffix } = auditEntryJsonAroundSeq({
    tenantId,
    at,
    actorKind: ref.kind,
    actorId: ref.id,
    actorLabel: ref.label,
    action: input.action,
    target: input.target,
    details,
  });
  return { tenantId, ref, at, details, prefix, suffix };
}

/**
 * Writes the entry and returns its sequence number and hash, in one statement (head upsert + insert).
 * @param tx an open transaction (the head row stays locked until its end).
 */
export async function appendAudit(
  tx: Db,
  actor: Actor,
  input: AuditEntryInput,
): Promise<{ seq: number; hash: string }> {
  const { tenantId, ref, at, details, prefix, suffix } = entryParts(actor, input);
  const rows = await queryRows<{ seq: string | number; hash: string }>(
    tx,
    sql`with head as (
          insert into audit_heads as h (tenant_id, seq, prev_hash, hash)
          values (${tenantId}, 1, ${GENESIS_HASH},
                  encode(sha256(convert_to(${GENESIS_HASH}::text || ${prefix}::text || '1' || ${suffix}::text, 'UTF8')), 'hex'))
          on conflict (tenant_id) do update
            set seq = h.seq + 1, prev_hash = h.hash,
                hash = encode(sha256(convert_to(h.hash || ${prefix}::text || (h.seq + 1)::text || ${suffix}::text, 'UTF8')), 'hex')
          returning seq, prev_hash, hash)
        insert into audit_log (tenant_id, seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash)
        select ${tenantId}, head.seq, ${at}::timestamptz, ${ref.kind}::actor_kind, ${ref.id}, ${ref.label}, ${input.action},
               ${input.target}, ${JSON.stringify(details)}::jsonb, head.prev_hash, head.hash
        from head
        returning seq, hash`,
  );
  const row = rows[0]!;
  return { seq: Number(row.seq), hash: row.hash };
}

/**
 * Writes an entry for the chain without taking the chain's head (docs/decisions/0020-audit-sealing.md): one insert
 * into `audit_pending`, in the transaction of the change it records, so the entry commits with the change or not at
 * all. Hot paths (intents, receipts, checkpoints) run inside {@link withAuditSealed}, which seals after the commit; a tenant's
 * writers then no longer wait for each other's commits on the head row. The entry's JSON is split around `seq`
 * exactly as {@link appendAudit} splits it, so a sealed entry hashes and verifies like any other.
 * @param tx an open transaction.
 */
export async function appendAuditPending(tx: Db, actor: Actor, input: AuditEntryInput): Promise<void> {
  const { tenantId, ref, at, details, prefix, suffix } = entryParts(actor, input);
  const [row] = await queryRows<{ id: string | number }>(
    tx,
    sql`insert into audit_pending (tenant_id, at, actor_kind, actor_id, actor_label, action, target, details, json_prefix, json_suffix)
        values (${tenantId}, ${at}::timestamptz, ${ref.kind}::actor_kind, ${ref.id}, ${ref.label}, ${input.action},
                ${input.target}, ${JSON.stringify(details)}::jsonb, ${prefix}, ${suffix})
        returning id`,
  );
  notePendingAudit(row?.id);
}

/**
 * Writes many entries for the chain in one statement (one insert into `audit_pending`, in arrival order), as
 * {@link appendAuditPending} writes one: for changes that move many rows at once.
 * @param tx an open transaction.
 */
export async function appendAuditPendingMany(
  tx: Db,
  entries: ReadonlyArray<{ actor: Actor; input: AuditEntryInput }>,
): Promise<void> {
  if (!entries.length) return;
  const rows = entries.map(({ actor, input }) => {
    const { tenantId, ref, at, details, prefix, suffix } = entryParts(actor, input);
    return {
      tenant_id: tenantId,
      at,
      actor_kind: ref.kind,
      actor_id: ref.id,
      actor_label: ref.label,
      action: input.action,
      target: input.target,
      details,
      json_prefix: prefix,
      json_suffix: suffix,
    };
  });
  const [row] = await queryRows<{ upto: string | number | null }>(
    tx,
    sql`with ins as (
          insert into audit_pending (tenant_id, at, actor_kind, actor_id, actor_label, action, target, details, json_prefix, json_suffix)
          select r.tenant_id, r.at, r.actor_kind, r.actor_id, r.actor_label, r.action, r.target, r.details, r.json_prefix, r.json_suffix
          from rows from (json_to_recordset(${JSON.stringify(rows)}::json) as (
            tenant_id uuid, at timestamptz, actor_kind actor_kind, actor_id text, actor_label text, action text, target text,
            details jsonb, json_prefix text, json_suffix text)) with ordinality as r(
            tenant_id, at, actor_kind, actor_id, actor_label, action, target, details, json_prefix, json_suffix, n)
          order by r.n
          returning id)
        select max(id) as upto from ins`,
  );
  notePendingAudit(row?.upto);
}

/** A value of an entry that {@link auditPendingRowsSql} takes from each source row: an SQL expression of text or integer type. */
type RowValue = { readonly rowValue: SQL };

/** Marks an SQL expression over the source rows as a per-row value of an entry ({@link auditPendingRowsSql}). */
export function rowValue(expr: SQL): RowValue {
  return { rowValue: expr };
}

const isRowValue = (v: unknown): v is RowValue => typeof v === "object" && v !== null && "rowValue" in v;

/**
 * SQL: an `INSERT INTO audit_pending … SELECT … FROM <from> … RETURNING id` that writes one entry per source row, for a
 * statement that moves rows and audits them in the same statement (a CTE), so the entries commit with the change.
 * The entry's JSON around `seq` is the one {@link appendAuditPending} would write: made here as RFC 8785 JSON with a
 * placeholder per row value, and completed by PostgreSQL with `to_json(value)::text`, which writes text and integers
 * exactly as RFC 8785 does (the same escapes as ECMAScript's JSON.stringify for the code points PostgreSQL text can
 * hold). `tests/integration/side-effect-lifecycle.test.ts` compares both for arbitrary text.
 * @param entry the action, the target (constant or per row) and the details (constants and per-row values, one level).
 * @param from the source rows, e.g. sql`expired x` (a CTE's name and alias).
 */
export function auditPendingRowsSql(
  actor: Actor,
  entry: { action: AuditAction; target: string | RowValue; details: Record<string, unknown> },
  from: SQL,
): SQL {
  const values: SQL[] = [];
  const mark = (v: RowValue): string => {
    values.push(v.rowValue);
    return `\u0000${values.length - 1}\u0000`;
  };
  const constants: Record<string, unknown> = {};
  const perRow: Array<[string, SQL]> = [];
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry.details)) {
    if (isRowValue(v)) {
      details[k] = mark(v);
      perRow.push([k, v.rowValue]);
    } else {
      if (JSON.stringify(v)?.includes("\\u0000")) throw new Error("an audit constant may not hold NUL");
      details[k] = constants[k] = v;
    }
  }
  const target = typeof entry.target === "string" ? entry.target : mark(entry.target);
  const targetSql = typeof entry.target === "string" ? sql`${entry.target}::text` : entry.target.rowValue;
  const { tenantId, ref, at, prefix, suffix } = entryParts(actor, { action: entry.action, target, details });
  const detailsSql = perRow.length
    ? sql`${JSON.stringify(constants)}::jsonb || jsonb_build_object(${sql.join(
        perRow.map(([k, expr]) => sql`${k}::text, ${expr}`),
        sql`, `,
      )})`
    : sql`${JSON.stringify(constants)}::jsonb`;
  return sql`insert into audit_pending (tenant_id, at, actor_kind, actor_id, actor_label, action, target, details, json_prefix, json_suffix)
    select ${tenantId}::uuid, ${at}::timestamptz, ${ref.kind}::actor_kind, ${ref.id}::text, ${ref.label}::text,
           ${entry.action}::text, ${targetSql}, ${detailsSql}, ${templateSql(prefix, values)}, ${templateSql(suffix, values)}
    from ${from}
    returning id`;
}

/** The entry's JSON text with each `"\u0000<i>\u0000"` placeholder replaced by row value i as JSON (SQL text). */
function templateSql(json: string, values: SQL[]): SQL {
  const parts: SQL[] = [];
  let last = 0;
  for (const m of json.matchAll(/"\\u0000(\d+)\\u0000"/g)) {
    parts.push(sql`${json.slice(last, m.index)}::text`);
    parts.push(sql`coalesce(to_json(${values[Number(m[1])]!})::text, 'null')`);
    last = m.index + m[0].length;
  }
  parts.push(sql`${json.slice(last)}::text`);
  return sql`(${sql.join(parts, sql` || `)})`;
}

/** The pending entries a {@link withAuditSealed} call wrote: the highest id. */
const pendingWritten = new AsyncLocalStorage<{ upto: number }>();

/**
 * Tells the enclosing {@link withAuditSealed} call (if any) that its work wrote pending entries up to id `upto`, so it
 * seals them after the commit. For statements that write entries themselves ({@link auditPendingRowsSql}); without an
 * enclosing call the entries wait for the tenant's next seal.
 */
export function notePendingAudit(upto: string | number | null | undefined): void {
  const written = pendingWritten.getStore();
  if (written && upto !== null && upto !== undefined) written.upto = Math.max(written.upto, Number(upto));
}

/**
 * Runs `fn` (which commits changes audited with {@link appendAuditPending}), then seals the entries it wrote, whatever
 * `fn` answered or threw. Only waits for its own entries: when another call has sealed them meanwhile it returns at
 * once, and when it seals, it takes every entry of the tenant then pending.
 */
export async function withAuditSealed<T>(db: Db, tenantId: string, fn: () => Promise<T>): Promise<T> {
  const written = { upto: 0 };
  try {
    return await pendingWritten.run(written, fn);
  } finally {
    if (written.upto > 0) await sealAuditAfterCommit(db, tenantId, written.upto);
  }
}

/**
 * Moves a tenant's pending entries into the hash chain, in the order they were written (`seal_audit`, migration 0018):
 * one statement, many entries per call; returns at once, writing nothing, when none waits. Called after the commit of
 * a change that used {@link appendAuditPending}, and before the log is read. Entries a crash left pending are sealed by
 * the next call for their tenant.
 * @param db the tenant's walled database (outside a transaction: the seal commits on its own).
 * @param upto when given, return at once unless an entry with an id up to this one is still pending.
 * @returns how many entries this call sealed.
 */
export async function sealAudit(db: Db, tenantId: string, upto?: number): Promise<number> {
  const [row] = await queryRows<{ sealed: number }>(
    db,
    sql`select seal_audit(${tenantId}::uuid, ${upto ?? null}::bigint) as sealed`,
  );
  return Number(row?.sealed ?? 0);
}

/**
 * {@link sealAudit} after a commit that wrote pending entries. The change is already committed and answered, so a
 * failure here does not fail the request: the entries stay pending (durable) and the next seal of the tenant takes
 * them. The failure is logged (the error's message only).
 */
export async function sealAuditAfterCommit(db: Db, tenantId: string, upto?: number): Promise<void> {
  try {
    await sealAudit(db, tenantId, upto);
  } catch (err) {
    console.error(
      `audit: sealing pending entries failed; the next seal takes them (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
