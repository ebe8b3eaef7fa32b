import { getTaskEvent } from "@/lib/domain/tasks/event-detail";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/events/{event_id} → StoredEvent: one event of the task, its `attrs` capped at 16,384
 * serialized characters with strings cut to 4,096 (`attrs_truncated: true` when cut). What the timeline's drawer
 * fetches when the page carried only a summary (decision 0034). Errors: 400 (an id past its limit), 401, 404 (no such
 * event in the task, also another tenant's).
 */
export const GET = apiRoute<{ taskId: string; eventId: string }>(async ({ ctx, params }) =>
  getTaskEvent(ctx, { taskId: params.taskId, eventId: params.eventId }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
