/**
 * Who may act on a gate reason from the dashboard (issue 7 §5: a viewer saw "Go to the thing to fix" links for
 * things they may not fix). Pure and free of server imports, so the task page's client part uses it too.
 */
import type { Role } from "@/db/schema/enums";
import { PERMISSIONS, type Action } from "../authz";

/**
 * Gate reason code → the permission (lib/domain/authz.ts PERMISSIONS) a person needs to fix it in the dashboard.
 * Codes not listed are not fixed by a person here: the runtime writes a new checkpoint, the vault issues a fresh
 * credential, a snapshot is restored again; the reason's link then only shows the evidence. Approval reasons
 * (issue 8) are fixed by deciding (or re-approving under the current policy) the approval they link to.
 */
export const REASON_FIX_ACTION: Readonly<Partial<Record<string, Action>>> = {
  side_effect_unknown: "side_effects.reconcile",
  principal_revoked: "principals.manage",
  approval_missing: "approvals.decide",
  approval_stale: "approvals.decide",
  policy_changed: "approvals.decide",
};

/** What a person with `role` may do about a reason with `code`. */
export type ReasonFix =
  /** The role may fix it: link to the place to act. */
  | { kind: "can_fix" }
  /** Only other roles may (`roles`, from PERMISSIONS): the place may be viewed. */
  | { kind: "other_roles"; roles: readonly Role[] }
  /** No person fixes it in the dashboard; the link shows the evidence. */
  | { kind: "not_in_dashboard" };

/** Whether `role` may act on a reason `code` (see {@link REASON_FIX_ACTION}). */
export function reasonFix(code: string, role: Role): ReasonFix {
  const action = Object.hasOwn(REASON_FIX_ACTION, code) ? REASON_FIX_ACTION[code] : undefined;
  if (!action) return { kind: "not_in_dashboard" };
  const roles = PERMISSIONS[action].roles as readonly Role[];
  return roles.includes(role) ? { kind: "can_fix" } : { kind: "other_roles", roles };
}
