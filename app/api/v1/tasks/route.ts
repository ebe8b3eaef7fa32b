import { listTasksForActor, pageSize } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";

/**
 * GET /api/v1/tasks?cursor=&limit=&q=&phase=&status=&host=&credential_ref=&policy_version= → `{"tasks":
 * [TaskListItem], "next_cursor"}`,
 * newest first (keyset on created_at, task_id). `limit` is 1–500 (default 50; more is a 400, not a cap).
 * `q` matches part of a task id, or exactly an idempotency key, a sandbox id (an event's environment_id) or a
 * host (an event's attrs.host, any case); `status` filters to tasks with a side effect in that status. The incident
 * responder's filters (docs/concepts.md#egress-and-vault-custody): `host` — an egress or credential event named the
 * host (any case); `credential_ref` — an event named the credential reference; `policy_version` — a checkpoint ran
 * under it.
 * Errors: 400 (limit, cursor, status), 401.
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const url = new URL(req.url);
  return listTasksForActor(ctx, {
    cursor: url.searchParams.get("cursor"),
    limit: pageSize(url.searchParams.get("limit")),
    q: url.searchParams.get("q"),
    phase: url.searchParams.get("phase"),
    status: url.searchParams.get("status"),
    host: url.searchParams.get("host"),
    credentialRef: url.searchParams.get("credential_ref"),
    policyVersion: url.searchParams.get("policy_version"),
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
