/**
 * An imported workspace is read-only (docs/decisions/0038-workspace-export.md): once a workspace bundle was restored
 * into it, its custody records — tasks, events, side effects, approvals, policies, maps, exercises, settings that
 * decide writes, and the audit chain they are in — are what the bundle held and nothing may add to them. What stays
 * open is what lets people read it: their own account, the workspace's members and invitations, and API keys (a key
 * may read; every runtime write is refused). One check for every API route, before the handler runs.
 */
import type { Actor } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";

/** Paths (under `/api/v1`) whose writes stay open in a read-only workspace: accounts, people, keys, linting. */
const OPEN_IN_READ_ONLY = [
  "/api/v1/me",
  "/api/v1/settings/members",
  "/api/v1/settings/invitations",
  "/api/v1/settings/api-keys",
  "/api/v1/invitations",
  "/api/v1/policies/lint",
] as const;

/** True when `method` on `pathname` would change a read-only workspace's custody records. */
export function writesCustodyRecords(method: string, pathname: string): boolean {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
  return !OPEN_IN_READ_ONLY.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

/**
 * Refuses a write to an imported, read-only workspace.
 * @param actor the caller; `readOnly` is set by the actor's lookup (lib/domain/tenancy/api-keys.ts, sessions.ts).
 * @throws DomainError workspace_read_only (409) naming the workspace's state.
 */
export function refuseWriteToReadOnlyWorkspace(actor: Actor, method: string, pathname: string): void {
  if (actor.kind === "system" || !actor.readOnly) return;
  if (!writesCustodyRecords(method, pathname)) return;
  throw new DomainError(
    "workspace_read_only",
    "This workspace holds an imported workspace bundle and is read-only: its tasks, maps, policies, approvals and audit log are kept as they were exported. Report runs to a workspace of their own.",
  );
}
