/**
 * Seeding approvals for tests and the accessibility audit: a request made as the runtime, approved by the
 * tenant's approver, then made stale by the owner activating another policy version — the demo's story in calls to the
 * same domain verbs the API uses.
 */
import type { Db } from "@/db";
import type { ApiKeyActor, UserActor } from "@/lib/domain/authz";
import { decideApproval } from "@/lib/domain/approvals/decide";
import { approvalContext } from "@/lib/domain/approvals/read";
import { requestApproval } from "@/lib/domain/approvals/requests";
import { canonicalDigest } from "@/lib/domain/crypto/canonical";
import { signingKeyFromString } from "@/lib/domain/crypto/signing";
import { activatePolicyVersion } from "@/lib/domain/policies/current";
import { storePolicyVersion } from "@/lib/domain/policies/store";
import type { Role } from "@/db/schema/enums";
import { rid } from "./factories";
import { openPolicy } from "./policy-document";
import type { TestTenant } from "./tenants";

/** The signed-in person of `role` in a test tenant, as a domain actor. */
export function userActor(t: TestTenant, role: Role): UserActor {
  const u = t.users[role];
  if (!u) throw new Error(`tenant ${t.slug} has no ${role}`);
  return { kind: "user", tenantId: t.tenantId, userId: u.userId, email: u.email, role };
}

/** The payload digest as runtimes compute it: sha256 of RFC 8785 JSON of `{tool, arguments}`. */
export function payloadDigestOf(tool: string, args: unknown): string {
  return canonicalDigest({ tool, arguments: args });
}

/**
 * A `publish_report` approval of `taskId` (which must exist), approved by the approver; with `stale`, the owner then
 * activates policy version 2 ({@link activateOpenPolicy}) so that it is stale (policy_changed).
 * @returns the approval's id.
 */
export async function seedApproval(
  db: Db,
  t: TestTenant,
  taskId: string,
  signingKeyPem: string,
  opts: { stale?: boolean; approve?: boolean } = {},
): Promise<string> {
  const runtime: ApiKeyActor = {
    kind: "api_key",
    tenantId: t.tenantId,
    keyId: "00000000-0000-4000-8000-000000000000",
    keyName: "runtime",
  };
  const args = { title: "Q3 custody report", recipients: ["board@example.com"] };
  const ctx = await approvalContext(db, t.tenantId, taskId);
  const { id } = await db.transaction((tx) =>
    requestApproval(tx, {
      tenantId: t.tenantId,
      taskId,
      sideEffect: "publish_report",
      idempotencyKey: `publish-${rid()}`,
      principal: ctx.principal,
      action: "publish_report",
      tool: "publish_report",
      payload: args,
      payloadDigest: payloadDigestOf("publish_report", args),
      inputDigest: ctx.input_digest,
      policyVersion: ctx.policy_version,
      agent: "reporter",
      agentVersion: "1.0.0",
      requestedBy: runtime,
    }),
  );
  if (opts.approve ?? true)
    await decideApproval(
      { db, actor: userActor(t, "approver"), signingKey: signingKeyFromString(signingKeyPem) },
      { approvalId: id, body: { decision: "approve", reason: "Report checked" } },
    );
  if (opts.stale ?? true) await activateOpenPolicy(db, t, 2);
  return id;
}

/**
 * Makes policy version `version` current in a tenant that keeps no other documents, as its owner: stores
 * {@link openPolicy} 1 … `version` (a document already stored keeps its version) and activates the last.
 */
async function activateOpenPolicy(db: Db, t: TestTenant, version: number): Promise<void> {
  const ctx = { db, actor: userActor(t, "owner") };
  for (let n = 1; n <= version; n++) {
    const stored = await storePolicyVersion(ctx, { text: JSON.stringify(openPolicy(n)), format: "json" });
    if (stored.version !== n) throw new Error(`open policy ${n} stored as version ${stored.version}`);
  }
  await activatePolicyVersion(ctx, { version });
}

/**
 * {@link seedApproval} made stale by a policy change. `signingKeyPem`: the server's signing key (PEM), which seals the
 * approver's decision as the server would (decision 0035).
 */
export function seedStaleApproval(db: Db, t: TestTenant, taskId: string, signingKeyPem: string): Promise<string> {
  return seedApproval(db, t, taskId, signingKeyPem, { stale: true });
}
