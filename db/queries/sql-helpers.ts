/**
 * Small SQL fragments shared by queries.
 */
import { sql, type SQL } from "drizzle-orm";

/** A timestamptz column as ISO 8601 UTC text with microseconds (exact, for output and keyset cursors). */
export function isoUtc(column: SQL | string): SQL {
  const col = typeof column === "string" ? sql.raw(column) : column;
  return sql`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
export function likeEscape(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Encodes a keyset position as an opaque URL-safe cursor. */
export function encodeCursor(parts: Array<string | number>): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** Decodes a cursor made by {@link encodeCursor}; returns null when it is malformed. */
export function decodeCursor(cursor: string, arity: number): Array<string | number> | null {
  try {
    const parts = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(parts) || parts.length !== arity) return null;
    if (!parts.every((p) => typeof p === "string" || typeof p === "number")) return null;
    return parts as Array<string | number>;
  } catch {
    return null;
  }
}
