/**
 * The tenant's approval settings (lifetime, separation of duties) and per-action rules (docs/concepts.md#freshness).
 * The policy version approvals bind to is lib/domain/policies/current.ts.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { canonicalName } from "../names";

/** Default approval lifetime: 24 hours. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 86_400;

/** A tenant's approval settings; `updated_*` name the last change to them or to the policy version. */
export type ApprovalSettings = {
  default_ttl_seconds: number;
  allow_self_approval: boolean;
  /**
   * A retry after a write was found not applied (reconcile or `not_applied` receipt) may go under the approval its first
   * go used; false (the default): it needs a fresh approval, as an approval authorizes one go.
   */
  retry_after_not_applied_reuses_approval: boolean;
  updated_at: string | null;
  updated_by: string | null;
};

/** The tenant's approval settings, defaults when none were saved. */
export async function approvalSettingsOf(db: Db, tenantId: string): Promise<ApprovalSettings> {
  const [row] = await queryRows<ApprovalSettings>(
    db,
    sql`select default_ttl_seconds, allow_self_approval, retry_after_not_applied_reuses_approval,
               to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at, updated_by
        from approval_settings where tenant_id = ${tenantId}`,
  );
  return (
    row ?? {
      default_ttl_seconds: DEFAULT_APPROVAL_TTL_SECONDS,
      allow_self_approval: false,
      retry_after_not_applied_reuses_approval: false,
      updated_at: null,
      updated_by: null,
    }
  );
}

/** One action's approval rule (absent = not approval-required by the tenant, default TTL). */
export type ActionRule = { action: string; requires_approval: boolean; ttl_seconds: number | null };

/** The tenant's per-action rules, by action name. */
export async function actionRules(db: Db, tenantId: string): Promise<ActionRule[]> {
  return queryRows<ActionRule>(
    db,
    sql`select action, requires_approval, ttl_seconds from approval_action_rules where tenant_id = ${tenantId} order by action`,
  );
}

/** The rule for one action (compared in canonical form, decision 0033), or null. */
export async function actionRule(db: Db, tenantId: string, action: string): Promise<ActionRule | null> {
  const [row] = await queryRows<ActionRule>(
    db,
    sql`select action, requires_approval, ttl_seconds from approval_action_rules
        where tenant_id = ${tenantId} and action = ${canonicalName(action)}`,
  );
  return row ?? null;
}

/** Whether the tenant lets a retry after "not applied" go under the approval its first go used (default false). */
export async function retryReusesApproval(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await queryRows<{ reuse: boolean }>(
    db,
    sql`select retry_after_not_applied_reuses_approval as reuse from approval_settings where tenant_id = ${tenantId}`,
  );
  return row?.reuse === true;
}
