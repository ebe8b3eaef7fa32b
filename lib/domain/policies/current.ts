/**
 * The tenant's current policy version: the one module that reads and changes it
 * (docs/decisions/0026-one-current-policy-version.md).
 *
 * Two columns hold it, and only this module writes them, together, in one transaction:
 * - `policy_versions.activated_at`: the latest activation names the current stored document (egress, credentials and
 *   revocation endpoints are read from it);
 * - `approval_settings.policy_version`: the version new approvals bind to and against which bound ones go stale
 *   (docs/decisions/0012-approval-binding-and-freshness.md): `String(version)` of the latest activation,
 *   {@link DEFAULT_POLICY_VERSION} before any.
 *
 * Activating a version is the one way to change it (`POST /api/v1/policies/{version}/activate`, Settings → Approvals,
 * the Policies page); `GET /api/v1/policies/current` reads it.
 */
import { and, desc, eq, isNotNull, sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { policyVersions } from "@/db/schema";
import { approvalEvent } from "../approvals/requests";
import { appendAudit } from "../audit/append";
import { notifyPolicyActivated } from "../notifications/facts";
import { actorRef, authorize, type Actor } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound } from "../errors";

/** The version approvals bind to before the tenant activates any stored version. */
export const DEFAULT_POLICY_VERSION = "1";

/** A stored policy version as Drizzle reads it. */
export type PolicyRow = typeof policyVersions.$inferSelect;

/** What an activation did. */
export type PolicyActivation = {
  version: number;
  digest: string;
  /** The version it replaced; null when none was active. */
  previous: number | null;
  /** False when the version was already current (nothing was written). */
  changed: boolean;
  /** Live approvals bound to another version, now stale (`policy_changed`). */
  invalidated: Array<{ id: string; task_id: string; side_effect: string }>;
};

/**
 * The version new approvals bind to, and against which bound ones go stale.
 * @param db a database or transaction walled to the tenant.
 * @returns the label, e.g. `"3"`; {@link DEFAULT_POLICY_VERSION} before any activation.
 */
export async function currentPolicyVersion(db: Db, tenantId: string): Promise<string> {
  const [row] = await queryRows<{ policy_version: string }>(
    db,
    sql`select policy_version from approval_settings where tenant_id = ${tenantId}`,
  );
  return row?.policy_version ?? DEFAULT_POLICY_VERSION;
}

/** The tenant's current stored version (the latest activation), or null when none was ever activated. */
export async function currentPolicyRow(db: Db, tenantId: string): Promise<PolicyRow | null> {
  const rows = await db
    .select()
    .from(policyVersions)
    .where(and(eq(policyVersions.tenantId, tenantId), isNotNull(policyVersions.activatedAt)))
    .orderBy(desc(policyVersions.activatedAt))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Makes a stored version current (owners and admins), in one guarded statement beside its audit row; the version
 * approvals bind to becomes `String(version)` in the same transaction, and approvals bound to another version go
 * stale. Activating the version that is already current changes nothing. Activating an older version again (a
 * rollback) is allowed.
 * @param input.version the stored version's number.
 * @returns the activated version, the one it replaced, and the approvals made stale.
 * @throws DomainError forbidden (403), not_found (404), policy_invalid (422 with `details.findings`: a lint error).
 */
export async function activatePolicyVersion(
  { db, actor }: VerbContext,
  { version }: { version: number },
): Promise<PolicyActivation> {
  authorize(actor, "policies.manage");
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${"policy:" + actor.tenantId}, 0))`);
    const current = await currentPolicyRow(tx, actor.tenantId);
    const [target] = await tx
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.tenantId, actor.tenantId), eq(policyVersions.version, version)))
      .limit(1);
    if (!target) throw notFound(`policy version ${version}`);
    if (!target.valid) {
      const errors = target.findings.filter((f) => f.severity === "error");
      throw new DomainError(
        "policy_invalid",
        `Policy version ${version} has ${errors.length} lint error${errors.length === 1 ? "" : "s"} (first: ${errors[0]?.path || "document"}: ${errors[0]?.message ?? "?"}); store a corrected document and activate that.`,
        { findings: target.findings },
      );
    }
    if (current?.version === version)
      return { version, digest: target.digest, previous: version, changed: false, invalidated: [] };
    const updated = await tx
      .update(policyVersions)
      .set({ activatedAt: sql`clock_timestamp()`, activatedBy: actorRef(actor).label })
      .where(
        and(
          eq(policyVersions.tenantId, actor.tenantId),
          eq(policyVersions.version, version),
          eq(policyVersions.valid, true),
        ),
      )
      .returning({ version: policyVersions.version });
    if (!updated[0]) throw notFound(`policy version ${version}`);
    await appendAudit(tx, actor, {
      action: "policy.activated",
      target: `policy:${version}`,
      details: { version, digest: target.digest, previous: current?.version ?? null },
    });
    const invalidated = await bindApprovalsTo(tx, actor, String(version));
    await notifyPolicyActivated(tx, actor.tenantId, {
      version,
      previous: current?.version ?? null,
      document: target.document,
      invalidated,
    });
    return { version, digest: target.digest, previous: current?.version ?? null, changed: true, invalidated };
  });
}

/**
 * Moves the version approvals bind to, inside the activation's transaction: every live, unused approval bound to
 * another version goes stale at once (`policy_changed`, one guarded set-based UPDATE), each with an
 * `approval.invalidated` audit entry and a mark on its task's session lane, beside one `policy.changed` entry.
 * @returns the approvals made stale (none when `version` already is the one they bind to).
 */
async function bindApprovalsTo(tx: Db, actor: Actor, version: string): Promise<PolicyActivation["invalidated"]> {
  const tenantId = actor.tenantId;
  const by = actorRef(actor).label;
  await tx.execute(sql`insert into approval_settings (tenant_id) values (${tenantId}) on conflict do nothing`);
  const [before] = await queryRows<{ policy_version: string }>(
    tx,
    sql`select policy_version from approval_settings where tenant_id = ${tenantId} for update`,
  );
  const previous = before?.policy_version ?? DEFAULT_POLICY_VERSION;
  if (previous === version) return [];
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
  return invalidated.map(({ id, task_id, side_effect }) => ({ id, task_id, side_effect }));
}
