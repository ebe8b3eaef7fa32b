import { withSigningKey } from "@/lib/server/verb-context";
import { decideApproval } from "@/lib/domain/approvals/decide";
import { apiRoute, readJson, otherMethods } from "@/lib/server/route";

/**
 * POST /api/v1/approvals/{id}/decision body `{"decision": "approve"|"reject", "reason"}` (reason required to reject)
 * → 200 the approval with its stored decision (for a stale one, the new request that re-binds it to the current
 * values). A signed-in approver, admin or owner only. Errors: 403 (viewer, responder, runtime key, the requester
 * deciding their own) · 404 · 409 already_decided `{details: {decision, decided_by}}` (lost a race, or decided before)
 * · 422 validation_failed.
 */
export const POST = apiRoute<{ approvalId: string }>(async ({ req, ctx, params }) => {
  return decideApproval(withSigningKey(ctx), { approvalId: params.approvalId, body: await readJson(req) });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
