/**
 * Policy versions of a tenant (docs/concepts.md#policy-versions-and-lint): store a document as the next immutable
 * version with its lint findings, list and read them. A version with a lint error is kept (so people can see what was
 * wrong) but can never be activated. Each store is one transaction with its audit row on the tenant's hash chain.
 * Which version is current, and activating one, is ./current.ts.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { policyVersions } from "@/db/schema";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { canonicalDigest, sha256Hex } from "../crypto/canonical";
import { notFound } from "../errors";
import type { PolicyDocument, PolicyFinding } from "./document";
import { lintPolicyText } from "./lint";
import { currentPolicyRow, type PolicyRow } from "./current";
import type { VerbContext } from "../context";

/** A version in lists: `active` is true for the current one only. */
export type PolicySummary = {
  version: number;
  digest: string;
  valid: boolean;
  /** How many of its lint findings are warnings (a version that passes may still have some). */
  warnings: number;
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

function summary(row: PolicyRow, currentVersion: number | null): PolicySummary {
  return {
    version: row.version,
    digest: row.digest,
    valid: row.valid,
    warnings: (row.findings ?? []).filter((f) => f.severity === "warning").length,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    active: row.version === currentVersion,
    activated_at: row.activatedAt?.toISOString() ?? null,
  };
}

function view(row: PolicyRow, currentVersion: number | null): PolicyView {
  return {
    ...summary(row, currentVersion),
    document: row.document,
    source_text: row.sourceText,
    source_format: row.sourceFormat,
    findings: row.findings,
  };
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
      action: "policy.stored",
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
