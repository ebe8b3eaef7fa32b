import { sql } from "drizzle-orm";
import { NextResponse } from "next/server";
import { connectionErrorCode, getDb } from "@/db";
import { databaseUnavailable, RETRY_AFTER_SECONDS } from "@/lib/domain/errors";
import { otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/health → 200 `{"ok": true}` once the database is open and migrations are applied;
 * 503 `{"ok": false, "error": {code, message}}` otherwise: `database_unavailable` with `Retry-After` while the
 * database cannot be reached (the same test as every API route's, db/connection-errors.ts), `unavailable` for anything
 * else (a migration that failed: see the server log). No credentials.
 */
export async function GET() {
  try {
    const db = await getDb();
    await db.execute(sql`select 1`);
    return NextResponse.json({ ok: true });
  } catch (err) {
    const lost = connectionErrorCode(err);
    if (lost) {
      console.error(`health check failed: database unavailable (${lost})`);
      const { code, message } = databaseUnavailable();
      return NextResponse.json(
        { ok: false, error: { code, message } },
        { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS.database_unavailable) } },
      );
    }
    console.error("health check failed:", err instanceof Error ? err.message : err);
    return NextResponse.json(
      { ok: false, error: { code: "unavailable", message: "The database is not ready; see the server log." } },
      { status: 503 },
    );
  }
}

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
