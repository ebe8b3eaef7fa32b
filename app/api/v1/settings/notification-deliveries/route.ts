import { listDeliveries } from "@/lib/domain/notifications/endpoints";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/settings/notification-deliveries?endpoint_id=&limit= → `{"deliveries": [{id, endpoint_id, event, status,
 * attempts, max_attempts, next_attempt_at, last_attempt_at, last_status_code, last_error, created_at, delivered_at,
 * payload}]}`, newest first (limit 1–200, default 50). Any role; `id` is the `webhook-id` of every attempt.
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const q = new URL(req.url).searchParams;
  const limit = q.get("limit");
  return {
    deliveries: await listDeliveries(ctx, {
      endpointId: q.get("endpoint_id") ?? undefined,
      limit: limit === null ? undefined : Number(limit),
    }),
  };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
