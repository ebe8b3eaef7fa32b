import { attrsMode } from "@/lib/domain/tasks/event-detail";
import { getTimelineOverview } from "@/lib/domain/tasks/timeline";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/timeline/overview → TimelineOverview: the whole timeline for a task of up to 2,000
 * events; for a longer one every marker event (interruptions, restarts, resumes, stops, sandbox lifecycle), the 250
 * newest events and per-lane bins counted in SQL, plus an arrival-feed cursor (`since`) for what arrives next.
 * `?attrs=summary` ships large event bodies as summaries (`attrs_truncated`; decision 0034), as the task page does.
 * Errors: 400 (attrs), 401, 404. Rules: docs/decisions/0015-timeline-overview-and-arrival-feed.md.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const attrs = new URL(req.url).searchParams.get("attrs");
  const shape = attrsMode(attrs);
  // Summaries are cut in the database too (decision 0036).
  const overview = await getTimelineOverview(ctx, {
    taskId: params.taskId,
    columns: attrs === "summary" ? "summary" : "whole",
  });
  return { ...overview, events: overview.events.map(shape) };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
