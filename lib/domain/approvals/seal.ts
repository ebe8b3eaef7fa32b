/**
 * Seals on approval decisions (docs/decisions/0036-sealed-decisions-and-bounded-reads.md): the server's keyed digest over
 * a decided request's tenant, task, id, binding (what the write is: side effect, key, principal, action, tool and its
 * definition, destination, classification, amount, payload and input digests, policy version, agent), decision, reason,
 * decider and times (decided, expires). Written in the transaction that records the decision, and checked by
 * {@link ./gate.approvalStanding} — the one rule the gate and the intent route answer from — so a decision written
 * outside the server (a pending request flipped to approved, an approval's bound digest or decider changed) stops the
 * gate with `evidence_mismatch` and lets no write go.
 *
 * The same scheme as side-effect seals (decision 0035): HMAC-SHA256 under a key derived from the server's Ed25519
 * signing key, over RFC 8785 JSON. A pending request (no decision) carries no seal: it lets nothing go, and forging one
 * only holds a write back.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { canonicalJson } from "../crypto/canonical";
import type { SigningKey } from "../crypto/signing";
import { LEGACY_SEAL } from "../side-effects/lifecycle/seal";
import { APPROVAL_COLUMNS, type ApprovalRow } from "./read";

/** What checks a decision's seal: the server's signing key and the tenant the row was read in. */
export type DecisionSealCheck = { key: SigningKey; tenantId: string };

const SEAL_PREFIX = "d1.";

const sealKeys = new WeakMap<SigningKey, Buffer>();

/** The HMAC key derived from the signing key (its PKCS#8 bytes under a label of its own), once per key. */
function sealKeyOf(key: SigningKey): Buffer {
  let k = sealKeys.get(key);
  if (!k) {
    const der = key.privateKey.export({ format: "der", type: "pkcs8" });
    k = createHmac("sha256", der).update("run-custody approval decision seal v1").digest();
    sealKeys.set(key, k);
  }
  return k;
}

/** The facts a decision's seal covers, as stored. */
function sealedFacts(tenantId: string, r: ApprovalRow): Record<string, unknown> {
  return {
    tenant_id: tenantId,
    task_id: r.task_id,
    id: r.id,
    side_effect: r.side_effect,
    idempotency_key: r.idempotency_key,
    principal: r.principal,
    action: r.action,
    tool: r.tool,
    tool_definition_digest: r.tool_definition_digest,
    destination_hosts: r.destination_hosts ?? null,
    input_classification: r.input_classification,
    amount: r.amount,
    currency: r.currency,
    payload_digest: r.payload_digest,
    input_digest: r.input_digest,
    policy_version: r.policy_version,
    agent: r.agent,
    agent_version: r.agent_version,
    decision: r.decision,
    reason: r.reason,
    decided_by_id: r.decided_by_id,
    decided_by: r.decided_by,
    decided_at: r.decided_at,
    expires_at: r.expires_at,
    self_approved: r.self_approved,
  };
}

/** The seal of a decided request's stored facts in `tenantId`. */
export function decisionSeal(key: SigningKey, tenantId: string, r: ApprovalRow): string {
  return (
    SEAL_PREFIX +
    createHmac("sha256", sealKeyOf(key))
      .update(canonicalJson(sealedFacts(tenantId, r)))
      .digest("base64url")
  );
}

/**
 * Whether a stored request's decision is what the server sealed: a pending one (no decision) always is; one marked
 * `legacy` (decided before seals) is trusted as such rows were.
 */
export function decisionSealHolds(check: DecisionSealCheck, r: ApprovalRow): boolean {
  if (r.decision === null) return true;
  if (r.decision_seal === LEGACY_SEAL) return true;
  if (!r.decision_seal) return false;
  const want = Buffer.from(decisionSeal(check.key, check.tenantId, r));
  const got = Buffer.from(r.decision_seal);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Seals the decisions of the requests `ids` as stored now. Call in the transaction that recorded them, after the
 * decision: the seal commits with the decision or not at all.
 */
export async function sealDecisions(tx: Db, key: SigningKey, tenantId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  const rows = await queryRows<ApprovalRow>(
    tx,
    sql`select ${APPROVAL_COLUMNS} from approval_requests
        where tenant_id = ${tenantId} and decision is not null and id in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`,
  );
  const sealed = rows.map((r) => ({ id: r.id, seal: decisionSeal(key, tenantId, r) }));
  if (!sealed.length) return;
  await tx.execute(sql`
    update approval_requests a set decision_seal = v.seal
    from json_to_recordset(${JSON.stringify(sealed)}::json) as v(id uuid, seal text)
    where a.tenant_id = ${tenantId} and a.id = v.id`);
}
