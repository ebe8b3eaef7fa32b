/**
 * The tenant's approval settings (lifetime, separation of duties) and per-action rules (docs/concepts.md#freshness).
 * The policy version approvals bind to is lib/domain/policies/current.ts.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { canonicalName } from "../names";
import { durationSeconds } from "../policies/document";
import { policyDocumentCached } from "../policies/egress";

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

/** An approval rule from wherever it is set: a Settings rule on the action, or a tool of the active policy. */
export type ApprovalRule = {
  requires_approval: boolean;
  /** The approval's lifetime under this rule; null: the workspace default. */
  ttl_seconds: number | null;
  /** Where the rule comes from, for messages: `settings` or `policy v<n>`. */
  source: string;
};

/**
 * The approval rule for a write (decision 0033): the active policy's tool entry naming its tool or action and the
 * Settings rule on its action, compared in canonical form. Either one requiring approval requires it; the lifetime is
 * the policy tool's `approval_ttl` when it declares one, else the Settings rule's, else null (the workspace default).
 * @returns null when neither says anything.
 */
export async function approvalRuleFor(
  db: Db,
  tenantId: string,
  write: { action: string; tool: string },
): Promise<ApprovalRule | null> {
  const [settings, policy] = await Promise.all([
    actionRule(db, tenantId, write.action),
    policyToolRule(db, tenantId, write),
  ]);
  if (!settings && !policy) return null;
  return {
    requires_approval: settings?.requires_approval === true || policy?.requires_approval === true,
    ttl_seconds: policy?.ttl_seconds ?? settings?.ttl_seconds ?? null,
    source: policy?.requires_approval || !settings ? `policy v${policy!.version}` : "settings",
  };
}

/**
 * The active policy's entry for a write's tool (or action), compared in canonical form: whether it requires approval
 * and its `approval_ttl` in seconds. Null when no policy is active or it lists neither name.
 */
export async function policyToolRule(
  db: Db,
  tenantId: string,
  write: { action: string; tool: string },
): Promise<{ version: number; requires_approval: boolean; ttl_seconds: number | null } | null> {
  const [ref] = await queryRows<{ version: number; digest: string }>(
    db,
    sql`select version, digest from policy_versions where tenant_id = ${tenantId} and activated_at is not null
        order by activated_at desc limit 1`,
  );
  if (!ref) return null;
  const { document } = await policyDocumentCached(db, tenantId, ref);
  const names = new Set([canonicalName(write.tool), canonicalName(write.action)]);
  const entry = document?.tools.find((t) => names.has(canonicalName(t.name)));
  if (!entry) return null;
  return {
    version: ref.version,
    requires_approval: entry.requires_approval === true,
    ttl_seconds: entry.approval_ttl === undefined ? null : durationSeconds(entry.approval_ttl),
  };
}
