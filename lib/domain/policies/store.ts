/**
 * Policy versions of a tenant (DESIGN.md "Policy version"; issue 11): store a document as the next immutable
 * version with its lint findings, list and read them, and activate one. A version with a lint error is kept (so
 * people can see what was wrong) but can never be activated. Each store and activation is one transaction with its
 * audit row on the tenant's hash chain.
 */
import { and, desc, eq, isNotNull, sql } from "drizzle-orm";
import type { Db } from "@/db";
import { policyVersions } from "@/db/schema";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { canonicalDigest, sha256Hex } from "../crypto/canonical";
import { DomainError, notFound } from "../errors";
import type { PolicyDocument, PolicyFinding } from "./document";
import { lintPolicyText } from "./lint";
import { switchPolicyVersion } from "../approvals/settings";
import type { VerbContext } from "../context";

/** A version in lists: `active` is true for the current one only. */
export type PolicySummary = {
  version: number;
  digest: string;
  valid: boolean;
  created_by: string;
  created_at: string;
  active: boolean;
  activated_at: string | null;
};

/** A version with its document, the text as sent, and its findings. */
export type PolicyView = PolicySummary & {
  document: PolicyDocument | null;
  source_text: string;
  source_format: "json" | "yaml";
  findings: PolicyFinding[];
};

type Row = typeof policyVersions.$inferSelect;

function summary(row: Row, currentVersion: number | null): PolicySummary {
  return {
    version: row.version,
    digest: row.digest,
    valid: row.valid,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    active: row.version === currentVersion,
    activated_at: row.activatedAt?.toISOString() ?? null,
  };
}

function view(row: Row, currentVersion: number | null): PolicyView {
  return {
    ...summary(row, currentVersion),
    document: row.document,
    source_text: row.sourceText,
    source_format: row.sourceFormat,
    findings: row.findings,
  };
}

/** The tenant's current policy version row (the latest activation), or null when none was ever activated. */
export async function currentPolicyRow(db: Db, tenantId: string): Promise<Row | null> {
  const rows = await db
    .select()
    .from(policyVersions)
    .where(and(eq(policyVersions.tenantId, tenantId), isNotNull(policyVersions.activatedAt)))
    .orderBy(desc(policyVersions.activatedAt))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Stores a document as the tenant's next version (owners and admins). The same document (same canonical digest)
 * stored again returns the version it already has and writes nothing.
 * @param input the text as sent and its format.
 * @returns `{version, digest, findings, valid, created}`; `created` is false for a document already stored.
 * @throws DomainError forbidden (403), and what {@link lintPolicyText} throws (400, 413, 422: nothing stored).
 */
export async function storePolicyVersion(
  { db, actor }: VerbContext,
  input: { text: string; format: "json" | "yaml" },
): Promise<{ version: number; digest: string; findings: PolicyFinding[]; valid: boolean; created: boolean }> {
  authorize(actor, "policies.manage");
  const lint = lintPolicyText(input.text, input.format);
  const digest = lint.document ? canonicalDigest(lint.document) : sha256Hex(input.text);
  return db.transaction(async (tx) => {
    // One writer per tenant at a time: version numbers are dense and a repeated document is found, not stored twice.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${"policy:" + actor.tenantId}, 0))`);
    const existing = await tx
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.tenantId, actor.tenantId), eq(policyVersions.digest, digest)))
      .limit(1);
    if (existing[0]) {
      const row = existing[0];
      return { version: row.version, digest, findings: row.findings, valid: row.valid, created: false };
    }
    const [row] = await tx
      .insert(policyVersions)
      .values({
        tenantId: actor.tenantId,
        version: sql`(select coalesce(max(version), 0) + 1 from policy_versions where tenant_id = ${actor.tenantId})`,
        document: lint.document,
        sourceText: input.text,
        sourceFormat: input.format,
        digest,
        findings: lint.findings,
        valid: lint.valid,
        createdBy: actorRef(actor).label,
      })
      .returning();
    await appendAudit(tx, actor, {
      action: "policy.store",
      target: `policy:${row!.version}`,
      details: {
        version: row!.version,
        digest,
        valid: lint.valid,
        errors: lint.findings.filter((f) => f.severity === "error").length,
      },
    });
    return { version: row!.version, digest, findings: lint.findings, valid: lint.valid, created: true };
  });
}

/** Every version of the tenant, newest first (any role, runtime keys too). @throws DomainError forbidden. */
export async function listPolicyVersions({ db, actor }: VerbContext): Promise<PolicySummary[]> {
  authorize(actor, "policies.read");
  const [rows, current] = await Promise.all([
    db
      .select()
      .from(policyVersions)
      .where(eq(policyVersions.tenantId, actor.tenantId))
      .orderBy(desc(policyVersions.version))
      .limit(1000),
    currentPolicyRow(db, actor.tenantId),
  ]);
  return rows.map((r) => summary(r, current?.version ?? null));
}

/** One version with its document and findings. @throws DomainError forbidden, not_found (404). */
export async function getPolicyVersion(
  { db, actor }: VerbContext,
  { version }: { version: number },
): Promise<PolicyView> {
  authorize(actor, "policies.read");
  const [rows, current] = await Promise.all([
    db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.tenantId, actor.tenantId), eq(policyVersions.version, version)))
      .limit(1),
    currentPolicyRow(db, actor.tenantId),
  ]);
  if (!rows[0]) throw notFound(`policy version ${version}`);
  return view(rows[0], current?.version ?? null);
}

/** The current version, or null when the tenant never activated one. @throws DomainError forbidden. */
export async function getCurrentPolicy({ db, actor }: VerbContext): Promise<PolicyView | null> {
  authorize(actor, "policies.read");
  const row = await currentPolicyRow(db, actor.tenantId);
  return row ? view(row, row.version) : null;
}

/**
 * Makes a stored version current (owners and admins), in one guarded statement beside its audit row; the current
 * policy version approvals bind to becomes `String(version)` in the same transaction, and approvals bound to another
 * version go stale. Activating the version that is already current changes nothing. Activating an older version again
 * (a rollback) is allowed.
 * @returns the activated version, the one it replaced (null when none was active), and the approvals made stale.
 * @throws DomainError forbidden (403), not_found (404), policy_invalid (422 with `details.findings`: a lint error).
 */
export async function activatePolicyVersion(
  { db, actor }: VerbContext,
  { version }: { version: number },
): Promise<{
  version: number;
  digest: string;
  previous: number | null;
  changed: boolean;
  invalidated: Array<{ id: string; task_id: string; side_effect: string }>;
}> {
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
      action: "policy.activate",
      target: `policy:${version}`,
      details: { version, digest: target.digest, previous: current?.version ?? null },
    });
    // The same seam approvals read (issue 8): the current version's label moves, and approvals bound to another one
    // go stale at once, in this transaction.
    const change = await switchPolicyVersion(tx, actor, String(version));
    return {
      version,
      digest: target.digest,
      previous: current?.version ?? null,
      changed: true,
      invalidated: change.invalidated,
    };
  });
}
