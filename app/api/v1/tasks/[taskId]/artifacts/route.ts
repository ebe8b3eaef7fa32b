import { getArtifacts } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{task_id}/artifacts → `{"artifacts": [{ref, sha256, size, media_type, first_version,
 * created_at}]}`. Errors: 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ ctx, params }) => ({
  artifacts: await getArtifacts(ctx, { taskId: params.taskId }),
}));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
