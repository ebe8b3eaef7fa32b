/**
 * The attention queue (docs/concepts.md#attention-queue): what needs a person now, each item saying what is wrong and
 * where to act —
 * - side effects whose outcome is unknown (writes whose lease expired become unknown first);
 * - runs that have not ended (see {@link TERMINAL_PHASES}) whose principal was revoked: the resume gate stops them;
 * - stale approvals: an approval that no longer stands (policy, payload, inputs, agent changed; expired;
 *   approver or principal revoked) and must be re-approved before its write may run;
 * - side effects of runs that have not ended waiting for a fresh approval (`awaiting_approval`), linking to their
 *   approval request when one exists — or, when an approver rejected that request, saying so (the run must not make
 *   the write; someone ends the task or lets the runtime go on without it).
 * The approval states come from the one reading the gate uses (lib/domain/approvals/gate.ts `standingsOf`), so a write
 * never reads "awaiting approval" here while its approval is rejected or stale.
 * Runs the gate stops for other reasons are not listed; their task pages say why.
 */
import { sql } from "drizzle-orm";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { authorize } from "../authz";
import { expireLeasesNow } from "../side-effects/lifecycle/lease";
import { TERMINAL_PHASES } from "./phases";
import { liveRequests, standingsOf } from "../approvals/gate";
import { STALE_REASON_TEXT, type StaleReason } from "../approvals/freshness";
import type { SigningContext } from "../context";

type Base = {
  task_id: string;
  /** What is wrong, in plain words. */
  why: string;
  /** The dashboard page where a person acts on it. */
  href: string;
  /** Since when it waits (ISO 8601 UTC). */
  since: string;
};

export type AttentionItem =
  | (Base & {
      kind: "side_effect_unknown";
      side_effect: string;
      idempotency_key: string;
      reason: string | null;
      /** `tool_call`: a mutating tool call whose attempt ended without an outcome (no idempotency key was given). */
      origin: string;
      call_id: string | null;
    })
  | (Base & { kind: "principal_revoked"; principal: string; phase: string; reason: string; revoked_by: string })
  | (Base & {
      kind: "approval_stale";
      side_effect: string;
      approval_id: string;
      action: string;
      stale_reasons: string[];
    })
  | (Base & {
      kind: "approval_rejected";
      side_effect: string;
      approval_id: string;
      action: string;
      decided_by: string | null;
      reason: string | null;
    })
  | (Base & {
      kind: "side_effect_awaiting_approval";
      side_effect: string;
      idempotency_key: string;
      action: string | null;
      approval_id?: string;
    });

const taskHref = (taskId: string) => `/tasks/${encodeURIComponent(taskId)}`;
const effectHref = (taskId: string, name: string) =>
  `${taskHref(taskId)}?tab=side-effects&effect=${encodeURIComponent(name)}`;

/** Phase comparison for "the run has not ended" (phases are the runtime's words; compared lower-cased). */
const notEnded = (column: string) =>
  sql`lower(${sql.raw(column)}) not in (${sql.join(
    TERMINAL_PHASES.map((p) => sql`${p}`),
    sql`, `,
  )})`;

/**
 * Up to `limit` items: unknown side effects, then runs of revoked principals, then effects awaiting approval,
 * each kind oldest first. Every query leads with the tenant id. @throws DomainError forbidden
 */
export async function attentionQueue(
  { db, actor, signingKey }: SigningContext,
  { limit = 100 }: { limit?: number } = {},
): Promise<AttentionItem[]> {
  authorize(actor, "tasks.read");
  await expireLeasesNow(db, actor.tenantId);
  const [unknown, revoked, awaiting, queue] = await Promise.all([
    queryRows<{
      task_id: string;
      name: string;
      idempotency_key: string;
      status_reason: string | null;
      origin: string;
      call_id: string | null;
      tool: string | null;
      since: string;
    }>(
      db,
      sql`select task_id, name, idempotency_key, status_reason, origin, call_id, tool, ${isoUtc("updated_at")} as since
          from side_effects where tenant_id = ${actor.tenantId} and status = 'unknown'
          order by updated_at, task_id, name limit ${limit}`,
    ),
    queryRows<{
      task_id: string;
      principal: string;
      phase: string;
      latest_version: number;
      reason: string;
      revoked_by: string;
      since: string;
    }>(
      db,
      sql`select t.task_id, t.principal, t.phase, t.latest_version, r.reason, r.revoked_by, ${isoUtc("r.revoked_at")} as since
          from principal_revocations r
          join tasks t on t.tenant_id = r.tenant_id and lower(t.principal) = lower(r.principal)
          where r.tenant_id = ${actor.tenantId} and t.deleted_at is null and ${notEnded("t.phase")}
          order by r.revoked_at, t.task_id limit ${limit}`,
    ),
    queryRows<{ task_id: string; name: string; idempotency_key: string; action: string | null; since: string }>(
      db,
      sql`select s.task_id, s.name, s.idempotency_key, s.action, ${isoUtc("s.updated_at")} as since
          from side_effects s join tasks t on t.tenant_id = s.tenant_id and t.task_id = s.task_id
          where s.tenant_id = ${actor.tenantId} and s.status = 'awaiting_approval' and ${notEnded("t.phase")}
          order by s.updated_at, s.task_id, s.name limit ${limit}`,
    ),
    liveRequests(db, actor.tenantId, null, 1000).then((rows) => standingsOf(db, signingKey, actor.tenantId, rows)),
  ]);
  const approvalOf = new Map(queue.map((a) => [`${a.row.task_id}\u0000${a.row.side_effect}`, a]));
  const stale = queue.flatMap(({ row, standing }) =>
    standing.kind === "stale" ? [{ ...row, stale_reasons: standing.stale_reasons as string[] }] : [],
  );
  const items: AttentionItem[] = [
    ...unknown.map((r) => ({
      kind: "side_effect_unknown" as const,
      task_id: r.task_id,
      side_effect: r.name,
      idempotency_key: r.idempotency_key,
      reason: r.status_reason,
      origin: r.origin,
      call_id: r.call_id,
      why:
        r.origin === "tool_call"
          ? `Tool call ${r.call_id} (${r.tool ?? "tool"}) of task ${r.task_id} was a write whose attempt ended with no outcome recorded; no idempotency key was given. Reconcile it before the run resumes.`
          : `${r.name} of task ${r.task_id}: request sent, outcome not recorded. Reconcile it before the run resumes.`,
      href: effectHref(r.task_id, r.name),
      since: r.since,
    })),
    ...revoked.map((r) => ({
      kind: "principal_revoked" as const,
      task_id: r.task_id,
      principal: r.principal,
      phase: r.phase,
      reason: r.reason,
      revoked_by: r.revoked_by,
      why: `Task ${r.task_id} acts for ${r.principal}, whose authority was revoked by ${r.revoked_by} (“${r.reason}”). The run has not ended (${r.latest_version > 0 ? `phase ${r.phase}` : "no checkpoint yet"}); the resume gate stops it until the principal is restored or the run is ended.`,
      href: taskHref(r.task_id),
      since: r.since,
    })),
    ...stale.map((a) => ({
      kind: "approval_stale" as const,
      task_id: a.task_id,
      side_effect: a.side_effect,
      approval_id: a.id,
      action: a.action,
      stale_reasons: a.stale_reasons,
      why: `The approval of ${a.side_effect} (${a.action}) of task ${a.task_id} is stale: ${a.stale_reasons.map((r) => STALE_REASON_TEXT[r as StaleReason]).join("; ")}. It must be re-approved before the write may run.`,
      href: `/approvals/${encodeURIComponent(a.id)}`,
      since: a.requested_at,
    })),
    ...awaiting.flatMap((r): AttentionItem[] => {
      const live = approvalOf.get(`${r.task_id}\u0000${r.name}`);
      if (live?.standing.kind === "stale") return []; // listed above, as its approval
      if (live?.standing.kind === "rejected") {
        const { row, standing } = live;
        return [
          {
            kind: "approval_rejected",
            task_id: r.task_id,
            side_effect: r.name,
            approval_id: row.id,
            action: row.action,
            decided_by: standing.decided_by,
            reason: standing.reason,
            why: `${standing.decided_by ?? "An approver"} rejected ${r.name} (${row.action}) of task ${r.task_id}${standing.reason ? `: “${standing.reason}”` : ""}. The run must not make this write: end the task, or let the runtime go on without it.`,
            href: `/approvals/${encodeURIComponent(row.id)}`,
            since: row.decided_at ?? r.since,
          },
        ];
      }
      return [
        {
          kind: "side_effect_awaiting_approval",
          task_id: r.task_id,
          side_effect: r.name,
          idempotency_key: r.idempotency_key,
          action: r.action,
          why: `${r.name}${r.action ? ` (${r.action})` : ""} of task ${r.task_id} waits for a fresh approval before it may run.`,
          ...(live ? { approval_id: live.row.id } : {}),
          href: live ? `/approvals/${encodeURIComponent(live.row.id)}` : effectHref(r.task_id, r.name),
          since: r.since,
        },
      ];
    }),
  ];
  return items.slice(0, limit);
}
