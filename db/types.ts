/**
 * The shapes every part of the database module shares: the Drizzle database, the scope a request acts in, the
 * handle an opened database gives, and the minimal driver client shapes the wrappers need.
 */
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as schema from "./schema";

/** A Drizzle database or an open transaction; query helpers accept either. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/**
 * Who the database sees a request act for (docs/decisions/0016-tenant-walls.md): the tenant, and the person when one
 * is signed in (their own sessions and memberships in other workspaces). An actor fits as it is.
 */
export type DbScope = { tenantId: string; userId?: string | null };

/** An opened database (see `openDatabase`): the owner's view, the walled views, and how to close it. */
export type Handle = {
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

/** A postgres.js query: lazy until executed or awaited. */
export type PgJsQuery = PromiseLike<unknown> & { values: () => PgJsQuery; execute: () => PgJsQuery };

/** Minimal shape of the postgres.js client the wrapper needs (its types do not survive a Proxy well). */
export type PgJsLike = {
  begin: (fn: (tx: PgJsLike) => Promise<unknown>) => Promise<unknown>;
  unsafe: (query: string, params?: unknown[], opts?: unknown) => PgJsQuery;
  reserve: () => Promise<PgJsLike & { release: () => void }>;
};

/** Minimal shape of a PGlite client the wrapper needs. */
export type PgliteLike = {
  query: (query: string, params?: unknown[], opts?: unknown) => Promise<unknown>;
  transaction: <T>(fn: (tx: PgliteLike) => Promise<T>) => Promise<T>;
};
