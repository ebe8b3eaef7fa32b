/**
 * The one place that picks the database: PostgreSQL through postgres.js when `DATABASE_URL` is set,
 * otherwise embedded PGlite in `CUSTODY_DATA_DIR` (default `.data/`). Both get the same Drizzle schema
 * and the same committed migrations, applied on first use.
 */
import path from "node:path";
import fs from "node:fs";
import net from "node:net";
import { AsyncLocalStorage } from "node:async_hooks";
import type { Writable } from "node:stream";
import { PgTransaction, type PgDatabase, type PgQueryResultHKT } from "drizzle-orm/pg-core";
import { is, type SQL } from "drizzle-orm";
import * as schema from "./schema";
import { dataDir, MIGRATIONS_DIR } from "./paths";

export { dataDir, MIGRATIONS_DIR };

export { schema };

/** A Drizzle database or an open transaction; query helpers accept either. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/**
 * Who the database sees a request act for (docs/decisions/0016-tenant-walls.md): the tenant, and the person when one
 * is signed in (their own sessions and memberships in other workspaces). An actor fits as it is.
 */
export type DbScope = { tenantId: string; userId?: string | null };

/**
 * The role every scoped transaction runs as: no BYPASSRLS, not the owner of any table, so the row-level security
 * policies of migration 0011 apply to it. Created by that migration.
 */
export const APP_ROLE = "custody_app";

/**
 * The one statement that opens every scoped transaction: the app role and the scope, all transaction-local
 * (`set_config(…, true)` is `SET LOCAL`), so nothing outlives the transaction on a pooled connection.
 */
export const SCOPE_STATEMENT = `select set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', $1, true), set_config('app.user_id', $2, true), set_config('plan_cache_mode', coalesce(nullif($3, ''), current_setting('plan_cache_mode')), true)`;

type Handle = {
  /** The owner's database: migrations, scripts, tests' assertions and the pre-tenant lookups. Not walled. */
  db: Db;
  /**
   * The database as the app role within `scope`: every transaction (and every statement outside one, which runs in
   * a transaction of its own) starts with {@link SCOPE_STATEMENT}. A null scope is the app role with no tenant: it
   * sees no row of a tenant table.
   */
  scoped: (scope: DbScope | null) => Db;
  /** The app role with the scope of the current {@link withDbScope} call (none: no tenant rows). */
  ambient: Db;
  close: () => Promise<void>;
  kind: "postgres" | "pglite";
};

const globalForDb = globalThis as unknown as {
  __custodyDb?: Promise<Handle>;
  __custodyScope?: AsyncLocalStorage<DbScope>;
  __custodyPlans?: AsyncLocalStorage<"generic">;
};

/** The scope of the request being served (set by lib/server's apiRoute), shared by every module copy. */
const scopeStorage: AsyncLocalStorage<DbScope> = (globalForDb.__custodyScope ??= new AsyncLocalStorage<DbScope>());

/** Set while {@link withGenericPlans} runs, shared by every module copy. */
const planStorage: AsyncLocalStorage<"generic"> = (globalForDb.__custodyPlans ??= new AsyncLocalStorage<"generic">());
const genericPlans = () => planStorage.getStore() === "generic";

/**
 * Runs `fn` with `scope` as the ambient scope: {@link getDb} inside it (and in everything it awaits) returns the
 * database walled to that tenant.
 */
export function withDbScope<T>(scope: DbScope, fn: () => T): T {
  return scopeStorage.run({ tenantId: scope.tenantId, userId: scope.userId ?? null }, fn);
}

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

function scopeParams(scope: DbScope | null | undefined): [string, string, string] {
  return [scope?.tenantId ?? "", scope?.userId ?? "", genericPlans() ? "force_generic_plan" : ""];
}

/** A postgres.js query: lazy until executed or awaited. */
type PgJsQuery = PromiseLike<unknown> & { values: () => PgJsQuery; execute: () => PgJsQuery };

/** Minimal shape of the postgres.js client the wrapper needs (its types do not survive a Proxy well). */
type PgJsLike = {
  begin: (fn: (tx: PgJsLike) => Promise<unknown>) => Promise<unknown>;
  unsafe: (query: string, params?: unknown[], opts?: unknown) => PgJsQuery;
  reserve: () => Promise<PgJsLike & { release: () => void }>;
};

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
 * The postgres.js client with parameterized statements prepared (named, cached per connection by postgres.js) where
 * the caller does not say otherwise, and always under {@link withGenericPlans}. Drizzle sends `db.execute(sql…)` with
 * `prepare: false`: postgres.js then asks the server for the parameter types before it binds them (a round trip), and
 * PostgreSQL plans the statement for its values on every call. Under generic plans a statement is parsed and planned
 * once per connection and sent in one round trip. Statements without parameters keep the simple protocol (they may
 * hold several commands). Transactions get the same treatment.
 */
function preparingPostgresClient<T extends PgJsLike>(base: T): T {
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

/**
 * The postgres.js client seen through a scope. `begin` sends the scope statement first, pipelined with the
 * transaction's first statement. A statement outside a transaction is sent as `begin; scope; statement; commit`
 * pipelined on one reserved connection (one round trip, as before); when the statement fails, `commit` rolls back.
 */
function scopedPostgresClient(base: PgJsLike, scope: () => DbScope | null | undefined): PgJsLike {
  const inScope = <T>(fn: (tx: PgJsLike) => Promise<T>) =>
    base.begin(async (tx) => {
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
  const lone = async (
    query: string,
    params: unknown[] | undefined,
    opts: unknown,
    values: boolean,
  ): Promise<unknown> => {
    const conn = await base.reserve();
    try {
      const statement = conn.unsafe(query, params, opts);
      const sent = [
        conn.unsafe("begin").execute(),
        conn.unsafe(SCOPE_STATEMENT, scopeParams(scope()), PREPARED).execute(),
        (values ? statement.values() : statement).execute(),
        conn.unsafe("commit").execute(),
      ];
      const results = await Promise.allSettled(sent);
      const failed = firstFailure(results);
      if (failed) throw failed.err;
      return (results[2] as PromiseFulfilledResult<unknown>).value;
    } finally {
      conn.release();
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

/** Minimal shape of a PGlite client the wrapper needs. */
type PgliteLike = {
  query: (query: string, params?: unknown[], opts?: unknown) => Promise<unknown>;
  transaction: <T>(fn: (tx: PgliteLike) => Promise<T>) => Promise<T>;
};

/** A PGlite client seen through a scope: the same as {@link scopedPostgresClient}, on PGlite's one connection. */
function scopedPgliteClient(base: PgliteLike, scope: () => DbScope | null | undefined): PgliteLike {
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
function scopedDatabases(make: (scope: () => DbScope | null | undefined) => Db): Pick<Handle, "scoped" | "ambient"> {
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

/** What postgres.js passes a `socket` factory: its parsed connection options. */
type PgJsSocketOptions = { host: string[]; port: number[]; path?: string | false };

/**
 * Connects postgres.js's sockets with Nagle's algorithm off (TCP_NODELAY, as libpq does; postgres.js leaves it on).
 * With it on, a small message written right after a larger one waits for the server's delayed ACK (≈ 40 ms): the
 * `CopyDone` that ends every `COPY … FROM STDIN` ({@link copyIn}) did, once per ingested batch. Unix sockets are used
 * as they are; several hosts are tried in turn, one per new connection, as postgres.js does. The socket carries
 * `host`, which postgres.js reads as the TLS server name.
 */
function noDelaySocket(): (o: PgJsSocketOptions) => net.Socket {
  let next = 0;
  return (o) => {
    if (o.path) return net.connect(o.path);
    const i = next++ % o.host.length;
    const host = o.host[i]!;
    const port = o.port[i] ?? o.port[0]!;
    return Object.assign(net.connect({ host, port, noDelay: true }), { host, port });
  };
}

/**
 * Seals every tenant's pending audit entries (docs/decisions/0020-audit-sealing.md), as the owner: run once when a
 * process opens the database, for entries a crash left committed but not yet in the chain.
 */
const SEAL_LEFT_PENDING = "select seal_audit(p.tenant_id) from (select distinct tenant_id from audit_pending) p";

/**
 * Opens a database, applies migrations and seals audit entries a crash left pending.
 * @param url PostgreSQL URL; when absent, PGlite in `dir` (default {@link dataDir}).
 */
export async function openDatabase(opts: { url?: string; dir?: string; max?: number } = {}): Promise<Handle> {
  if (opts.url) {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const { migrate } = await import("drizzle-orm/postgres-js/migrator");
    // Migrations run on their own single connection, serialized across processes by an advisory lock.
    const migrationClient = postgres(opts.url, { max: 1, onnotice: () => {} });
    try {
      await migrationClient`select pg_advisory_lock(724201)`;
      await migrate(drizzle(migrationClient), { migrationsFolder: MIGRATIONS_DIR });
      await migrationClient`select pg_advisory_unlock(724201)`;
    } finally {
      await migrationClient.end();
    }
    // `socket` is a postgres.js option its types do not declare.
    const clientOptions = { max: opts.max ?? 10, onnotice: () => {}, socket: noDelaySocket() };
    const raw = postgres(opts.url, clientOptions);
    // Audit entries a crash left between their commit and their seal join the chain before anything is served.
    await raw.unsafe(SEAL_LEFT_PENDING);
    const client = preparingPostgresClient(raw as unknown as PgJsLike) as unknown as typeof raw;
    const db = drizzle(client, { schema }) as unknown as Db;
    const walls = scopedDatabases(
      (scope) =>
        drizzle(scopedPostgresClient(client as unknown as PgJsLike, scope) as unknown as typeof client, {
          schema,
        }) as unknown as Db,
    );
    return { db, ...walls, kind: "postgres", close: () => raw.end() };
  }
  const dir = opts.dir ?? dataDir();
  fs.mkdirSync(dir, { recursive: true });
  const releaseLock = lockDataDir(dir);
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const { migrate } = await import("drizzle-orm/pglite/migrator");
  try {
    const client = await PGlite.create(path.join(/*turbopackIgnore: true*/ dir, "pgdata"));
    const pdb = drizzle(client, { schema });
    await migrate(pdb, { migrationsFolder: MIGRATIONS_DIR });
    await client.query(SEAL_LEFT_PENDING);
    const walls = scopedDatabases(
      (scope) =>
        drizzle(scopedPgliteClient(client as unknown as PgliteLike, scope) as unknown as typeof client, {
          schema,
        }) as unknown as Db,
    );
    return {
      db: pdb as unknown as Db,
      ...walls,
      kind: "pglite",
      close: async () => {
        await client.close();
        releaseLock();
      },
    };
  } catch (err) {
    releaseLock();
    throw err;
  }
}

/** The process holding an embedded data directory, or null when it is free (a stale lock does not count). */
export function dataDirLockHolder(dir: string): number | null {
  const file = path.join(/*turbopackIgnore: true*/ dir, "pgdata.lock");
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  // A killed process that nobody has reaped yet (a zombie: its parent was killed too, and PID 1 of a container may
  // never reap it) still answers signal 0, but it holds nothing.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return null;
  } catch {
    // No /proc (not Linux): signal 0 is all there is.
  }
  return pid;
}

/**
 * Takes the data directory for this process: PGlite's files must be used by one process at a time, and a
 * second writer would silently lose acknowledged writes. Returns the release function.
 * @throws Error naming the process that holds it.
 */
function lockDataDir(dir: string): () => void {
  const holder = dataDirLockHolder(dir);
  if (holder !== null) {
    throw new Error(
      `The data directory ${dir} is in use by process ${holder} (another \`npm run demo\` or \`npm start\`?). Stop it, or set CUSTODY_DATA_DIR to another directory.`,
    );
  }
  const file = path.join(/*turbopackIgnore: true*/ dir, "pgdata.lock");
  fs.writeFileSync(file, String(process.pid), { mode: 0o600 });
  const release = () => {
    try {
      if (fs.readFileSync(file, "utf8").trim() === String(process.pid)) fs.unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.once("exit", release);
  return release;
}

/** The process-wide handle (opened and migrated once). Throws if migrations fail. */
async function processHandle(): Promise<Handle> {
  if (!globalForDb.__custodyDb) {
    globalForDb.__custodyDb = openDatabase({ url: process.env.DATABASE_URL || undefined }).catch((err) => {
      globalForDb.__custodyDb = undefined;
      throw err;
    });
  }
  return globalForDb.__custodyDb;
}

/**
 * The process-wide database as the app role, walled to the ambient scope ({@link withDbScope}; API route handlers
 * run inside their caller's). Outside any scope it sees no tenant rows: use {@link dbFor} with the actor (pages), or
 * {@link getOwnerDb} for the few lookups made before the tenant is known.
 */
export async function getDb(): Promise<Db> {
  return (await processHandle()).ambient;
}

/** The process-wide database as the app role, walled to one tenant (and person): what pages pass to domain verbs. */
export async function dbFor(scope: DbScope): Promise<Db> {
  return (await processHandle()).scoped(scope);
}

/**
 * The process-wide database as its owner, NOT walled by row-level security. Only for what must happen before the
 * tenant is known — an API key or session by its hash, sign-in by email, an invitation by its token, "is there any
 * workspace" — each listed in docs/decisions/0016-tenant-walls.md. Everything else goes through {@link getDb} or
 * {@link dbFor}.
 */
export async function getOwnerDb(): Promise<Db> {
  return (await processHandle()).db;
}

/** A postgres.js COPY query: resolves with the stream once the server is in COPY mode (see {@link copyIn}). */
type PgJsCopyQuery = PromiseLike<unknown> & {
  writable: () => Promise<Writable>;
  resolve: (result: { count: number | null }) => void;
  reject: (err: unknown) => void;
};

/**
 * `COPY … FROM STDIN` on PostgreSQL, on the connection of the transaction `tx`: sends `data` (already in the COPY
 * format the statement names) and resolves when the server has stored it.
 * @param tx a Drizzle transaction (COPY into a temporary table only makes sense on the transaction's connection).
 * @param statement the `COPY … FROM STDIN` statement (no parameters).
 * @param data the rows, made only when the driver can take them (a caller on PGlite does not build them for nothing).
 * @param before a statement without parameters to run first (e.g. creating the target table), sent together with the
 *   COPY so both cost one round trip.
 * @returns the number of rows copied, or null on PGlite, whose driver has no COPY from a client stream (nothing is
 *   run then): the caller takes its other path.
 * @throws the server's error when it refuses `before` or the data (the transaction is then aborted); Error when `tx`
 *   is not a transaction.
 */
export async function copyIn(
  tx: Db,
  statement: string,
  data: () => string | Buffer,
  before?: string,
): Promise<number | null> {
  if (!is(tx, PgTransaction)) throw new Error("copyIn needs a transaction: COPY goes to its connection");
  const client = (tx as unknown as { session?: { client?: { unsafe?: unknown } } }).session?.client;
  if (!client || typeof client.unsafe !== "function") return null;
  const pg = client as unknown as PgJsLike;
  const setup = before === undefined ? null : Promise.resolve(pg.unsafe(before).execute());
  setup?.catch(() => {}); // awaited below; this only keeps it from counting as unhandled meanwhile
  const query = pg.unsafe(statement) as unknown as PgJsCopyQuery;
  let stream: Writable;
  try {
    stream = await query.writable();
  } catch (err) {
    await setup; // its own error first: the COPY only failed because the transaction was aborted
    throw err;
  }
  await setup;
  return new Promise<number>((resolve, reject) => {
    // postgres.js (3.4) resolves the query with the stream when COPY starts, and settles the same query object again
    // when the server answers the end of the data: `resolve(result)` after the command completes, `reject(error)` when
    // it refused a row. A promise settles once, so those calls would be lost — and after a refusal the stream's
    // 'finish' never comes. Taking them over here turns the server's answer into this promise's.
    query.resolve = (result) => resolve(result?.count ?? 0);
    query.reject = reject;
    stream.on("error", reject);
    stream.end(data());
  });
}

/**
 * Runs raw SQL and returns its rows, on either driver (postgres.js returns an array, PGlite `{rows}`).
 */
export async function queryRows<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const res = (await db.execute(query)) as unknown;
  if (Array.isArray(res)) return res as T[];
  return ((res as { rows?: T[] }).rows ?? []) as T[];
}
