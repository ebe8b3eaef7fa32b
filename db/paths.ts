/**
 * Filesystem locations used by the embedded database and the keys kept beside it.
 */
import path from "node:path";

/** Resolved embedded-data directory: `CUSTODY_DATA_DIR`, default `<cwd>/.data`. */
export function dataDir(): string {
  return path.resolve(/*turbopackIgnore: true*/ process.env.CUSTODY_DATA_DIR || ".data");
}

/** The committed Drizzle migrations. */
export const MIGRATIONS_DIR = path.join(process.cwd(), "db", "migrations");
