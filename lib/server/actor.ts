/**
 * Who is calling: a runtime API key (`Authorization: Bearer rck_…`) or a signed-in person (next-auth session
 * cookie whose server-side session is live). One place for authentication; authorization happens in the domain verbs.
 */
import { getServerSession } from "next-auth";
import { getOwnerDb, withGenericPlans } from "@/db";
import type { Actor, UserActor } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { scopeRefusal } from "@/lib/domain/tenancy/api-key-scope";
import { authenticateApiKey } from "@/lib/domain/tenancy/api-keys";
import { actorForSession } from "@/lib/domain/tenancy/sessions";
import { authOptions } from "./auth";

/**
 * The actor of an API request.
 * @throws DomainError unauthorized — no credentials, an unknown or revoked key, or a session that ended (signed out,
 *   removed from the workspace, expired); api_key_expired (401) — the key's expiry has come; scope_read_only,
 *   scope_runtime_only, scope_task_prefix (403) — the route is outside the key's scope; not_found (404) — a task
 *   outside a task_prefix key's prefix (decision 0044, lib/domain/tenancy/api-key-scope.ts).
 */
export async function requireActor(req: Request): Promise<Actor> {
  const header = req.headers.get("authorization");
  if (header) {
    const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!m) throw new DomainError("unauthorized", "Authorization must be `Bearer <runtime API key>`.");
    // The key names its tenant, so it is looked up by its hash on the owner's database (decision 0016).
    // A lookup by a unique hash on every API request: prepared, planned once per connection (decision 0022).
    const actor = await withGenericPlans(async () => authenticateApiKey(await getOwnerDb(), m[1]!));
    if (!actor) {
      throw new DomainError(
        "unauthorized",
        "This API key is not valid or was revoked. Create a new one under Settings → Runtime API keys.",
      );
    }
    // What the key may reach (decision 0044), for every route that authenticates, before its handler runs.
    const refused = scopeRefusal(actor.scope, req.method, new URL(req.url).pathname);
    if (refused) throw refused;
    return actor;
  }
  const user = await currentUser();
  if (!user)
    throw new DomainError("unauthorized", "Sign in, or send a runtime API key as `Authorization: Bearer <key>`.");
  if (!sameOrigin(req)) {
    throw new DomainError(
      "forbidden",
      "Cross-site requests cannot act with your session; use the dashboard or an API key.",
    );
  }
  return user;
}

/**
 * Cookie-authenticated changes must come from our own pages: when a browser sends `Origin` on a non-GET request,
 * it must match the host the request was sent to (defence in depth on top of SameSite=Lax session cookies).
 */
export function sameOrigin(req: Request): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  const origin = req.headers.get("origin");
  if (!origin) return true;
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * The signed-in person as an actor in their session's workspace, or null: no cookie, a cookie from before
 * server-side sessions, or a session that ended or whose membership is no longer active.
 */
export async function currentUser(): Promise<UserActor | null> {
  const session = await getServerSession(authOptions());
  const sid = (session?.user as { sid?: string } | undefined)?.sid;
  if (!sid) return null;
  // The session names its workspace, so it is looked up by its hash on the owner's database (decision 0016).
  return actorForSession(await getOwnerDb(), sid);
}
