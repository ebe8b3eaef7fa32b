/**
 * Reading and verifying a tenant's audit log (docs/concepts.md#audit-log: the chain verifies on the Audit page and
 * at `GET /api/v1/audit/verify`).
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { authorize } from "../authz";
import { auditEntryHash, GENESIS_HASH, sealAudit } from "./append";
import type { VerbContext } from "../context";

export type AuditEntryView = {
  seq: number;
  at: string;
  actor_kind: string;
  actor_label: string;
  /**
   * The action as stored: one of lib/domain/audit/actions.ts, or, for an entry written before that vocabulary's naming
   * rule, the name it was written under (docs/decisions/0023-typed-catalogues.md). Shown and filtered as text.
   */
  action: string;
  target: string;
  details: Record<string, unknown>;
  hash: string;
};

type Row = {
  seq: string | number;
  at: Date | string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
};

/**
 * Newest entries first, `limit` per page, before sequence `beforeSeq` when given.
 * @throws DomainError forbidden
 */
export async function listAudit(
  { db, actor }: VerbContext,
  opts: { beforeSeq?: number; limit?: number; target?: string } = {},
): Promise<{ entries: AuditEntryView[]; next_before: number | null }> {
  authorize(actor, "audit.read");
  // Entries a crash left pending join the chain before it is read (docs/decisions/0020-audit-sealing.md).
  await sealAudit(db, actor.tenantId);
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 200);
  const rows = await queryRows<Row>(
    db,
    sql`select seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash from audit_log
        where tenant_id = ${actor.tenantId}
          ${opts.beforeSeq ? sql`and seq < ${opts.beforeSeq}` : sql``}
          ${opts.target ? sql`and target = ${opts.target}` : sql``}
        order by seq desc limit ${limit + 1}`,
  );
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({
      seq: Number(r.seq),
      at: new Date(r.at).toISOString(),
      actor_kind: r.actor_kind,
      actor_label: r.actor_label,
      action: r.action,
      target: r.target,
      details: r.details,
      hash: r.hash,
    })),
    next_before: rows.length > limit ? Number(page[page.length - 1]!.seq) : null,
  };
}

export type ChainCheck = {
  ok: boolean;
  checked: number;
  broken_at: number | null;
  message: string;
  /** The first entry that does not verify (as stored), when the chain is broken. */
  first_bad_entry?: AuditEntryView & { prev_hash: string; expected_prev_hash: string };
  /**
   * When the chain's last entry is not the head the server recorded (`audit_heads`, decision 0020): entries after
   * `last_seq` up to `recorded_seq` were deleted, or the last one replaced (decision 0035).
   */
  truncated?: { recorded_seq: number; recorded_hash: string; last_seq: number; last_hash: string };
};

/**
 * Recomputes every entry's hash from its content and its predecessor's hash, then compares the chain's end with the
 * head the server recorded when it wrote the last entry (decision 0035): deleting the newest entries is reported at
 * once, not when the next entry is written.
 * @returns ok with the count checked, or the first sequence number whose hash or link does not match (for a cut-off
 *   chain: the first missing one, with `truncated`).
 */
export async function verifyAuditChain({ db, actor }: VerbContext): Promise<ChainCheck> {
  authorize(actor, "audit.read");
  await sealAudit(db, actor.tenantId);
  // The head first: entries written while the chain is read (after the head) are left for the next check.
  const [head] = await queryRows<{ seq: string | number; hash: string }>(
    db,
    sql`select seq, hash from audit_heads where tenant_id = ${actor.tenantId}`,
  );
  const upTo = head ? sql`and seq <= ${Number(head.seq)}` : sql``;
  let prev = GENESIS_HASH;
  let checked = 0;
  let after = 0;
  for (;;) {
    const rows = await queryRows<Row>(
      db,
      sql`select seq, at, actor_kind, actor_id, actor_label, action, target, details, prev_hash, hash from audit_log
          where tenant_id = ${actor.tenantId} and seq > ${after} ${upTo} order by seq limit 1000`,
    );
    if (!rows.length) break;
    for (const r of rows) {
      const seq = Number(r.seq);
      const expected = auditEntryHash(prev, {
        tenantId: actor.tenantId,
        seq,
        at: new Date(r.at).toISOString(),
        actorKind: r.actor_kind,
        actorId: r.actor_id,
        actorLabel: r.actor_label,
        action: r.action,
        target: r.target,
        details: r.details,
      });
      if (r.prev_hash !== prev || r.hash !== expected || seq !== checked + 1) {
        return {
          ok: false,
          checked,
          broken_at: seq,
          message: `Entry #${seq} does not match the chain: the log was altered at or before it.`,
          first_bad_entry: {
            seq,
            at: new Date(r.at).toISOString(),
            actor_kind: r.actor_kind,
            actor_label: r.actor_label,
            action: r.action,
            target: r.target,
            details: r.details,
            hash: r.hash,
            prev_hash: r.prev_hash,
            expected_prev_hash: prev,
          },
        };
      }
      prev = r.hash;
      checked++;
      after = seq;
    }
  }
  const recordedSeq = head ? Number(head.seq) : 0;
  const recordedHash = head ? head.hash : GENESIS_HASH;
  if (recordedSeq !== checked || recordedHash !== prev) {
    const missing = recordedSeq > checked ? recordedSeq - checked : 0;
    return {
      ok: false,
      checked,
      broken_at: checked + 1,
      message: missing
        ? `The chain ends at entry #${checked}, but the server recorded entry #${recordedSeq} as its last: ${missing} ${missing === 1 ? "entry was" : "entries were"} deleted from the end of the log.`
        : `The chain's last entry (#${checked}) is not the one the server recorded as its last (#${recordedSeq}): the end of the log was altered.`,
      truncated: { recorded_seq: recordedSeq, recorded_hash: recordedHash, last_seq: checked, last_hash: prev },
    };
  }
  return {
    ok: true,
    checked,
    broken_at: null,
    message: checked ? `All ${checked} entries verify.` : "The log is empty.",
  };
}
