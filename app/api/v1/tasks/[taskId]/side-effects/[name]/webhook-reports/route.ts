import { listWebhookEvidence } from "@/lib/domain/webhooks/receive";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{id}/side-effects/{name}/webhook-reports → `{"reports": [{source, webhook_id, received_at, outcome,
 * external_operation_id, result_digest, disposition}]}`: what webhook sources reported about the effect's idempotency
 * key, newest first (the reconcile dialog pre-fills from the newest). Runtime keys and every role; 404 when no such
 * effect (decision 0040).
 */
export const GET = apiRoute<{ taskId: string; name: string }>(async ({ ctx, params }) => ({
  reports: await listWebhookEvidence(ctx, { taskId: params.taskId, name: params.name }),
}));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
