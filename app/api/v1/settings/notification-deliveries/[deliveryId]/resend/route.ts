import { resendDelivery } from "@/lib/domain/notifications/endpoints";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/** POST /api/v1/settings/notification-deliveries/{id}/resend (no body) → the delivery, pending again now under the same `webhook-id`. Owners and admins; 404 when none. */
export const POST = apiRoute<{ deliveryId: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return resendDelivery(ctx, { id: params.deliveryId });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
