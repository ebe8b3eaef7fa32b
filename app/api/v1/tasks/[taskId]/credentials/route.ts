import { taskCredentials } from "@/lib/domain/policies/revocation";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{taskId}/credentials → `{"credentials": [{"credential_ref", "last_issued_at", "last_used_at",
 * "used", "uses": [{"event_id", "occurred_at", "tool", "host", "purpose", "attempt"}] (newest 20; `used` counts all), "last_revoked_at", "last_expired_at", "scope", "expires_at", "can_check", "last_check": {"outcome",
 * "revoked", "checked_at", "checked_by"} | null}], "flagged_events": [{"event_id", "type", "credential_ref",
 * "occurred_at", "kinds"}]}`: the credentials the task's runs held, from vault-lane events (metadata only, never a
 * value), and the vault-lane events that carried a credential value or placeholder (redacted before storage, newest
 * 50). Every role and runtime keys. Errors: 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ ctx, params }) =>
  taskCredentials(ctx, { taskId: params.taskId }),
);

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
