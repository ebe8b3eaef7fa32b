/**
 * The process-wide database, opened and migrated once (`DATABASE_URL`, else PGlite in `CUSTODY_DATA_DIR`), and the
 * ways to reach it: walled to the ambient scope, to one tenant, or as the owner.
 */
import { openDatabase } from "./driver";
import type { Db, DbScope, Handle } from "./types";

const globalForDb = globalThis as unknown as {
  __custodyDb?: Promise<Handle>;
};

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
