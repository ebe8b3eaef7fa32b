/**
 * A task's history as data (issue 24, decision 0043): every event of a task in time order (occurred_at, id), as one
 * JSON document, read page by page so that neither the server nor the database holds the whole history at once.
 * Bounded: at most {@link HISTORY_DOWNLOAD_MAX} events per document; a longer history ends with `complete: false` and
 * the `next_cursor` to continue from (the same cursor as `GET /api/v1/tasks/{id}/timeline`).
 */
import type { VerbContext } from "../context";
import { getTimeline } from "./read";

/** Events per page read from the database while streaming. */
export const HISTORY_PAGE = 1000;
/** Events in one downloaded document at most. */
export const HISTORY_DOWNLOAD_MAX = 100_000;

/**
 * Opens the download: reads the first page before answering (so a missing task, another tenant's task or a bad cursor
 * is a JSON error, not a broken file), then yields the document's text in pieces.
 * @param opts.cursor continue after an earlier document's `next_cursor`; `max` events in this document (1–100000).
 * @throws DomainError not_found, bad_request (cursor).
 */
export async function openTaskHistory(
  ctx: VerbContext,
  { taskId, cursor, max = HISTORY_DOWNLOAD_MAX }: { taskId: string; cursor?: string | null; max?: number },
): Promise<{ filename: string; chunks: AsyncGenerator<string> }> {
  const first = await getTimeline(ctx, { taskId, cursor, limit: Math.min(HISTORY_PAGE, max) });
  async function* chunks(): AsyncGenerator<string> {
    yield `{"task_id":${JSON.stringify(taskId)},"order":"occurred_at, id","events":[`;
    let page = first;
    let sent = 0;
    for (;;) {
      for (const e of page.events) {
        yield `${sent === 0 ? "\n" : ",\n"}${JSON.stringify(e)}`;
        sent += 1;
      }
      if (!page.next_cursor || sent >= max) break;
      page = await getTimeline(ctx, { taskId, cursor: page.next_cursor, limit: Math.min(HISTORY_PAGE, max - sent) });
    }
    yield `\n],"count":${sent},"complete":${page.next_cursor ? "false" : "true"},"next_cursor":${JSON.stringify(page.next_cursor)}}\n`;
  }
  const safe = taskId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 120);
  return { filename: `${safe}-events.json`, chunks: chunks() };
}
