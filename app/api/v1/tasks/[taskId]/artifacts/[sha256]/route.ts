import { getArtifactPreview } from "@/lib/domain/artifacts/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/artifacts/{sha256} → `{ref, sha256, media_type, size, content, kind, text, truncated,
 * download_url}`: one listed artifact with a preview of its uploaded bytes for the pages (decision 0045). `kind` is
 * markdown, json (pretty-printed), text or binary (no text); `text` holds at most 64 Ki characters (`truncated` says
 * there is more). `content` missing (never uploaded) or mismatch (the stored bytes no longer hash to the digest)
 * carries no text. Errors: 401, 404 (no such task, or the task lists no artifact with that digest), 422 (not a sha256).
 */
export const GET = apiRoute<{ taskId: string; sha256: string }>(async ({ ctx, params }) =>
  getArtifactPreview(ctx, { taskId: params.taskId, sha256: params.sha256 }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
