import { getDb } from "@/db";
import { getSigningKey } from "@/lib/config/signing-key";
import { checkpointTask } from "@/lib/domain/tasks/checkpoint";
import { getTaskView } from "@/lib/domain/tasks/read";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

type Params = { taskId: string };

/**
 * GET /api/v1/tasks/{task_id} → `{"task_id", "record", "version", "digest", "signature_valid", "side_effects":
 * {"<name>": {"idempotency_key", "status", "receipt"?, …}}, …}`: the latest record and the server's view of
 * each side effect. 404 when the caller's tenant has no such task.
 */
export const GET = apiRoute<Params>(async ({ actor, params }) =>
  getTaskView(await getDb(), actor, params.taskId, getSigningKey()),
);

/**
 * PUT /api/v1/tasks/{task_id} — body: the task record (DESIGN.md "Task record").
 * → 200 `{"task_id", "version", "digest", "signature"}`; every PUT adds a checkpoint version.
 * Errors: 422 validation_failed (field path named; credential-looking values), 409 conflict (side-effect key),
 * 400 invalid_json, 413, 401, 403 (people cannot checkpoint).
 */
export const PUT = apiRoute<Params>(async ({ req, actor, params }) => {
  const body = await readJson(req);
  return checkpointTask(await getDb(), actor, params.taskId, body, getSigningKey());
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PATCH, DELETE, OPTIONS } = otherMethods("GET", "PUT");
