import { Readable } from "node:stream";
import { openTaskExport } from "@/lib/export/task-bundle";
import { apiRoute, otherMethods } from "@/lib/server/route";
import { withSigningKey } from "@/lib/server/verb-context";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/tasks/{task_id}/export → `application/gzip`, `Content-Disposition: attachment`: the task's evidence
 * bundle, streamed (docs/decisions/0037-evidence-bundles.md for its files and how `npx run-custody verify` checks it).
 * Viewers and up, and runtime keys (`tasks.export`). Errors (JSON, before any byte is sent): 400 (task id), 401, 403,
 * 404 (missing task, or another tenant's). A failure mid-stream ends the archive early: a verifier reports it
 * truncated, never signed.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ params, ctx }) => {
  const { stream, filename } = await openTaskExport(withSigningKey(ctx), { taskId: params.taskId });
  return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, {
    headers: {
      "content-type": "application/gzip",
      "content-disposition": `attachment; filename="${filename}"`,
      "cache-control": "no-store",
    },
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
