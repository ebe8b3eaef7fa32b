/**
 * SQL pieces the lifecycle's statements take from the transition table (transitions.ts): the guard and the target
 * status. Statuses are written as SQL literals, not parameters: under a generic plan PostgreSQL can only use a partial
 * index whose predicate a literal implies (decision 0022), and they are code constants, checked here.
 */
import { sql, type SQL } from "drizzle-orm";
import { SIDE_EFFECT_STATUSES, type SideEffectStatus } from "@/db/schema/enums";
import { existingFrom, TRANSITIONS, type FromOf, type ToOf, type TransitionName } from "./transitions";

function literal(status: SideEffectStatus): string {
  if (!(SIDE_EFFECT_STATUSES as readonly string[]).includes(status)) throw new Error(`not a status: ${status}`);
  return `'${status}'`;
}

/**
 * `'<to>'::side_effect_status` — a status transition `t` may reach.
 * @throws Error when `t` may not reach it (a caller bypassing the types).
 */
export function statusLiteral<T extends TransitionName>(t: T, to: ToOf<T>): SQL {
  if (!(TRANSITIONS[t].to as readonly SideEffectStatus[]).includes(to)) throw new Error(`${t} cannot reach ${to}`);
  return sql.raw(`${literal(to)}::side_effect_status`);
}

/**
 * `<column> in ('a', 'b')` (or `= 'a'`): the existing-row statuses transition `t` may leave, or only `observed` of
 * them when the caller moves a row it read.
 * @throws Error when `observed` is not one `t` may leave.
 */
export function statusGuard<T extends TransitionName>(
  t: T,
  opts: { column?: string; observed?: Exclude<FromOf<T>, "absent"> } = {},
): SQL {
  const from: SideEffectStatus[] = existingFrom(t);
  if (opts.observed !== undefined && !from.includes(opts.observed))
    throw new Error(`${t} cannot leave ${opts.observed}`);
  const statuses = opts.observed !== undefined ? [opts.observed] : from;
  if (!statuses.length) throw new Error(`${t} leaves no existing row`);
  const column = opts.column ?? "status";
  if (!/^[a-z_.]+$/.test(column)) throw new Error(`not a column: ${column}`);
  return sql.raw(
    statuses.length === 1
      ? `${column} = ${literal(statuses[0]!)}`
      : `${column} in (${statuses.map(literal).join(", ")})`,
  );
}
