/**
 * Side-effect reads. SQL only; tenant id required. Writes belong to lib/domain/side-effects/lifecycle (the one module
 * that writes `side_effects`).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "../index";
import { sideEffects, type SideEffectStatus } from "../schema";
import { selectList, type SelectedRow } from "./rows";

/** The columns of a {@link SideEffectRow}, in the order statements list them. */
const SIDE_EFFECT_FIELDS = [
  "name",
  "idempotency_key",
  "status",
  "tool",
  "action",
  "mutation",
  "payload_digest",
  "intent_at",
  "intent_attempt",
  "lease_expires_at",
  "receipt",
  "last_reconcile",
  "last_not_applied",
  "repeats",
  "status_reason",
  "origin",
  "call_id",
  "updated_at",
  "seal",
] as const;

/** A side effect as the statements that list {@link SIDE_EFFECT_COLUMNS} read it (times as ISO 8601 UTC text). */
export type SideEffectRow = SelectedRow<typeof sideEffects, typeof SIDE_EFFECT_FIELDS>;

/** The columns of a {@link SideEffectRow}, times as ISO 8601 UTC (for statements that read a row their own way). */
export const SIDE_EFFECT_COLUMNS = selectList(sideEffects, SIDE_EFFECT_FIELDS);

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
