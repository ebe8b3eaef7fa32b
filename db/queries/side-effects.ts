/**
 * Side-effect reads. SQL only; tenant id required. Writes belong to lib/domain/side-effects/lifecycle (the one module
 * that writes `side_effects`).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "../index";
import { isoUtc } from "./sql-helpers";
import type { SideEffectOrigin, SideEffectReceipt, SideEffectReconcile, SideEffectStatus } from "../schema";

export type SideEffectRow = {
  name: string;
  idempotency_key: string;
  status: SideEffectStatus;
  tool: string | null;
  action: string | null;
  mutation: boolean;
  payload_digest: string | null;
  intent_at: string | null;
  intent_attempt: number | null;
  lease_expires_at: string | null;
  receipt: SideEffectReceipt | null;
  last_reconcile: SideEffectReconcile | null;
  status_reason: string | null;
  origin: SideEffectOrigin;
  call_id: string | null;
  updated_at: string;
};

/** The columns of a {@link SideEffectRow}, times as ISO 8601 UTC (for statements that read a row their own way). */
export const SIDE_EFFECT_COLUMNS = sql`name, idempotency_key, status, tool, action, mutation, payload_digest,
  ${isoUtc("intent_at")} as intent_at, intent_attempt, ${isoUtc("lease_expires_at")} as lease_expires_at,
  receipt, last_reconcile, status_reason, origin, call_id, ${isoUtc("updated_at")} as updated_at`;

/** The side effects of a task by name: all of them, or only those in `statuses`. */
export async function listSideEffects(
  db: Db,
  tenantId: string,
  taskId: string,
  opts: { statuses?: SideEffectStatus[] } = {},
): Promise<SideEffectRow[]> {
  const only = opts.statuses
    ? sql`and status in (${sql.join(
        opts.statuses.map((st) => sql`${st}::side_effect_status`),
        sql`, `,
      )})`
    : sql``;
  return queryRows<SideEffectRow>(
    db,
    sql`select ${SIDE_EFFECT_COLUMNS} from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} ${only} order by name`,
  );
}

/** One side effect, optionally locked FOR UPDATE. */
export async function findSideEffect(
  db: Db,
  tenantId: string,
  taskId: string,
  name: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SideEffectRow | undefined> {
  const rows = await queryRows<SideEffectRow>(
    db,
    sql`select ${SIDE_EFFECT_COLUMNS} from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}
        ${opts.forUpdate ? sql`for update` : sql``}`,
  );
  return rows[0];
}
