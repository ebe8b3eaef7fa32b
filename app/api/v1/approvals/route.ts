import { listApprovals } from "@/lib/domain/approvals/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/approvals?status=pending|stale|approved|rejected&task_id=&action=&cursor=&limit= →
 * `{"approvals": [{id, task_id, side_effect, idempotency_key, principal, action, tool, payload_digest, input_digest,
 * policy_version, agent, agent_version, requested_by, requested_at, status, stale_reasons, decision?}], "next_cursor"}`,
 * oldest first (keyset on requested_at, id). Runtime keys and every role read. Status is computed now
 * (lib/domain/approvals/freshness.ts). Errors: 400 (limit), 401, 422 (status, cursor).
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const url = new URL(req.url);
  const q = url.searchParams;
  return listApprovals(ctx, {
    status: q.get("status"),
    task_id: q.get("task_id"),
    action: q.get("action"),
    older_than: q.get("older_than"),
    cursor: q.get("cursor"),
    limit: q.get("limit"),
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
