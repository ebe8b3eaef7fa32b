/**
 * What a runtime API key may reach (docs/decisions/0044-api-key-scopes.md), like Stripe's restricted keys. Pure rules:
 * lib/server/route.ts asks {@link scopeRefusal} for every request made with a key, before the route's handler runs;
 * the events route, whose task ids are in the body, asks {@link outsidePrefix} per event.
 *
 * - `full`: every route a runtime key may use (keys made before scopes).
 * - `runtime`: the runtime protocol only — report events, checkpoint and read its task record, register intents and
 *   receipts, ask the gate, import run states, send traces, read an approval it waits for, the current policy, lint,
 *   the signing keys and the OpenAPI document. Anything else: 403 `scope_runtime_only`.
 * - `read_only`: GET only. Anything else: 403 `scope_read_only`.
 * - `task_prefix`: routes under /api/v1/tasks/{taskId}/… for a task id that starts with the prefix, events whose
 *   task_id does, and the signing keys and OpenAPI document. A task id outside the prefix answers 404 `not_found`, as if
 *   the task did not exist (the key must not learn which other tasks exist); a route that is not about one task (task
 *   lists, approvals lists, policies) answers 403 `scope_task_prefix`.
 */
import type { ApiKeyScopeKind } from "@/db/schema/enums";
import { DomainError, notFound } from "../errors";

export type ApiKeyScope =
  { kind: "full" } | { kind: "runtime" } | { kind: "read_only" } | { kind: "task_prefix"; prefix: string };

/** The scope as stored (`scope`, `task_prefix` columns). */
export function scopeFromRow(kind: ApiKeyScopeKind, prefix: string | null): ApiKeyScope {
  if (kind === "task_prefix") return { kind, prefix: prefix ?? "" };
  return { kind };
}

const TASK = "[^/]+";
/** `METHOD path` patterns of the runtime protocol (scope `runtime`). */
const RUNTIME_ROUTES: Array<[string, RegExp]> = [
  ["POST", /^\/api\/v1\/events$/],
  ["GET", new RegExp(`^/api/v1/tasks/${TASK}$`)],
  ["PUT", new RegExp(`^/api/v1/tasks/${TASK}$`)],
  ["POST", new RegExp(`^/api/v1/tasks/${TASK}/resume$`)],
  ["POST", new RegExp(`^/api/v1/tasks/${TASK}/side-effects/[^/]+/(intent|receipt)$`)],
  ["POST", /^\/api\/v1\/import\/openai-agents\/run-state$/],
  ["POST", /^\/api\/v1\/traces(\/ingest)?$/],
  ["GET", /^\/api\/v1\/approvals\/[^/]+$/],
  ["GET", /^\/api\/v1\/policies\/current$/],
  ["POST", /^\/api\/v1\/policies\/lint$/],
  ["GET", /^\/api\/v1\/signing-keys$/],
  ["GET", /^\/api\/v1\/openapi\.json$/],
];

/** Routes every scope may read: what a client needs to talk to the API at all. */
const ALWAYS: Array<[string, RegExp]> = [
  ["GET", /^\/api\/v1\/signing-keys$/],
  ["GET", /^\/api\/v1\/openapi\.json$/],
];

const matches = (routes: Array<[string, RegExp]>, method: string, path: string) =>
  routes.some(([m, re]) => (m === method || (m === "GET" && method === "HEAD")) && re.test(path));

/** The task id a path names (`/api/v1/tasks/{taskId}` and below), decoded; null for any other path. */
export function taskIdInPath(path: string): string | null {
  const m = /^\/api\/v1\/tasks\/([^/]+)(\/|$)/.exec(path);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}

/** True when a key of this scope may not act on `taskId` (only `task_prefix` keys are bound to tasks). */
export function outsidePrefix(scope: ApiKeyScope | undefined, taskId: string): boolean {
  return scope?.kind === "task_prefix" && !taskId.startsWith(scope.prefix);
}

/**
 * Why a key of `scope` may not make this request, or null when it may. `path` is the URL's pathname (still encoded).
 * @returns DomainError scope_runtime_only / scope_read_only / scope_task_prefix (403, details `{scope, task_prefix?}`),
 *   or not_found (404) for a task outside a `task_prefix` key's prefix.
 */
export function scopeRefusal(scope: ApiKeyScope | undefined, method: string, path: string): DomainError | null {
  if (!scope || scope.kind === "full") return null;
  const details = { scope: scope.kind, ...(scope.kind === "task_prefix" ? { task_prefix: scope.prefix } : {}) };
  switch (scope.kind) {
    case "read_only":
      if (method === "GET" || method === "HEAD") return null;
      return new DomainError(
        "scope_read_only",
        `This API key is read-only (scope read_only): it may only read (GET). Use a key with scope full or runtime to ${method} ${path}.`,
        details,
      );
    case "runtime":
      if (matches(RUNTIME_ROUTES, method, path)) return null;
      return new DomainError(
        "scope_runtime_only",
        `This API key may use the runtime routes only (scope runtime); ${method} ${path} is not one of them. See docs/api.md#api-key-scopes.`,
        details,
      );
    case "task_prefix": {
      if (matches(ALWAYS, method, path) || (method === "POST" && path === "/api/v1/events")) return null;
      const taskId = taskIdInPath(path);
      if (taskId === null) {
        return new DomainError(
          "scope_task_prefix",
          `This API key acts only on tasks whose id starts with ${JSON.stringify(scope.prefix)} (scope task_prefix); ${method} ${path} is not about one task.`,
          details,
        );
      }
      return outsidePrefix(scope, taskId) ? notFound(`Task ${taskId}`) : null;
    }
  }
}
