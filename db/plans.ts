/**
 * Generic plans (decision 0022): statements prepared once per connection and planned once, for the runtime's hot
 * paths; the postgres.js client that prepares parameterized statements.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { PgJsLike } from "./types";

const globalForDb = globalThis as unknown as {
  __custodyPlans?: AsyncLocalStorage<"generic">;
};

/** Set while {@link withGenericPlans} runs, shared by every module copy. */
const planStorage: AsyncLocalStorage<"generic"> = (globalForDb.__custodyPlans ??= new AsyncLocalStorage<"generic">());
/** Whether the caller runs under {@link withGenericPlans}. */
export const genericPlans = () => planStorage.getStore() === "generic";

/**
 * Runs `fn` with generic plans (decision 0022): the parameterized statements it sends (and everything it awaits) are
 * prepared once per connection, and every scoped transaction it opens runs with `plan_cache_mode =
 * force_generic_plan`, so PostgreSQL plans each statement once per connection instead of on every call. For the
 * runtime's hot paths, whose statements look rows up by key (the gate's facts statement took ≈ 2.5 ms to plan and
 * < 1 ms to run). Elsewhere statements keep a plan made for their values (a generic plan for a timeline range read was
 * several times slower).
 */
export function withGenericPlans<T>(fn: () => T): T {
  return planStorage.run("generic", fn);
}

/**
 * The postgres.js client with parameterized statements prepared (named, cached per connection by postgres.js) where
 * the caller does not say otherwise, and always under {@link withGenericPlans}. Drizzle sends `db.execute(sql…)` with
 * `prepare: false`: postgres.js then asks the server for the parameter types before it binds them (a round trip), and
 * PostgreSQL plans the statement for its values on every call. Under generic plans a statement is parsed and planned
 * once per connection and sent in one round trip. Statements without parameters keep the simple protocol (they may
 * hold several commands). Transactions get the same treatment.
 */
export function preparingPostgresClient<T extends PgJsLike>(base: T): T {
  const options = (opts: unknown) =>
    genericPlans()
      ? { ...(opts as object | undefined), prepare: true }
      : { prepare: true, ...(opts as object | undefined) };
  const unsafe = (target: PgJsLike) => (query: string, params?: unknown[], opts?: unknown) =>
    target.unsafe(query, params, params && params.length ? options(opts) : opts);
  const wrap = (target: PgJsLike): PgJsLike =>
    new Proxy(target, {
      get(t, prop, receiver) {
        if (prop === "unsafe") return unsafe(t);
        if (prop === "begin") return (fn: (tx: PgJsLike) => Promise<unknown>) => t.begin((tx) => fn(wrap(tx)));
        if (prop === "reserve") return async () => wrapReserved(await t.reserve());
        return Reflect.get(t, prop, receiver);
      },
    });
  const wrapReserved = (conn: PgJsLike & { release: () => void }) => wrap(conn) as PgJsLike & { release: () => void };
  return wrap(base) as T;
}
