/**
 * Changing the current policy version and the approval settings (issue 8 "Current policy version"; Settings page and
 * `PUT /api/v1/policy/current`).
 *
 * Changing the policy version makes every live, unused approval request bound to another version stale at once, in the
 * same transaction: each gets `policy_changed` recorded (one guarded set-based UPDATE), an `approval.invalidated` audit
 * entry and an `approval.invalidated` mark on its task's session lane; the change itself is a `policy.changed` entry.
 */
import { sql } from "drizzle-orm";
import { activatePolicyVersion } from "../policies/store";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { appendAudit } from "../audit/append";
import { actorRef, authorize, type Actor } from "../authz";
import { DomainError, validationError } from "../errors";
import { plainName } from "../names";
import { refuseSecrets } from "../secrets/redact";
import { withRetry } from "../tx";
import { DEFAULT_POLICY_VERSION } from "./policy";
import { approvalEvent } from "./requests";
import type { VerbContext } from "../context";

export const policyVersionBodySchema = z.strictObject({ version: plainName("version", 100) });

export const approvalSettingsBodySchema = z.strictObject({
  default_ttl_seconds: z
    .number()
    .int("a whole number of seconds")
    .min(60, "at least 60 seconds")
    .max(31_536_000, "at most a year")
    .optional(),
  allow_self_approval: z.boolean().optional(),
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

/** The result of a policy change. */
export type PolicyChange = {
  version: string;
  previous: string;
  invalidated: Array<{ id: string; task_id: string; side_effect: string }>;
};

/**
 * Sets the tenant's current policy version.
 * @param body `{version}`.
 * @returns `{version, previous, invalidated: [{id, task_id, side_effect}]}` — the approvals made stale.
 * @throws DomainError forbidden (not owner/admin, runtime key), validation_failed.
 */
export async function setPolicyVersion({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<PolicyChange> {
  authorize(actor, "approvals.manage");
  const parsed = policyVersionBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  refuseSecrets(parsed.data, "The policy version", "name the version, never a credential");
  const version = parsed.data.version;
  // Policy documents (issue 11): a version the tenant stored is activated like any other activation (lint-gated);
  // once a tenant keeps documents, the current version can only be one of them.
  const stored = await policyVersionStored(db, actor.tenantId, version);
  if (stored === "stored") {
    const activated = await activatePolicyVersion({ db, actor }, { version: Number(version) });
    return {
      version,
      previous: activated.previous === null ? DEFAULT_POLICY_VERSION : String(activated.previous),
      invalidated: activated.invalidated,
    };
  }
  if (stored === "missing") {
    throw new DomainError(
      "not_found",
      `Policy version ${version} is not stored. Store the document with POST /api/v1/policies (or on the Policies page), then activate it.`,
    );
  }
  return withRetry(() => db.transaction(async (tx) => switchPolicyVersion(tx, actor, version)));
}

/**
 * Whether `version` names one of the tenant's stored policy documents: `stored`, `missing` (the tenant keeps
 * documents but not this one), or `none` (no documents: the version is a plain label, issue 8's setting).
 */
async function policyVersionStored(db: Db, tenantId: string, version: string): Promise<"stored" | "missing" | "none"> {
  const [row] = await queryRows<{ any: boolean; this: boolean }>(
    db,
    sql`select exists (select 1 from policy_versions where tenant_id = ${tenantId}) as any,
               exists (select 1 from policy_versions where tenant_id = ${tenantId} and version::text = ${version}) as this`,
  );
  return row?.this ? "stored" : row?.any ? "missing" : "none";
}

/**
 * Makes `version` the tenant's current policy version inside `tx`: approvals bound to another version go stale at
 * once (`policy_changed`), each with its audit entry and a session-lane event, beside one `policy.changed` entry.
 * The one place the current version changes, whether set as a label or by activating a stored document.
 */
export async function switchPolicyVersion(tx: Db, actor: Actor, version: string): Promise<PolicyChange> {
  const tenantId = actor.tenantId;
  const by = actorRef(actor).label;
  await tx.execute(sql`insert into approval_settings (tenant_id) values (${tenantId}) on conflict do nothing`);
  const [before] = await queryRows<{ policy_version: string }>(
    tx,
    sql`select policy_version from approval_settings where tenant_id = ${tenantId} for update`,
  );
  const previous = before?.policy_version ?? DEFAULT_POLICY_VERSION;
  if (previous === version) return { version, previous, invalidated: [] };
  await tx.execute(
    sql`update approval_settings set policy_version = ${version}, updated_at = now(), updated_by = ${by} where tenant_id = ${tenantId}`,
  );
  const invalidated = await queryRows<{ id: string; task_id: string; side_effect: string; policy_version: string }>(
    tx,
    sql`update approval_requests
        set invalidated_reasons = case when 'policy_changed' = any(invalidated_reasons) then invalidated_reasons
                                       else array_append(invalidated_reasons, 'policy_changed') end,
            invalidated_at = now()
        where tenant_id = ${tenantId} and superseded_by is null and consumed_at is null
          and decision is distinct from 'reject' and policy_version <> ${version}
        returning id, task_id, side_effect, policy_version`,
  );
  await appendAudit(tx, actor, {
    action: "policy.changed",
    target: `tenant:${tenantId}`,
    details: { from: previous, to: version, invalidated: invalidated.map((r) => r.id) },
  });
  for (const r of invalidated) {
    const audit = await appendAudit(tx, actor, {
      action: "approval.invalidated",
      target: `approval:${r.id}`,
      details: {
        task_id: r.task_id,
        side_effect: r.side_effect,
        reason: "policy_changed",
        bound_policy_version: r.policy_version,
        current_policy_version: version,
      },
    });
    await approvalEvent(
      tx,
      tenantId,
      r.task_id,
      r.id,
      "approval.invalidated",
      by,
      {
        side_effect: r.side_effect,
        reason: "policy_changed",
        from: r.policy_version,
        to: version,
        audit_seq: audit.seq,
      },
      `:${audit.seq}`,
    );
  }
  return {
    version,
    previous,
    invalidated: invalidated.map(({ id, task_id, side_effect }) => ({ id, task_id, side_effect })),
  };
}

/**
 * Changes the tenant's approval TTL default and whether requesters may approve their own requests.
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
  const name = plainName("action", 200).safeParse(action);
  if (!name.success)
    throw new DomainError("validation_failed", "action must be a plain name.", {
      fields: [{ path: "action", message: "plain name" }],
    });
  refuseSecrets({ action: name.data }, "The action name", "name the action, never a credential");
  const parsed = actionRuleBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const by = actorRef(actor).label;
  await db.transaction(async (tx) => {
    await tx.execute(sql`
      insert into approval_action_rules (tenant_id, action, requires_approval, ttl_seconds, updated_by)
      values (${actor.tenantId}, ${name.data}, ${parsed.data.requires_approval}, ${parsed.data.ttl_seconds ?? null}, ${by})
      on conflict (tenant_id, action) do update
      set requires_approval = excluded.requires_approval, ttl_seconds = excluded.ttl_seconds, updated_at = now(), updated_by = excluded.updated_by`);
    await appendAudit(tx, actor, {
      action: "approval_rule.changed",
      target: `action:${name.data}`,
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
      sql`delete from approval_action_rules where tenant_id = ${actor.tenantId} and action = ${action} returning action`,
    );
    if (rows.length)
      await appendAudit(tx, actor, { action: "approval_rule.removed", target: `action:${action}`, details: {} });
  });
}
