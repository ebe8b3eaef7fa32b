/**
 * The demo's policy documents (docs/concepts.md#policy-versions-and-lint): version 1, activated before the run starts,
 * and version 2, the one the approval story moves to while the sandbox is down (scripts/lib/demo-approval.ts activates
 * it with `POST /api/v1/policies/2/activate`). Both pass lint: the records service is named by the host the runtime
 * reaches it on, its credential goes only there over HTTPS, and every writing tool needs an approval except the one the
 * demo reconciles. Stored once: a data directory that already keeps policy versions is left as it is.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { UserActor } from "@/lib/domain/authz";
import { activatePolicyVersion } from "@/lib/domain/policies/current";
import { storePolicyVersion } from "@/lib/domain/policies/store";

/** The demo policy, version 1, for the records service reached at `recordsHost`. */
export function demoPolicyV1(recordsHost: string): string {
  return `# The demo's policy: the sandbox reaches only the records service, and the records credential goes only there.
network:
  access: restricted
  allowed_domains: [${recordsHost}]
credentials:
  - name: records-api
    type: environment_variable
    allowed_hosts: [${recordsHost}]
    scope: records:write
    ttl: 15m
tools:
  - name: update_record
    mutation: true
    requires_approval: false
    hosts: [${recordsHost}]
  - name: publish_report
    mutation: true
    requires_approval: true
    approval_ttl: 24h
    hosts: [${recordsHost}]
`;
}

/** Version 2: publishing approvals live for 8 hours instead of 24 (the change the story makes while the sandbox is down). */
export function demoPolicyV2(recordsHost: string): string {
  return demoPolicyV1(recordsHost).replace("approval_ttl: 24h", "approval_ttl: 8h");
}

/**
 * Stores versions 1 and 2 and activates version 1, as the demo's owner, unless the tenant already keeps policy versions.
 * @returns whether it stored them.
 */
export async function seedDemoPolicies(
  db: Db,
  tenantId: string,
  owner: { userId: string; email: string },
  recordsHost: string,
): Promise<boolean> {
  const [row] = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from policy_versions where tenant_id = ${tenantId}`,
  );
  if (Number(row?.n ?? 0) > 0) return false;
  const actor: UserActor = { kind: "user", tenantId, userId: owner.userId, email: owner.email, role: "owner" };
  const v1 = await storePolicyVersion({ db, actor }, { text: demoPolicyV1(recordsHost), format: "yaml" });
  const v2 = await storePolicyVersion({ db, actor }, { text: demoPolicyV2(recordsHost), format: "yaml" });
  if (!v1.valid || !v2.valid || v1.version !== 1 || v2.version !== 2) {
    throw new Error(
      `the demo policies did not store as valid versions 1 and 2: ${JSON.stringify([v1, v2]).slice(0, 400)}`,
    );
  }
  await activatePolicyVersion({ db, actor }, { version: 1 });
  return true;
}
