import { pageSize } from "@/lib/domain/tasks/read";
import { HISTORY_DOWNLOAD_MAX, openTaskHistory } from "@/lib/domain/tasks/history";
import { apiRoute, otherMethods } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/tasks/{task_id}/events?cursor=&max= → `application/json`, `Content-Disposition: attachment`: the task's
 * events as one JSON document `{"task_id", "order", "events": [StoredEvent], "count", "complete", "next_cursor"}` in
 * time order (occurred_at, id), streamed a page at a time (decision 0043). At most `max` events (1–100000, default
 * 100000); when more remain, `complete` is false and `next_cursor` continues (the timeline route's cursor). Viewers and
 * up, and runtime keys (`tasks.read`). Errors (JSON, before any byte): 400 (max, cursor), 401, 404 (missing task, or
 * another tenant's). A failure mid-stream leaves the document unterminated (it does not parse), never short and valid.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ req, params, ctx }) => {
  const p = new URL(req.url).searchParams;
  const max = pageSize(p.get("max"), HISTORY_DOWNLOAD_MAX, HISTORY_DOWNLOAD_MAX);
  const { filename, chunks } = await openTaskHistory(ctx, { taskId: params.taskId, cursor: p.get("cursor"), max });
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="${filename}"`,
      "cache-control": "no-store",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
