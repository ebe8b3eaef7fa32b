import { listTasksForActor } from "@/lib/domain/tasks/list";
import { pageSize } from "@/lib/domain/tasks/read";
import { apiRoute, otherMethods } from "@/lib/server/route";
import { withSigningKey } from "@/lib/server/verb-context";

/**
 * GET /api/v1/tasks?cursor=&limit=&sort=&status=&effect_status=&q=&phase=&host=&credential_ref=&policy_version=&workflow= →
 * `{"tasks": [TaskListItem], "next_cursor"}`. `sort`: `activity` (default: the newest event first, else creation) or
 * `created` (newest first); keyset cursors belong to their sort. `limit` is 1–500 (default 50; more is a 400, not a
 * cap). `status` is the task's status (running, stopped, waiting_for_approval, replay, stale, done, failed, terminated;
 * lib/domain/tasks/status.ts, decision 0043): the ended ones come from the phase, the others from the resume gate, read
 * at most 500 tasks per request (a short page then carries `next_cursor`). `effect_status` filters to tasks with a
 * side effect in that status. `q` matches part of a task id, or exactly an idempotency key, a sandbox id (an event's
 * environment_id) or a host (an event's attrs.host, any case). The incident responder's filters
 * (docs/concepts.md#egress-and-vault-custody): `host` — an egress or credential event named the host (any case);
 * `credential_ref` — an event named the credential reference; `policy_version` — a checkpoint ran under it
 * (`1`, `v1`, `policy-v1` alike; lib/domain/policies/version-name.ts). `workflow` — the task's workflow exactly (its
 * first `task.created` naming one; decision 0049).
 * Errors: 400 (limit, cursor, sort, status, effect_status, filter text, workflow over 200 characters), 401.
 */
export const GET = apiRoute(async ({ req, ctx }) => {
  const url = new URL(req.url);
  const p = url.searchParams;
  return listTasksForActor(withSigningKey(ctx), {
    cursor: p.get("cursor"),
    limit: pageSize(p.get("limit")),
    sort: p.get("sort"),
    status: p.get("status"),
    effectStatus: p.get("effect_status"),
    q: p.get("q"),
    phase: p.get("phase"),
    host: p.get("host"),
    credentialRef: p.get("credential_ref"),
    policyVersion: p.get("policy_version"),
    workflow: p.get("workflow"),
  });
});

/** Other methods answer 405 with `Allow` in the API's error shape. */
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
