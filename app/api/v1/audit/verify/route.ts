import { verifyAuditChain } from "@/lib/domain/audit/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/audit/verify → `{"valid": true, "checked"}` or `{"valid": false, "checked", "first_bad_entry": {seq, at,
 * actor_kind, actor_label, action, target, details, hash, prev_hash, expected_prev_hash}}`: recomputes the tenant's
 * hash chain. A chain cut off at its end (its last entry is not the recorded head) answers `valid: false` with
 * `truncated: {recorded_seq, recorded_hash, last_seq, last_hash}` and `first_bad_entry: {seq}` the first missing one. Signed-in people of any role. Errors: 401, 403 (runtime keys).
 */
export const GET = apiRoute(async ({ ctx }) => {
  const check = await verifyAuditChain(ctx);
  return check.ok
    ? { valid: true, checked: check.checked }
    : {
        valid: false,
        checked: check.checked,
        message: check.message,
        first_bad_entry: check.first_bad_entry ?? { seq: check.broken_at },
        ...(check.truncated ? { truncated: check.truncated } : {}),
      };
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
