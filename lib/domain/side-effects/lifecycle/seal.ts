/**
 * Seals on side-effect rows (decision 0035): the server's keyed digest over the facts the gate and the intent route rely
 * on — the effect's tenant, task, name, idempotency key, status and receipt — written in the transaction that moves the
 * effect, and checked where those facts are read. A row whose state is not what the server sealed was changed outside
 * the server: the gate stops with `evidence_mismatch`, and the intent route replays no receipt from it.
 *
 * The seal is HMAC-SHA256 under a key derived from the server's Ed25519 signing key (so whoever can seal can sign, and
 * nobody else can do either), over the RFC 8785 JSON of the sealed facts. HMAC rather than a signature: the gate checks
 * every row it relies on, and an HMAC costs about a microsecond where an Ed25519 verification costs fifty.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { SideEffectStatus } from "@/db/schema/enums";
import { canonicalJson } from "../../crypto/canonical";
import type { SigningKey } from "../../crypto/signing";

/** Statuses that stop or hold back on their own: a row in one needs no seal (forging one only stops the gate). */
export const UNSEALED_STATUSES: readonly SideEffectStatus[] = ["unknown", "awaiting_approval"];

/** The seal rows written before decision 0035 carry (the migration's mark): trusted as before, as such rows were. */
export const LEGACY_SEAL = "legacy";

const SEAL_PREFIX = "s1.";

/** The facts a seal covers, as stored. */
export type SealedEffect = {
  task_id: string;
  name: string;
  idempotency_key: string;
  status: SideEffectStatus;
  receipt: unknown;
};

const sealKeys = new WeakMap<SigningKey, Buffer>();

/** The HMAC key derived from the signing key (its PKCS#8 bytes under a fixed label), once per key. */
function sealKeyOf(key: SigningKey): Buffer {
  let k = sealKeys.get(key);
  if (!k) {
    const der = key.privateKey.export({ format: "der", type: "pkcs8" });
    k = createHmac("sha256", der).update("run-custody side-effect seal v1").digest();
    sealKeys.set(key, k);
  }
  return k;
}

/** The seal of an effect's stored facts in `tenantId`. */
export function effectSeal(key: SigningKey, tenantId: string, e: SealedEffect): string {
  const facts = {
    tenant_id: tenantId,
    task_id: e.task_id,
    name: e.name,
    idempotency_key: e.idempotency_key,
    status: e.status,
    receipt: e.receipt ?? null,
  };
  return SEAL_PREFIX + createHmac("sha256", sealKeyOf(key)).update(canonicalJson(facts)).digest("base64url");
}

/**
 * Whether a stored row's state is what the server sealed: a row in an {@link UNSEALED_STATUSES} status always is; a
 * row marked {@link LEGACY_SEAL} is trusted as rows from before seals were.
 */
export function sealHolds(key: SigningKey, tenantId: string, e: SealedEffect & { seal: string | null }): boolean {
  if (UNSEALED_STATUSES.includes(e.status)) return true;
  if (e.seal === LEGACY_SEAL) return true;
  if (!e.seal) return false;
  const want = Buffer.from(effectSeal(key, tenantId, e));
  const got = Buffer.from(e.seal);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Seals the effects of `taskIds` (only those `names`, when given) that this transaction moved or created (their
 * `updated_at` is the transaction's `now()`, as every lifecycle statement writes it). Call in the transaction that moved them, after the moves: the seal
 * commits with the state it covers or not at all. Reads the rows as stored, so the seal covers the receipt exactly as the
 * gate will read it.
 */
export async function sealMovedEffects(
  tx: Db,
  key: SigningKey,
  tenantId: string,
  taskIds: string[],
  names?: string[],
): Promise<void> {
  if (!taskIds.length || names?.length === 0) return;
  const ids = [...new Set(taskIds)];
  const onlyNames = names
    ? sql`and name in (${sql.join(
        names.map((n) => sql`${n}`),
        sql`, `,
      )})`
    : sql``;
  const rows = await queryRows<SealedEffect & { seal: string | null }>(
    tx,
    sql`select task_id, name, idempotency_key, status, receipt, seal from side_effects
        where tenant_id = ${tenantId} and task_id in (${sql.join(
          ids.map((id) => sql`${id}`),
          sql`, `,
        )}) ${onlyNames} and updated_at = now()`,
  );
  const changed = rows
    .map((r) => ({ task_id: r.task_id, name: r.name, seal: effectSeal(key, tenantId, r), was: r.seal }))
    .filter((r) => r.seal !== r.was);
  if (!changed.length) return;
  await tx.execute(sql`
    update side_effects s set seal = v.seal
    from json_to_recordset(${JSON.stringify(changed)}::json) as v(task_id text, name text, seal text)
    where s.tenant_id = ${tenantId} and s.task_id = v.task_id and s.name = v.name`);
}

/**
 * Whether a stored effect row, read inside a transaction, may be acted on (a receipt replayed from it, a move made from
 * it): its seal holds ({@link sealHolds}), or this transaction wrote the row itself (a move of the same event batch, not
 * sealed until the batch ends). Asks the database only when the seal does not hold.
 * @returns false when the row's state is not what the server sealed: refuse with `evidence_mismatch` (decision 0036).
 */
export async function storedEffectSealed(
  tx: Db,
  key: SigningKey,
  tenantId: string,
  e: SealedEffect & { seal: string | null },
): Promise<boolean> {
  if (sealHolds(key, tenantId, e)) return true;
  const [own] = await queryRows<{ own: boolean }>(
    tx,
    sql`select coalesce(xmin = xid(pg_current_xact_id_if_assigned()), false) as own from side_effects
        where tenant_id = ${tenantId} and task_id = ${e.task_id} and name = ${e.name}`,
  );
  return own?.own === true;
}

const NOTHING_TO_SEAL = new WeakSet<object>();

/**
 * Marks a verb's outcome as one whose transaction leaves nothing to read back and seal with {@link sealMovedEffects}:
 * a replay that moved nothing, or a move that wrote its own seal (decision 0055). A WeakSet rather than a field, so
 * nothing of it reaches the answer.
 * @returns `outcome` itself.
 */
export function nothingLeftToSeal<T extends object>(outcome: T): T {
  NOTHING_TO_SEAL.add(outcome);
  return outcome;
}

/** Whether `outcome` was marked by {@link nothingLeftToSeal}. */
export function leavesNothingToSeal(outcome: unknown): boolean {
  return typeof outcome === "object" && outcome !== null && NOTHING_TO_SEAL.has(outcome);
}
