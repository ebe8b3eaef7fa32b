import { DomainError } from "@/lib/domain/errors";
import { getTimeline, pageSize } from "@/lib/domain/tasks/read";
import { attrsMode } from "@/lib/domain/tasks/event-detail";
import { getArrivalFeed } from "@/lib/domain/tasks/timeline";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/timeline — a task's events, two ways (limit 1–1000, default 200):
 * - time order: `?cursor=&limit=&from=&to=` → `{"events": [StoredEvent], "next_cursor": string|null}` ordered by
 *   occurred_at, id (keyset); `from` / `to` (ISO 8601, inclusive) restrict it to a window of time (detail on zoom).
 * - arrival order: `?since=<cursor>&limit=` (`since=0` from the start, then `next_since`) →
 *   `{"events": [StoredEvent], "next_since": string, "has_more": boolean}` in the server's receive order, commit-safe:
 *   an incremental reader sees every event, back-dated ones included (decision 0015).
 * `&attrs=summary` ships large event bodies as summaries (`attrs_truncated`; decision 0034), as the task page asks.
 * Errors: 400 (limit, cursor, from, to, since, attrs; since with cursor/from/to), 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const url = new URL(req.url);
  const p = url.searchParams;
  const limit = pageSize(p.get("limit"), 1000, 200);
  const shape = attrsMode(p.get("attrs"));
  // Summaries are cut in the database too (decision 0036).
  const columns = p.get("attrs") === "summary" ? ("summary" as const) : ("whole" as const);
  const since = p.get("since");
  if (since !== null) {
    if (p.has("cursor") || p.has("from") || p.has("to")) {
      throw new DomainError(
        "bad_request",
        "since (arrival order) cannot be combined with cursor, from or to (time order).",
        {
          fields: [{ path: "since", message: "alone, with limit" }],
        },
      );
    }
    const feed = await getArrivalFeed(ctx, { taskId: params.taskId, since, limit, columns });
    return { ...feed, events: feed.events.map(shape) };
  }
  const page = await getTimeline(ctx, {
    taskId: params.taskId,
    cursor: p.get("cursor"),
    limit,
    from: p.get("from"),
    to: p.get("to"),
    columns,
  });
  return { ...page, events: page.events.map(shape) };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
