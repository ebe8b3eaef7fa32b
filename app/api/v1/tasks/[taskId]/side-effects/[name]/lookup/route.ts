import { lookupSideEffect } from "@/lib/domain/side-effects/lookup";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{task_id}/side-effects/{name}/lookup — asks the tool owner's registered lookup endpoint
 * about this effect's idempotency key and returns its answer as evidence (`{configured, outcome: found |
 * not_found | ambiguous | timeout | error, external_operation_id, answer, message, …}`). Settles nothing.
 * People who may reconcile only. Errors: 403, 404.
 */
export const POST = apiRoute<{ taskId: string; name: string }>(async ({ ctx, params }) =>
  lookupSideEffect(ctx, { taskId: params.taskId, name: params.name }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
