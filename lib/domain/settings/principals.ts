/**
 * Principal revocation: withdrawing the authority a task acts under. The resume gate stops every task of a
 * revoked principal (`principal_revoked`, docs/concepts.md#principals).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import { DomainError, notFound, validationError } from "../errors";
import { redactString } from "../events/redact";
import { normalizePrincipal } from "../tasks/principal";
import { typedText } from "../typed-text";
import type { VerbContext } from "../context";

export type PrincipalView = {
  principal: string;
  task_count: number;
  revoked: { reason: string; revoked_by: string; revoked_at: string } | null;
};

/** Principals seen on the tenant's tasks or revoked, with their task counts. @throws DomainError forbidden */
export async function listPrincipals({ db, actor }: VerbContext): Promise<PrincipalView[]> {
  authorize(actor, "settings.read");
  const rows = await queryRows<{
    principal: string;
    task_count: string | number;
    reason: string | null;
    revoked_by: string | null;
    revoked_at: string | null;
  }>(
    db,
    sql`with p as (
          select principal, count(*) as task_count from tasks where tenant_id = ${actor.tenantId} and principal is not null group by principal
        )
        select coalesce(p.principal, r.principal) as principal, coalesce(p.task_count, 0) as task_count,
               r.reason, r.revoked_by, ${isoUtc("r.revoked_at")} as revoked_at
        from p full outer join (select * from principal_revocations where tenant_id = ${actor.tenantId}) r
          on lower(r.principal) = lower(p.principal)
        order by 1 limit 500`,
  );
  return rows.map((r) => ({
    principal: r.principal,
    task_count: Number(r.task_count),
    revoked: r.revoked_at ? { reason: r.reason ?? "", revoked_by: r.revoked_by ?? "", revoked_at: r.revoked_at } : null,
  }));
}

const principalField = typedText("principal", {
  max: 500,
  hint: "the principal as tasks name it, e.g. tenant/acme:user/42",
});

export const revokePrincipalBodySchema = z.strictObject({
  principal: principalField,
  reason: typedText("reason", { min: 3, max: 1000, hint: "say why the authority is withdrawn" }),
});

export const restorePrincipalBodySchema = z.strictObject({ principal: principalField });

/**
 * Revokes a principal. The body is `{principal, reason}` (reason 3–1000 characters), nothing else; both are typed
 * text (no control or bidi override characters).
 * @throws DomainError forbidden, validation_failed (422, naming the field and the rule), conflict (already revoked)
 */
export async function revokePrincipal({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<void> {
  authorize(actor, "principals.manage");
  const parsed = revokePrincipalBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  // Compared as people read it (NFC), as tasks store it.
  const principal = normalizePrincipal(parsed.data.principal);
  // Free text typed by a person: a pasted token must not reach the database.
  const reason = redactString(parsed.data.reason).value;
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`insert into principal_revocations (tenant_id, principal, reason, revoked_by)
          select ${actor.tenantId}::uuid, ${principal}, ${reason}, ${actorRef(actor).label}
          where not exists (select 1 from principal_revocations r
                            where r.tenant_id = ${actor.tenantId} and lower(r.principal) = lower(${principal}))
          on conflict do nothing returning principal`,
    );
    if (!rows.length) throw new DomainError("conflict", `${principal} is already revoked.`);
    await appendAudit(tx, actor, {
      action: "principal.revoked",
      target: `principal:${principal}`,
      details: { reason },
    });
  });
}

/** Restores a revoked principal; the body is `{principal}`. @throws DomainError forbidden, validation_failed, not_found */
export async function restorePrincipal({ db, actor }: VerbContext, { body }: { body: unknown }): Promise<void> {
  authorize(actor, "principals.manage");
  const parsed = restorePrincipalBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const principal = normalizePrincipal(parsed.data.principal);
  await db.transaction(async (tx) => {
    const rows = await queryRows(
      tx,
      sql`delete from principal_revocations where tenant_id = ${actor.tenantId} and lower(principal) = lower(${principal}) returning principal`,
    );
    if (!rows.length) throw notFound(`Revocation of ${principal}`);
    await appendAudit(tx, actor, { action: "principal.restored", target: `principal:${principal}` });
  });
}
