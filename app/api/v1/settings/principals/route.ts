import { listPrincipals } from "@/lib/domain/settings/principals";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** GET /api/v1/settings/principals → `{"principals": [{principal, task_count, revoked}]}`. */
export const GET = apiRoute(async ({ ctx }) => ({ principals: await listPrincipals(ctx) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
