/**
 * Appends one entry to a tenant's hash-chained audit log (DESIGN.md "Audit log").
 * Entries of one tenant are serialized by a transaction-scoped advisory lock so the chain never forks.
 * Call inside the transaction that makes the change being audited.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { auditLog } from "@/db/schema";
import { actorRef, type Actor } from "../authz";
import { canonicalJson, sha256Hex } from "../crypto/canonical";

export const GENESIS_HASH = "0".repeat(64);

export type AuditEntryInput = {
  action: string;
  /** What the action touched, e.g. `task:case-918` or `side_effect:case-918/update_record`. */
  target: string;
  details?: Record<string, unknown>;
};

/** The hashed content of an entry: sha256(prev_hash || RFC 8785 JSON of the entry fields). */
export function auditEntryHash(prevHash: string, entry: {
  tenantId: string;
  seq: number;
  at: string;
  actorKind: string;
  actorId: string;
  actorLabel: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
}): string {
  return sha256Hex(prevHash + canonicalJson(entry));
}

/**
 * Writes the entry and returns its sequence number and hash.
 * @param tx an open transaction (the lock is released at its end).
 */
export async function appendAudit(
  tx: Db,
  actor: Actor,
  input: AuditEntryInput,
): Promise<{ seq: number; hash: string }> {
  const tenantId = actor.tenantId;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${"audit:" + tenantId}, 0))`);
  const last = await queryRows<{ seq: string | number; hash: string }>(
    tx,
    sql`select seq, hash from audit_log where tenant_id = ${tenantId} order by seq desc limit 1`,
  );
  const prevHash = last[0]?.hash ?? GENESIS_HASH;
  const seq = Number(last[0]?.seq ?? 0) + 1;
  const ref = actorRef(actor);
  const at = new Date().toISOString();
  const details = input.details ?? {};
  const hash = auditEntryHash(prevHash, {
    tenantId,
    seq,
    at,
    actorKind: ref.kind,
    actorId: ref.id,
    actorLabel: ref.label,
    action: input.action,
    target: input.target,
    details,
  });
  await tx.insert(auditLog).values({
    tenantId,
    seq,
    at: new Date(at),
    actorKind: ref.kind,
    actorId: ref.id,
    actorLabel: ref.label,
    action: input.action,
    target: input.target,
    details,
    prevHash,
    hash,
  });
  return { seq, hash };
}
