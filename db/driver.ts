/**
 * Opening the database: PostgreSQL through postgres.js when a URL is given, otherwise embedded PGlite in a data
 * directory. Both get the same Drizzle schema and the same committed migrations, applied on open.
 */
import path from "node:path";
import fs from "node:fs";
import net from "node:net";
import type { SQL } from "drizzle-orm";
import * as schema from "./schema";
import { dataDir, MIGRATIONS_DIR } from "./paths";
import { lockDataDir } from "./data-dir-lock";
import { preparingPostgresClient } from "./plans";
import type { Db, Handle, PgJsLike, PgliteLike } from "./types";
import { scopedDatabases, scopedPgliteClient, scopedPostgresClient } from "./walls";

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
 * `DATABASE_POOLER=transaction`: the URL leads to a connection pooler in transaction pooling mode (PgBouncer's
 * `pool_mode = transaction`), which gives each transaction whichever server connection is free, so nothing may rely on
 * a session (docs/decisions/0051-through-a-connection-pooler.md). Unset, empty or `none`: a direct connection.
 * @throws Error naming the variable when it holds anything else.
 */
export function poolerFromEnv(value = process.env.DATABASE_POOLER): Pooler {
  const v = (value ?? "").trim().toLowerCase();
  if (v === "" || v === "none") return "none";
  if (v === "transaction") return "transaction";
  throw new Error(`DATABASE_POOLER must be "transaction" or "none" (was ${JSON.stringify(value)}).`);
}

/** Whether the database is reached through a transaction-pooling connection pooler (see {@link poolerFromEnv}). */
export type Pooler = "none" | "transaction";

/**
 * The postgres.js options of a client under `pooler`. Through a transaction pooler:
 * - `prepare: false`, which overrides every statement's own `prepare: true`;
 * - `max_pipeline: 0`: a connection takes its next query only once the last one was answered. PgBouncer 1.18 gives
 *   the server connection back at each ReadyForQuery outside a transaction, so the answers to a query pipelined behind
 *   an autocommit statement or a COMMIT arrive when no client is linked, are dropped, and the query waits for good
 *   (pgbouncer/pgbouncer#759). `patches/postgres+3.4.9.patch` lets a transaction's BEGIN still reserve its connection
 *   with no pipelining. Inside a transaction the queries then run one after another, as they are written.
 * Directly none (postgres.js's defaults, or the URL's `prepare` parameter).
 */
function poolerOptions(pooler: Pooler): { prepare?: false; max_pipeline?: number } {
  return pooler === "transaction" ? { prepare: false, max_pipeline: 0 } : {};
}

/** The key of the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK = 724201;

/**
 * Applies the committed migrations over a connection of their own, serialized across processes by an advisory lock.
 * Directly, a session lock held around drizzle's migrator. Through a transaction pooler a session lock would stay on
 * whichever server connection took it (and its unlock go to another), so there everything — the lock, drizzle's
 * bookkeeping and the migrations — runs in one transaction under a transaction-scoped lock, drizzle's own transaction
 * becoming a savepoint in it.
 */
async function migratePostgres(url: string, pooler: Pooler): Promise<void> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  const migrationClient = postgres(url, { max: 1, onnotice: () => {}, ...poolerOptions(pooler) });
  try {
    if (pooler === "none") {
      await migrationClient`select pg_advisory_lock(${MIGRATION_LOCK})`;
      await migrate(drizzle(migrationClient), { migrationsFolder: MIGRATIONS_DIR });
      await migrationClient`select pg_advisory_unlock(${MIGRATION_LOCK})`;
      return;
    }
    await migrationClient.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      // Drizzle reads the client's `options` (its type parsers), which a postgres.js transaction does not carry.
      const nested = new Proxy(tx, {
        get: (target, prop, receiver) =>
          prop === "begin"
            ? target.savepoint.bind(target)
            : prop === "options"
              ? migrationClient.options
              : Reflect.get(target, prop, receiver),
      });
      await migrate(drizzle(nested as unknown as typeof migrationClient), { migrationsFolder: MIGRATIONS_DIR });
    });
  } finally {
    await migrationClient.end();
  }
}

/**
 * Opens a database, applies migrations and seals audit entries a crash left pending.
 * @param url PostgreSQL URL; when absent, PGlite in `dir` (default {@link dataDir}).
 * @param pooler `transaction` when `url` leads to a transaction-pooling pooler such as PgBouncer (default from
 *   `DATABASE_POOLER`, {@link poolerFromEnv}): no statement is prepared by name (PgBouncer 1.18 does not keep them
 *   across transactions) and migrations take no session lock. Everything else already lives in one transaction.
 */
export async function openDatabase(
  opts: { url?: string; dir?: string; max?: number; pooler?: Pooler } = {},
): Promise<Handle> {
  if (opts.url) {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const pooler = opts.pooler ?? poolerFromEnv();
    await migratePostgres(opts.url, pooler);
    // `prepare: false` on the client overrides every statement's own `prepare: true` (decision 0022's generic plans
    // and the scope statement): postgres.js then sends unnamed statements only, which a pooler may route anywhere.
    // `socket` is a postgres.js option its types do not declare.
    const clientOptions = {
      max: opts.max ?? 10,
      onnotice: () => {},
      socket: noDelaySocket(),
      ...poolerOptions(pooler),
    };
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

/**
 * Runs raw SQL and returns its rows, on either driver (postgres.js returns an array, PGlite `{rows}`).
 */
export async function queryRows<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const res = (await db.execute(query)) as unknown;
  if (Array.isArray(res)) return res as T[];
  return ((res as { rows?: T[] }).rows ?? []) as T[];
}
