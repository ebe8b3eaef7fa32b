import { getDb } from "@/db";
import { listPrincipals } from "@/lib/domain/settings/principals";
import { apiRoute, otherMethods } from "@/lib/server/route";

/** GET /api/v1/settings/principals → `{"principals": [{principal, task_count, revoked}]}`. */
export const GET = apiRoute(async ({ actor }) => ({ principals: await listPrincipals(await getDb(), actor) }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
