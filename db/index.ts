/**
 * The one place that picks the database: PostgreSQL through postgres.js when `DATABASE_URL` is set,
 * otherwise embedded PGlite in `CUSTODY_DATA_DIR` (default `.data/`). Both get the same Drizzle schema
 * and the same committed migrations, applied on first use.
 */
import path from "node:path";
import fs from "node:fs";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { SQL } from "drizzle-orm";
import * as schema from "./schema";
import { dataDir, MIGRATIONS_DIR } from "./paths";

export { dataDir, MIGRATIONS_DIR };

export { schema };

/** A Drizzle database or an open transaction; query helpers accept either. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;


type Handle = { db: Db; close: () => Promise<void>; kind: "postgres" | "pglite" };

const globalForDb = globalThis as unknown as { __custodyDb?: Promise<Handle> };


/**
 * Opens a database and applies migrations.
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
    const client = postgres(opts.url, { max: opts.max ?? 10, onnotice: () => {} });
    const db = drizzle(client, { schema }) as unknown as Db;
    return { db, kind: "postgres", close: () => client.end() };
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
    return {
      db: pdb as unknown as Db,
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

/** The process-wide database (opened and migrated once). Throws if migrations fail. */
export async function getDb(): Promise<Db> {
  if (!globalForDb.__custodyDb) {
    globalForDb.__custodyDb = openDatabase({ url: process.env.DATABASE_URL || undefined }).catch((err) => {
      globalForDb.__custodyDb = undefined;
      throw err;
    });
  }
  return (await globalForDb.__custodyDb).db;
}

/** Which engine the process-wide database runs on. */
export async function dbKind(): Promise<"postgres" | "pglite"> {
  await getDb();
  return (await globalForDb.__custodyDb!).kind;
}

/**
 * Runs raw SQL and returns its rows, on either driver (postgres.js returns an array, PGlite `{rows}`).
 */
export async function queryRows<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const res = (await db.execute(query)) as unknown;
  if (Array.isArray(res)) return res as T[];
  return ((res as { rows?: T[] }).rows ?? []) as T[];
}
