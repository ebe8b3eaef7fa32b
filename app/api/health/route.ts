import { sql } from "drizzle-orm";
import { NextResponse } from "next/server";
import { getDb } from "@/db";
import { otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/health → 200 `{"ok": true}` once the database is open and migrations are applied;
 * 503 `{"ok": false, "error": {code, message}}` otherwise.
 */
export async function GET() {
  try {
    const db = await getDb();
    await db.execute(sql`select 1`);
    return NextResponse.json({ ok: true });
  } catch (err) {
    console.error("health check failed:", err instanceof Error ? err.message : err);
    return NextResponse.json(
      { ok: false, error: { code: "unavailable", message: "The database is not ready; see the server log." } },
      { status: 503 },
    );
  }
}

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
