import { getCurrentPolicy } from "@/lib/domain/policies/store";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/policies/current → the current version with its document and findings (as
 * `GET /api/v1/policies/{version}`), or `{"policy": null}` when none was ever activated. Every role and runtime
 * keys. Errors: 401.
 */
export const GET = apiRoute(async ({ ctx }) => {
  const current = await getCurrentPolicy(ctx);
  return current ?? { policy: null };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
