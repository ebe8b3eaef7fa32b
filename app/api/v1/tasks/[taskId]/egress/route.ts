import { taskEgress } from "@/lib/domain/policies/egress";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks/{taskId}/egress → `{"current_policy_version": number|null, "hosts": [{"host", "allowed",
 * "denied", "requests": [{"event_id", "occurred_at", "outcome", "method", "path", "tool", "credential_ref", "attempt"}] (newest 20), "last_at", "ports", "policy_versions", "tools", "credential_refs", "in_current_policy": boolean|null,
 * "drift": boolean}]}`: per host the task's runs asked to reach (from `egress.allowed` / `egress.denied` events), and
 * whether the current policy still admits it. Every role and runtime keys. Errors: 401, 404.
 */
export const GET = apiRoute<{ taskId: string }>(async ({ ctx, params }) => taskEgress(ctx, { taskId: params.taskId }));

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
