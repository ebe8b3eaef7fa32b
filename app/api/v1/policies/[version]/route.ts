import { getPolicyVersion } from "@/lib/domain/policies/store";
import { policyVersionParam } from "@/lib/domain/policies/version-param";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/policies/{version} → `{"version", "digest", "valid", "active", "created_by", "created_at",
 * "activated_at", "document", "source_text", "source_format", "findings"}`. Every role and runtime keys.
 * Errors: 400 (names no version: 3, v3 and policy-v3 are read alike), 401, 404.
 */
export const GET = apiRoute<{ version: string }>(async ({ ctx, params }) =>
  getPolicyVersion(ctx, { version: policyVersionParam(params.version) }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
