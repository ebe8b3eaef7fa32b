/**
 * Who may do what: the single table of permissions, checked first by every domain verb.
 * Roles: docs/concepts.md#tenants-people-and-roles; deciding (reconcile, approve) is for people only.
 */
import type { Role } from "@/db/schema/enums";
import { DomainError } from "./errors";
import type { ApiKeyScope } from "./tenancy/api-key-scope";

export type UserActor = {
  kind: "user";
  tenantId: string;
  userId: string;
  email: string;
  role: Role;
  /** sha256 of the session id when the actor comes from a session (lib/domain/tenancy/sessions.ts). */
  sessionHash?: string;
  /** Set when the workspace holds an imported bundle and its custody records are read-only (decision 0038). */
  readOnly?: true;
};

export type ApiKeyActor = {
  kind: "api_key";
  tenantId: string;
  keyId: string;
  keyName: string;
  /** What the key may reach (decision 0044); absent = `full`, as for keys made before scopes. */
  scope?: ApiKeyScope;
  /** As for a person: the workspace is an imported, read-only one (decision 0038). */
  readOnly?: true;
};

export type SystemActor = { kind: "system"; tenantId: string; label: string };

export type Actor = UserActor | ApiKeyActor | SystemActor;

const ANY_ROLE: readonly Role[] = ["owner", "approver", "responder", "viewer", "admin"];

/**
 * Action → which actors may take it. `runtime` = a tenant API key; `roles` = signed-in people with one of
 * these roles. System actors (seed scripts, maintenance) may do everything.
 */
export const PERMISSIONS = {
  "events.write": { runtime: true, roles: [] },
  "tasks.checkpoint": { runtime: true, roles: [] },
  // An artifact's bytes (decision 0045): the runtime that wrote them uploads them; people read them with the task.
  "artifacts.upload": { runtime: true, roles: [] },
  "tasks.read": { runtime: true, roles: ANY_ROLE },
  // A task's evidence bundle (decision 0037): whoever may read the task, person or runtime.
  "tasks.export": { runtime: true, roles: ANY_ROLE },
  "side_effects.intent": { runtime: true, roles: [] },
  "side_effects.receipt": { runtime: true, roles: [] },
  "side_effects.reconcile": { runtime: false, roles: ["responder", "owner", "admin"] },
  // Fencing a task to a new attempt (decision 0032): the people who reconcile; never a runtime (it would fence itself).
  "tasks.fence": { runtime: false, roles: ["responder", "owner", "admin"] },
  "tasks.terminate": { runtime: false, roles: ["responder", "owner", "admin"] },
  // Deleting a whole task (decision 0054): what it held goes for good, so only those who set the workspace's retention.
  "tasks.delete": { runtime: false, roles: ["owner", "admin"] },
  "gate.ask": { runtime: true, roles: ANY_ROLE },
  // Importing an agent runtime's saved state (decision 0013): the runtime itself, or a person who handles runs.
  "imports.run_state": { runtime: true, roles: ["responder", "owner", "admin"] },
  "api_keys.manage": { runtime: false, roles: ["owner", "admin"] },
  "settings.read": { runtime: false, roles: ANY_ROLE },
  "lookups.manage": { runtime: false, roles: ["owner", "admin"] },
  // Standard Webhooks in and out (decision 0040): sources that report outcomes and where notifications go.
  "webhooks.manage": { runtime: false, roles: ["owner", "admin"] },
  "notifications.manage": { runtime: false, roles: ["owner", "admin"] },
  "principals.manage": { runtime: false, roles: ["owner", "admin"] },
  "members.unlock": { runtime: false, roles: ["owner", "admin"] },
  // The audit log (decision 0048): every person reads it on the Audit page; a machine reads and exports it over the API
  // with a `full` or `read_only` key (a `runtime` or `task_prefix` key is refused by its scope).
  "audit.read": { runtime: true, roles: ANY_ROLE },
  // Custody maps and interruption exercises (docs/concepts.md#custody-maps): workflow owners and admins fill and test
  // them; everyone reads.
  "maps.read": { runtime: false, roles: ANY_ROLE },
  "maps.edit": { runtime: false, roles: ["owner", "admin"] },
  // Signing off a published adoption decision (decision 0046): a reviewer who may approve, never its last editor.
  "maps.signoff": { runtime: false, roles: ["owner", "admin", "approver"] },
  // Commenting on a layer: everyone who works on runs; viewers read.
  "maps.comment": { runtime: false, roles: ["owner", "admin", "approver", "responder"] },
  "members.manage": { runtime: false, roles: ["owner", "admin"] },
  "account.manage": { runtime: false, roles: ANY_ROLE },
  // Policy versions (decision 0017): anyone may lint (runtimes lint in their own CI) and read; owners and admins store
  // and activate.
  "policies.lint": { runtime: true, roles: ANY_ROLE },
  "policies.read": { runtime: true, roles: ANY_ROLE },
  "policies.manage": { runtime: false, roles: ["owner", "admin"] },
  // Asking a credential's revocation endpoint records evidence on the task: the people who reconcile.
  "credentials.check": { runtime: false, roles: ["responder", "owner", "admin"] },
  // Approvals (decision 0012): runtimes create requests (through intents) and read them; only people with a deciding
  // role decide. The owner counts as an admin here as everywhere in this table.
  "approvals.read": { runtime: true, roles: ANY_ROLE },
  "approvals.decide": { runtime: false, roles: ["approver", "admin", "owner"] },
  "approvals.manage": { runtime: false, roles: ["owner", "admin"] },
  // Accepting a tool's changed definition (decision 0033): a person who may approve writes, never the runtime.
  "tools.accept": { runtime: false, roles: ["approver", "admin", "owner"] },
  // Leaving with everything (decision 0038): the whole workspace goes out to owners and admins; an import fills an
  // empty workspace, which only its owner may.
  "workspace.export": { runtime: false, roles: ["owner", "admin"] },
  "workspace.import": { runtime: false, roles: ["owner"] },
  // Retention settings (decision 0054): everyone reads them (settings.read); owners and admins change them.
  "retention.manage": { runtime: false, roles: ["owner", "admin"] },
} as const satisfies Record<string, { runtime: boolean; roles: readonly Role[] }>;

export type Action = keyof typeof PERMISSIONS;

/** True when `actor` may take `action`. */
export function can(actor: Actor, action: Action): boolean {
  const rule = PERMISSIONS[action];
  if (actor.kind === "system") return true;
  if (actor.kind === "api_key") return rule.runtime;
  return (rule.roles as readonly Role[]).includes(actor.role);
}

/**
 * Throws `forbidden` unless `actor` may take `action`.
 * @throws DomainError forbidden — with a message naming the roles that may.
 */
export function authorize(actor: Actor, action: Action): void {
  if (can(actor, action)) return;
  const rule = PERMISSIONS[action];
  if (actor.kind !== "user") {
    throw new DomainError("forbidden", `A runtime API key cannot ${describe(action)}; a signed-in person must.`);
  }
  const who = rule.roles.length ? `roles ${rule.roles.join(", ")}` : "runtime API keys";
  throw new DomainError("forbidden", `Your role (${actor.role}) cannot ${describe(action)}; only ${who} can.`);
}

const PHRASES: Record<Action, string> = {
  "events.write": "report events",
  "tasks.checkpoint": "checkpoint task records",
  "artifacts.upload": "upload artifact contents",
  "tasks.read": "read tasks",
  "tasks.export": "export task evidence bundles",
  "side_effects.intent": "register side-effect intents",
  "side_effects.receipt": "record receipts",
  "side_effects.reconcile": "reconcile side effects",
  "tasks.fence": "fence tasks to a new attempt",
  "tasks.terminate": "end tasks for good",
  "tasks.delete": "delete tasks",
  "gate.ask": "ask the resume gate",
  "imports.run_state": "import agent run states",
  "api_keys.manage": "manage runtime API keys",
  "settings.read": "read settings",
  "lookups.manage": "manage lookup endpoints",
  "webhooks.manage": "manage webhook sources and their secrets",
  "notifications.manage": "manage notification endpoints and send deliveries again",
  "principals.manage": "revoke or restore principals",
  "members.unlock": "unlock members locked out by failed sign-ins",
  "audit.read": "read the audit log",
  "maps.read": "read custody maps",
  "maps.edit": "edit, publish or import custody maps or record interruption exercises",
  "maps.signoff": "sign off a custody map's adoption decision",
  "maps.comment": "comment on a custody map's layers",
  "members.manage": "invite members, change their roles or remove them",
  "account.manage": "change their own password or switch workspace",
  "policies.lint": "lint policy documents",
  "policies.read": "read policy versions",
  "policies.manage": "store and activate policy versions",
  "credentials.check": "test whether a run's credential is revoked",
  "approvals.read": "read approvals",
  "approvals.decide": "approve or reject side effects",
  "approvals.manage": "change the policy version or the approval settings",
  "tools.accept": "accept a tool's changed definition",
  "workspace.export": "export the whole workspace",
  "workspace.import": "import a workspace bundle into this workspace",
  "retention.manage": "change the workspace's retention settings",
};

function describe(action: Action): string {
  return PHRASES[action];
}

/** A stable identifier for audit rows. */
export function actorRef(actor: Actor): { kind: Actor["kind"]; id: string; label: string } {
  switch (actor.kind) {
    case "user":
      return { kind: "user", id: actor.userId, label: actor.email };
    case "api_key":
      return { kind: "api_key", id: actor.keyId, label: `key:${actor.keyName}` };
    case "system":
      return { kind: "system", id: "system", label: actor.label };
  }
}

/** One row of {@link permissionMatrix}. */
export type PermissionRow = { action: Action; phrase: string; runtime: boolean; roles: readonly Role[] };

/**
 * The permissions table as rows people can read (Settings shows it): what each action is, whether a runtime API
 * key may take it, and which roles may. Rules beyond the table (only an owner grants, changes or removes the owner
 * role; the last owner stays) are in lib/domain/tenancy/member-rules.ts.
 */
export function permissionMatrix(): PermissionRow[] {
  return (Object.keys(PERMISSIONS) as Action[]).map((action) => ({
    action,
    phrase: PHRASES[action],
    runtime: PERMISSIONS[action].runtime,
    roles: PERMISSIONS[action].roles,
  }));
}
