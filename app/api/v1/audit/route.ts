import { listAudit, parseAuditQuery } from "@/lib/domain/audit/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/audit?actor=&action=&from=&to=&task=&target=&before=&limit= → `{"entries": [AuditEntry], "next_cursor"}`:
 * the tenant's audit entries newest first, with the filters of the Audit page (one parse: `parseAuditQuery`,
 * lib/domain/audit/read.ts; decision 0048). Each entry carries `prev_hash` and `hash`. `next_cursor` (a sequence
 * number, or null at the end) goes back as `before`. `limit` 1–200 (default 50).
 * Who: `audit.read` (lib/domain/authz.ts) — signed-in people of any role, and `full` or `read_only` API keys.
 * Errors: 400 `bad_request` naming the parameter (unknown or repeated parameter, unknown action, malformed date, from
 * after to, bad before or limit), 401, 403 (a `runtime` or `task_prefix` key).
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const query = parseAuditQuery(new URL(req.url).searchParams);
  const page = await listAudit(ctx, query);
  return { entries: page.entries, next_cursor: page.next_before === null ? null : String(page.next_before) };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
