import { withSigningKey } from "@/lib/server/verb-context";
import { DEFAULT_CHECKPOINT_PAGE, getCheckpointHistory, MAX_CHECKPOINT_PAGE, pageSize } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/checkpoints?cursor=&limit= (limit 1–200, default 50)
 * → `{"checkpoints": [{version, digest, signature, key_id, attempt, signature_valid, phase, created_at, record}],
 * "next_cursor": string|null}`, newest first. Each signature verifies offline with the key `key_id` names in
 * /api/v1/signing-keys (Ed25519 over the RFC 8785 JSON of `record`). Errors: 400 (limit, cursor), 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ req, ctx, params }) => {
  const url = new URL(req.url);
  return getCheckpointHistory(withSigningKey(ctx), {
    taskId: params.taskId,
    cursor: url.searchParams.get("cursor"),
    limit: pageSize(url.searchParams.get("limit"), MAX_CHECKPOINT_PAGE, DEFAULT_CHECKPOINT_PAGE),
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
