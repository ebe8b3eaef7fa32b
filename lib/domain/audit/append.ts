/**
 * Appends one entry to a tenant's hash-chained audit log (DESIGN.md "Audit log").
 * The chain's head (last seq and hash per tenant) lives in `audit_heads`: one statement moves the head and inserts
 * the entry, so entries of one tenant are serialized by the head row's lock (held to the end of the transaction) and
 * the chain never forks. PostgreSQL computes the hash from the previous one — sha256(prev_hash || RFC 8785 JSON of
 * the entry) — with the JSON assembled here around the one field it cannot know in advance, `seq`.
 * Call inside the transaction that makes the change being audited.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { sql } from "drizzle-orm";
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
  const written = pendingWritten.getStore();
  if (written && row) written.upto = Math.max(written.upto, Number(row.id));
}

/** The pending entries a {@link withAuditSealed} call wrote: the highest id. */
const pendingWritten = new AsyncLocalStorage<{ upto: number }>();

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
