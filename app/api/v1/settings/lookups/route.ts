import { listLookups } from "@/lib/domain/settings/lookups";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** GET /api/v1/settings/lookups → `{"lookups": [{tool, url, timeout_ms, updated_at}]}`. */
export const GET = apiRoute(async ({ ctx }) => ({ lookups: await listLookups(ctx) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
