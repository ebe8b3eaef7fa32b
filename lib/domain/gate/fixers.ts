/**
 * Who may act on a gate reason from the dashboard: a viewer sees a "View" link, never "Go to the thing to fix", for
 * things they may not fix. Pure and free of server imports, so the task page's client part uses it too.
 */
import type { Role } from "@/db/schema/enums";
import type { GateReasonCode } from "@/lib/contract/api";
import { PERMISSIONS } from "../authz";
import { GATE_REASONS } from "./reasons";

/** What a person with `role` may do about a reason with `code`. */
export type ReasonFix =
  /** The role may fix it: link to the place to act. */
  | { kind: "can_fix" }
  /** Only other roles may (`roles`, from PERMISSIONS): the place may be viewed. */
  | { kind: "other_roles"; roles: readonly Role[] }
  /** No person fixes it in the dashboard; the link shows the evidence. */
  | { kind: "not_in_dashboard" };

/**
 * Whether `role` may act on a reason `code`: the catalogue's `fix` permission (lib/domain/gate/reasons.ts). A code this
 * build does not know (a page loaded before a deploy) is treated as fixed by nobody in the dashboard.
 */
export function reasonFix(code: GateReasonCode, role: Role): ReasonFix {
  const action = Object.hasOwn(GATE_REASONS, code) ? GATE_REASONS[code].fix : null;
  if (!action) return { kind: "not_in_dashboard" };
  const roles = PERMISSIONS[action].roles as readonly Role[];
  return roles.includes(role) ? { kind: "can_fix" } : { kind: "other_roles", roles };
}
