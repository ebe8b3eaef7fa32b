import { getEffectPayload } from "@/lib/domain/side-effects/payload";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{id}/side-effects/{name}/payload → `{payload_digest, source, text, truncated}`: the request payload
 * of the write (what its intent sent with the digest, secrets redacted; else its approval request's), pretty-printed
 * JSON capped at 64 Ki characters; `source` and `text` null when the runtime sent only a digest. What the reconcile
 * dialog shows (decision 0045). Runtime keys and every role; 404 when no such effect.
 */
export const GET = apiRoute<{ taskId: string; name: string }>(async ({ ctx, params }) =>
  getEffectPayload(ctx, { taskId: params.taskId, name: params.name }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
