import { getDb } from "@/db";
import { getTimeline, pageSize } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/timeline?cursor=&limit= (limit 1–1000, default 200)
 * → `{"events": [StoredEvent], "next_cursor": string|null}` ordered by occurred_at, id (keyset).
 * Errors: 400 (limit, cursor), 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ req, actor, params }) => {
  const url = new URL(req.url);
  return getTimeline(await getDb(), actor, params.taskId, {
    cursor: url.searchParams.get("cursor"),
    limit: pageSize(url.searchParams.get("limit"), 1000, 200),
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
