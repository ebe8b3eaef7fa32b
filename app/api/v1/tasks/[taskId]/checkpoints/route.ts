import { getDb } from "@/db";
import { getSigningKey } from "@/lib/config/signing-key";
import { getCheckpointHistory } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/checkpoints → `{"checkpoints": [{version, digest, key_id, signature_valid, phase,
 * created_at, record}]}`, newest first. Errors: 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ actor, params }) => ({
  checkpoints: await getCheckpointHistory(await getDb(), actor, params.taskId, getSigningKey()),
}));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
