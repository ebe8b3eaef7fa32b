import { deleteNotificationEndpoint } from "@/lib/domain/notifications/endpoints";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** DELETE /api/v1/settings/notification-endpoints/{id} → `{"deleted": true}`; its pending deliveries are dropped. Owners and admins; 404 when none. */
export const DELETE = apiRoute<{ endpointId: string }>(async ({ ctx, params }) => {
  await deleteNotificationEndpoint(ctx, { id: params.endpointId });
  return { deleted: true };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, POST, PUT, PATCH, OPTIONS } = otherMethods("DELETE");
