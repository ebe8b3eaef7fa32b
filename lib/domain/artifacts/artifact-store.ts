/**
 * Where artifact bytes live (decision 0045): one interface, put / get / has by tenant and sha256, so an object store
 * can take the bytes later without any verb changing. Today's one implementation keeps them in the custody database
 * (`artifact_contents`, a bytea column): on the embedded default that is PGlite's files in the data directory, on a
 * PostgreSQL deployment the PostgreSQL database. Its handle is the caller's walled database, so row-level security
 * keeps each tenant to its own bytes (decision 0016).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";

/** What a store answers for stored bytes: the bytes as stored (not checked here; readers hash them). */
export type StoredArtifact = { sha256: string; size: number; bytes: Buffer };

/** Content-addressed bytes of one tenant's artifacts. */
export interface ArtifactStore {
  /**
   * Stores `bytes` under `sha256` (the caller has checked that they hash to it). Idempotent: intact bytes already
   * stored under that digest are kept as they are; stored bytes that no longer hash to it are replaced (a repair).
   * @returns `created` true when bytes were written (new, or a repair), false when intact bytes were already stored.
   */
  put(tenantId: string, sha256: string, bytes: Buffer): Promise<{ created: boolean }>;
  /** The bytes stored under `sha256`, or null when there are none. */
  get(tenantId: string, sha256: string): Promise<StoredArtifact | null>;
  /**
   * Which of `digests` have bytes stored, each with its stored size and whether the stored bytes still hash to the
   * digest (`intact` false: someone changed them after the upload). The bytes are not returned.
   */
  has(tenantId: string, digests: readonly string[]): Promise<Map<string, { size: number; intact: boolean }>>;
}

/** The store in the custody database (`artifact_contents`), through `db` (a walled handle or a transaction). */
export function databaseArtifactStore(db: Db): ArtifactStore {
  return {
    async put(tenantId, sha256, bytes) {
      const rows = await queryRows<{ sha256: string }>(
        db,
        sql`insert into artifact_contents (tenant_id, sha256, size_bytes, bytes)
            values (${tenantId}, ${sha256}, ${bytes.length}, ${bytes})
            on conflict (tenant_id, sha256) do update set bytes = excluded.bytes, size_bytes = excluded.size_bytes
              where encode(sha256(artifact_contents.bytes), 'hex') <> artifact_contents.sha256
            returning sha256`,
      );
      return { created: rows.length > 0 };
    },
    async get(tenantId, sha256) {
      const [row] = await queryRows<{ sha256: string; size_bytes: number | string; bytes: Uint8Array }>(
        db,
        sql`select sha256, size_bytes, bytes from artifact_contents where tenant_id = ${tenantId} and sha256 = ${sha256}`,
      );
      if (!row) return null;
      return { sha256: row.sha256, size: Number(row.size_bytes), bytes: Buffer.from(row.bytes) };
    },
    async has(tenantId, digests) {
      if (!digests.length) return new Map();
      // Hashed where the bytes are: only the verdict leaves the database.
      const rows = await queryRows<{ sha256: string; size_bytes: number | string; intact: boolean }>(
        db,
        sql`select sha256, size_bytes, encode(sha256(bytes), 'hex') = sha256 as intact from artifact_contents
            where tenant_id = ${tenantId} and sha256 in (select jsonb_array_elements_text(${JSON.stringify(digests)}::jsonb))`,
      );
      return new Map(rows.map((r) => [r.sha256, { size: Number(r.size_bytes), intact: r.intact }]));
    },
  };
}
