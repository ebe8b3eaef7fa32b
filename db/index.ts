/**
 * The one place that picks the database: PostgreSQL through postgres.js when `DATABASE_URL` is set,
 * otherwise embedded PGlite in `CUSTODY_DATA_DIR` (default `.data/`). Both get the same Drizzle schema
 * and the same committed migrations, applied on first use. The parts: driver.ts opens either engine, walls.ts keeps
 * each request inside its tenant, plans.ts holds generic plans, copy.ts bulk COPY, process-handle.ts the
 * process-wide database, connection-errors.ts which driver errors mean the database went away; this file re-exports
 * what the rest of the code uses.
 */
export type { Db } from "./types";
export { withDbScope } from "./walls";
export { withGenericPlans } from "./plans";
export { openDatabase, queryRows } from "./driver";
export { dataDirLockHolder } from "./data-dir-lock";
export { dbFor, getDb, getOwnerDb } from "./process-handle";
export { copyIn } from "./copy";
export { connectionErrorCode } from "./connection-errors";
