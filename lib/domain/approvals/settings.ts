/**
 * The approval settings of Settings → Approvals (docs/concepts.md#freshness): read them with the policy version
 * approvals bind to, change the default lifetime and separation of duties, and mark actions approval-required. Changing
 * the policy version is activating a stored one (lib/domain/policies/current.ts).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, validationError } from "../errors";
import { canonicalName, identifierName } from "../names";
import { LIMITS } from "../limits";
import { currentPolicyVersion } from "../policies/current";
import { refuseSecrets } from "../secrets/redact";
import { actionRules, approvalSettingsOf, type ActionRule, type ApprovalSettings } from "./policy";

export const approvalSettingsBodySchema = z.strictObject({
  default_ttl_seconds: z
    .number()
    .int("a whole number of seconds")
    .min(60, "at least 60 seconds")
    .max(31_536_000, "at most a year")
    .optional(),
  allow_self_approval: z.boolean().optional(),
  /**
   * Whether a retry after a write was found not applied may go under the approval its first go used (default false:
   * the retry needs a fresh approval; an approval authorizes one go).
   */
  retry_after_not_applied_reuses_approval: z.boolean().optional(),
});

export const actionRuleBodySchema = z.strictObject({
  requires_approval: z.boolean(),
  ttl_seconds: z
    .number()
    .int("a whole number of seconds")
    .min(60, "at least 60 seconds")
    .max(31_536_000, "at most a year")
    .nullable()
    .optional(),
});

/** Settings → Approvals: the settings, the policy version approvals bind to, and the per-action rules. */
export type ApprovalSettingsView = ApprovalSettings & { policy_version: string; action_rules: ActionRule[] };

/**
 * The tenant's approval settings as Settings → Approvals shows them: lifetime and separation of duties, the policy
 * version approvals bind to (read from lib/domain/policies/current.ts), and the per-action rules. Any signed-in role.
 * @returns `{policy_version, default_ttl_seconds, allow_self_approval, retry_after_not_applied_reuses_approval,
 *   updated_at, updated_by, action_rules}`.
 * @throws DomainError forbidden (runtime keys).
 */
export async function getApprovalSettings({ db, actor }: VerbContext): Promise<ApprovalSettingsView> {
  authorize(actor, "settings.read");
  const [settings, policy_version, action_rules] = await Promise.all([
    approvalSettingsOf(db, actor.tenantId),
    currentPolicyVersion(db, actor.tenantId),
    actionRules(db, actor.tenantId),
  ]);
  return { policy_version, ...settings, action_rules };
}

/**
 * Changes the tenant's approval TTL default, whether requesters may approve their own requests, and whether a retry
 * after "not applied" reuses the approval its first go used.
 * @param body `{default_ttl_seconds?, allow_self_approval?, retry_after_not_applied_reuses_approval?}`.
 * @throws DomainError forbidden, validation_failed.
 */
export async function updateApprovalSettings({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<void> {
  authorize(actor, "approvals.manage");
  const parsed = approvalSettingsBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const v = parsed.data;
  const by = actorRef(actor).label;
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into approval_settings (tenant_id) values (${actor.tenantId}) on conflict do nothing`);
    await tx.execute(sql`
      update approval_settings
      set default_ttl_seconds = coalesce(${v.default_ttl_seconds ?? null}::integer, default_ttl_seconds),
          allow_self_approval = coalesce(${v.allow_self_approval ?? null}::boolean, allow_self_approval),
          retry_after_not_applied_reuses_approval = coalesce(${v.retry_after_not_applied_reuses_approval ?? null}::boolean,
                                                             retry_after_not_applied_reuses_approval),
          updated_at = now(), updated_by = ${by}
      where tenant_id = ${actor.tenantId}`);
    await appendAudit(tx, actor, {
      action: "approval_settings.changed",
      target: `tenant:${actor.tenantId}`,
      details: { ...v },
    });
  });
}

/**
 * Marks an action approval-required (or not), with its own TTL.
 * @throws DomainError forbidden, validation_failed.
 */
export async function setActionRule(
  { db, actor }: VerbContext,
  { action, body }: { action: string; body: unknown },
): Promise<void> {
  authorize(actor, "approvals.manage");
  const name = identifierName("action", LIMITS.actionName).safeParse(action);
  if (!name.success)
    throw new DomainError("validation_failed", name.error.issues[0]?.message ?? "action must be a plain name.", {
      fields: [{ path: "action", message: name.error.issues[0]?.message ?? "plain name" }],
    });
  refuseSecrets({ action: name.data }, "The action name", "name the action, never a credential");
  // Kept in the canonical form every rule lookup uses (decision 0033): a rule on `pay.out` holds for `Pay.out` too.
  const canonical = canonicalName(name.data);
  const parsed = actionRuleBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const by = actorRef(actor).label;
  await db.transaction(async (tx) => {
    await tx.execute(sql`
      insert into approval_action_rules (tenant_id, action, requires_approval, ttl_seconds, updated_by)
      values (${actor.tenantId}, ${canonical}, ${parsed.data.requires_approval}, ${parsed.data.ttl_seconds ?? null}, ${by})
      on conflict (tenant_id, action) do update
      set requires_approval = excluded.requires_approval, ttl_seconds = excluded.ttl_seconds, updated_at = now(), updated_by = excluded.updated_by`);
    await appendAudit(tx, actor, {
      action: "approval_rule.changed",
      target: `action:${canonical}`,
      details: { ...parsed.data },
    });
  });
}

/**
 * Removes an action's rule (the action no longer needs approval by tenant setting).
 * @throws DomainError forbidden.
 */
export async function deleteActionRule({ db, actor }: VerbContext, { action }: { action: string }): Promise<void> {
  authorize(actor, "approvals.manage");
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`delete from approval_action_rules where tenant_id = ${actor.tenantId} and action = ${canonicalName(action)} returning action`,
    );
    if (rows.length)
      await appendAudit(tx, actor, { action: "approval_rule.removed", target: `action:${action}`, details: {} });
  });
}
