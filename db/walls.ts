/**
 * Tenant walls (docs/decisions/0016-tenant-walls.md): every scoped transaction runs as the app role with the
 * request's tenant and person set transaction-locally, so the row-level security policies apply; the clients and
 * Drizzle databases seen through a scope.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { connectionErrorCode, RESERVE_TIMEOUT } from "./connection-errors";
import { genericPlans } from "./plans";
import type { Db, DbScope, Handle, PgJsLike, PgJsQuery, PgliteLike } from "./types";

/**
 * The role every scoped transaction runs as: no BYPASSRLS, not the owner of any table, so the row-level security
 * policies of migration 0016 apply to it. Created by that migration.
 * @internal Exported for the tenant-walls test, which checks the role's privileges.
 */
export const APP_ROLE = "custody_app";

/**
 * The one statement that opens every scoped transaction: the app role and the scope, all transaction-local
 * (`set_config(…, true)` is `SET LOCAL`), so nothing outlives the transaction on a pooled connection.
 */
export const SCOPE_STATEMENT = `select set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', $1, true), set_config('app.user_id', $2, true), set_config('plan_cache_mode', coalesce(nullif($3, ''), current_setting('plan_cache_mode')), true)`;

const globalForDb = globalThis as unknown as {
  __custodyScope?: AsyncLocalStorage<DbScope>;
};

/** The scope of the request being served (set by lib/server's apiRoute), shared by every module copy. */
const scopeStorage: AsyncLocalStorage<DbScope> = (globalForDb.__custodyScope ??= new AsyncLocalStorage<DbScope>());

/**
 * Runs `fn` with `scope` as the ambient scope: {@link getDb} inside it (and in everything it awaits) returns the
 * database walled to that tenant.
 */
export function withDbScope<T>(scope: DbScope, fn: () => T): T {
  return scopeStorage.run({ tenantId: scope.tenantId, userId: scope.userId ?? null }, fn);
}

function scopeParams(scope: DbScope | null | undefined): [string, string, string] {
  return [scope?.tenantId ?? "", scope?.userId ?? "", genericPlans() ? "force_generic_plan" : ""];
}

/**
 * The scope statement is prepared once per connection: unprepared, postgres.js would first ask the server for its
 * parameter types — a round trip on every transaction that the pipelining below is meant to avoid.
 */
const PREPARED = { prepare: true };

/** The first failure among settled results, in order, if any. */
function firstFailure(results: PromiseSettledResult<unknown>[]): { err: unknown } | null {
  for (const r of results) if (r.status === "rejected") return { err: r.reason };
  return null;
}

/**
 * Like `Promise.allSettled`, but done as soon as one statement fails because its connection was lost: the statements
 * still queued behind it on that reserved connection are never sent and, in postgres.js 3.4.9, never settle either
 * (they wait in the reservation's own queue for a `ReadyForQuery` that cannot come). They count as failed with that
 * error.
 */
function settleUntilLost(statements: PromiseLike<unknown>[]): Promise<PromiseSettledResult<unknown>[]> {
  return new Promise((resolve) => {
    const results: Array<PromiseSettledResult<unknown> | undefined> = statements.map(() => undefined);
    let left = statements.length;
    let done = false;
    const finish = (lost?: unknown) => {
      if (done) return;
      done = true;
      resolve(results.map((r) => r ?? { status: "rejected", reason: lost }));
    };
    statements.forEach((statement, i) => {
      statement.then(
        (value) => {
          results[i] = { status: "fulfilled", value };
          if (--left === 0) finish();
        },
        (reason: unknown) => {
          results[i] = { status: "rejected", reason };
          if (connectionErrorCode(reason) !== null) finish(reason);
          else if (--left === 0) finish();
        },
      );
    });
  });
}

/** An error shaped like postgres.js's own when a connection closed (code `CONNECTION_CLOSED`). */
function connectionClosed(): Error {
  return Object.assign(new Error("the transaction's database connection was lost"), { code: "CONNECTION_CLOSED" });
}

/** A statement that fails at once as a lost connection, shaped like a postgres.js query. */
function refusedStatement(): PgJsQuery {
  const failure = Promise.reject(connectionClosed());
  failure.catch(() => {}); // settled by whoever awaits it
  const statement: PgJsQuery = {
    values: () => statement,
    execute: () => statement,
    then: (ok, fail) => failure.then(ok, fail),
  };
  return statement;
}

/**
 * The transaction's client, closed for good once its transaction has settled. postgres.js 3.4.9 ends a transaction
 * whose connection was lost at once (`begin` rejects), but the code inside it runs on and may send more statements:
 * those would go to whatever the same connection object serves next, possibly another request, outside any
 * transaction and without the scope. Refused instead, as a lost connection.
 */
function closableTransaction(tx: PgJsLike, closed: () => boolean): PgJsLike {
  return new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop === "unsafe")
        return (query: string, params?: unknown[], opts?: unknown) =>
          closed() ? refusedStatement() : target.unsafe(query, params, opts);
      if (prop === "begin" || prop === "savepoint") {
        const inner = Reflect.get(target, prop, receiver) as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => (closed() ? Promise.reject(connectionClosed()) : inner.apply(target, args));
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/**
 * How long a statement outside a transaction waits for a pooled connection: a bound, should a `reserve()` wait for a
 * connection that never comes (postgres.js 3.4.9 dropped a reservation handed to a reconnecting connection,
 * porsager/postgres#1195; `patches/postgres+3.4.9.patch` keeps it queued, decision 0051). Past this wait the statement
 * fails as the database being unavailable ({@link RESERVE_TIMEOUT}), and a connection that still comes later is given
 * back at once.
 */
const RESERVE_WAIT_MS = 10_000;

/** A reserved connection within {@link RESERVE_WAIT_MS}. @throws Error with code {@link RESERVE_TIMEOUT}. */
async function reserveWithin(base: PgJsLike): Promise<PgJsLike & { release: () => void }> {
  const pending = base.reserve();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`no database connection within ${RESERVE_WAIT_MS / 1000} s`), {
            code: RESERVE_TIMEOUT,
          }),
        ),
      RESERVE_WAIT_MS,
    );
  });
  try {
    return await Promise.race([pending, late]);
  } catch (err) {
    pending.then(
      (conn) => conn.release(),
      () => {},
    );
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The postgres.js client seen through a scope. `begin` sends the scope statement first, pipelined with the
 * transaction's first statement. A statement outside a transaction is sent as `begin; scope; statement; commit`
 * pipelined on one reserved connection (one round trip, as before); when the statement fails, `commit` rolls back.
 * A reserved connection that was lost ({@link connectionErrorCode}) is not released.
 */
export function scopedPostgresClient(base: PgJsLike, scope: () => DbScope | null | undefined): PgJsLike {
  const inScope = <T>(fn: (tx: PgJsLike) => Promise<T>) => {
    let ended = false;
    const transaction = base.begin(async (raw) => {
      const tx = closableTransaction(raw, () => ended);
      // Sent now, so it is on the connection before the transaction's first statement (postgres.js is lazy).
      const setup = Promise.resolve(tx.unsafe(SCOPE_STATEMENT, scopeParams(scope()), PREPARED).execute());
      const settled = setup.then(
        () => null,
        (err: unknown) => ({ err }),
      );
      let out: T;
      try {
        out = await fn(tx);
      } catch (err) {
        const failed = await settled;
        throw failed ? failed.err : err;
      }
      const failed = await settled;
      if (failed) throw failed.err;
      return out;
    }) as Promise<T>;
    return transaction.finally(() => {
      ended = true;
    });
  };
  const lone = async (
    query: string,
    params: unknown[] | undefined,
    opts: unknown,
    values: boolean,
  ): Promise<unknown> => {
    const conn = await reserveWithin(base);
    let lost = false;
    try {
      const statement = conn.unsafe(query, params, opts);
      const sent = [
        conn.unsafe("begin").execute(),
        conn.unsafe(SCOPE_STATEMENT, scopeParams(scope()), PREPARED).execute(),
        (values ? statement.values() : statement).execute(),
        conn.unsafe("commit").execute(),
      ];
      const results = await settleUntilLost(sent);
      const failed = firstFailure(results);
      if (failed) {
        lost = results.some((r) => r.status === "rejected" && connectionErrorCode(r.reason) !== null);
        throw failed.err;
      }
      return (results[2] as PromiseFulfilledResult<unknown>).value;
    } finally {
      // A lost connection is not given back: postgres.js 3.4.9's `release` would put it, closed, among the open ones,
      // and the next statement sent on it would never settle (porsager/postgres#1208). Left alone, it stays among the
      // closed ones, and the pool opens a new connection in its place when one is needed.
      if (!lost) conn.release();
    }
  };
  const unsafe = (query: string, params?: unknown[], opts?: unknown) => {
    let run: Promise<unknown> | undefined;
    let values = false;
    const pending = {
      values: () => {
        values = true;
        return pending;
      },
      execute: () => {
        run ??= lone(query, params, opts, values);
        return pending;
      },
      then: (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) => {
        run ??= lone(query, params, opts, values);
        return run.then(ok, fail);
      },
    };
    return pending as unknown as PgJsQuery;
  };
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop === "begin") return (fn: (tx: PgJsLike) => Promise<unknown>) => inScope(fn);
      if (prop === "unsafe") return unsafe;
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** A PGlite client seen through a scope: the same as {@link scopedPostgresClient}, on PGlite's one connection. */
export function scopedPgliteClient(base: PgliteLike, scope: () => DbScope | null | undefined): PgliteLike {
  const inScope = <T>(fn: (tx: PgliteLike) => Promise<T>) =>
    base.transaction(async (tx) => {
      await tx.query(SCOPE_STATEMENT, scopeParams(scope()));
      return fn(tx);
    });
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop === "transaction") return inScope;
      if (prop === "query") return (q: string, p?: unknown[], o?: unknown) => inScope((tx) => tx.query(q, p, o));
      return Reflect.get(target, prop, receiver);
    },
  });
}

/**
 * Builds {@link Handle.scoped} and {@link Handle.ambient} from a function that makes a Drizzle database over a
 * scoped client. Scoped databases are kept per scope (a bounded cache: building one reads the schema).
 */
export function scopedDatabases(
  make: (scope: () => DbScope | null | undefined) => Db,
): Pick<Handle, "scoped" | "ambient"> {
  const cache = new Map<string, Db>();
  const scoped = (scope: DbScope | null): Db => {
    const [tenantId, userId] = scopeParams(scope);
    const key = `${tenantId}/${userId}`;
    let db = cache.get(key);
    if (!db) {
      const fixed = { tenantId, userId };
      db = make(() => fixed);
      if (cache.size >= 500) cache.delete(cache.keys().next().value!);
      cache.set(key, db);
    }
    return db;
  };
  return { scoped, ambient: make(() => scopeStorage.getStore()) };
}
