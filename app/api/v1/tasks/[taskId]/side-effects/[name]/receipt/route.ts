import { getDb } from "@/db";
import { recordReceipt } from "@/lib/domain/side-effects/receipt";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/side-effects/{name}/receipt
 * body `{"idempotency_key", "external_operation_id", "result_digest"?, "completed_at"}` →
 * 200 `{"status": "completed", "receipt", "replayed"}` (an identical second receipt is a no-op, replayed true).
 * Errors: 409 no_intent (no intent registered) · 409 receipt_conflict (a different receipt is stored) ·
 * 422 idempotency_key_mismatch / validation_failed · 400 key · 404 unknown task or effect.
 */
export const POST = apiRoute<{ taskId: string; name: string }>(async ({ req, actor, params }) => {
  const body = await readJson(req);
  return recordReceipt(await getDb(), actor, params.taskId, params.name, body);
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
