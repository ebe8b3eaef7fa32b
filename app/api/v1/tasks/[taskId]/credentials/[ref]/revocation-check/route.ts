import { checkRevocation } from "@/lib/domain/policies/revocation";
import { apiRoute, otherMethods, readNoBody } from "@/lib/server/route";

/**
 * POST /api/v1/tasks/{taskId}/credentials/{ref}/revocation-check (no body) → 200 `{"credential_ref", "outcome":
 * "revoked"|"not_revoked"|"ambiguous"|"timeout"|"unreachable"|"refused", "revoked", "revoked_at", "http_status",
 * "checked_at", "event_id", "policy_version", "message"}`: asks the credential's `revocation_url` (current policy)
 * and keeps the answer as a `credential.revocation_checked` event on the vault lane, with an audit entry.
 * Responders, owners and admins. Errors: 401, 403, 404 (task, or a credential the task never held), 422 (no
 * revocation endpoint in the current policy).
 */
export const POST = apiRoute<{ taskId: string; ref: string }>(async ({ req, ctx, params }) => {
  await readNoBody(req);
  return checkRevocation(ctx, { taskId: params.taskId, ref: params.ref });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
