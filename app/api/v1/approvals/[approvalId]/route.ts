import { getApproval } from "@/lib/domain/approvals/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/approvals/{id} → the approval as in the list, plus `payload` (secrets redacted), `offered_payload`
 * and, for a stale one, `changes: [{field, approved, current}]`. Errors: 401, 404 (no such approval in your tenant).
 */
export const GET = apiRoute<{ approvalId: string }>(async ({ ctx, params }) => {
  return getApproval(ctx, { approvalId: params.approvalId });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
