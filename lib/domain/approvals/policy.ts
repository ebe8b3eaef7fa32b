/**
 * The tenant's current policy version and approval settings (issue 8 "Current policy version").
 * Until versioned policy documents exist (a later issue), the current version is a tenant setting; every reader goes
 * through {@link currentPolicyVersion}, so the later issue swaps the source behind it and nothing else changes.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";

/** The version a tenant has before an admin sets one. */
export const DEFAULT_POLICY_VERSION = "1";
/** Default approval lifetime: 24 hours. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 86_400;

export type ApprovalSettingsView = {
  policy_version: string;
  default_ttl_seconds: number;
  allow_self_approval: boolean;
  updated_at: string | null;
  updated_by: string | null;
};

/**
 * The tenant's current policy version (the one new approvals bind to, and against which bound ones go stale).
 * @param db a database or transaction scoped to the tenant.
 */
export async function currentPolicyVersion(db: Db, tenantId: string): Promise<string> {
  return (await approvalSettingsOf(db, tenantId)).policy_version;
}

/** The tenant's approval settings, defaults when none were saved. */
export async function approvalSettingsOf(db: Db, tenantId: string): Promise<ApprovalSettingsView> {
  const [row] = await queryRows<{
    policy_version: string;
    default_ttl_seconds: number;
    allow_self_approval: boolean;
    updated_at: string | null;
    updated_by: string | null;
  }>(
    db,
    sql`select policy_version, default_ttl_seconds, allow_self_approval,
               to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at, updated_by
        from approval_settings where tenant_id = ${tenantId}`,
  );
  return (
    row ?? {
      policy_version: DEFAULT_POLICY_VERSION,
      default_ttl_seconds: DEFAULT_APPROVAL_TTL_SECONDS,
      allow_self_approval: false,
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

/** The rule for one action, or null. */
export async function actionRule(db: Db, tenantId: string, action: string): Promise<ActionRule | null> {
  const [row] = await queryRows<ActionRule>(
    db,
    sql`select action, requires_approval, ttl_seconds from approval_action_rules where tenant_id = ${tenantId} and action = ${action}`,
  );
  return row ?? null;
}
