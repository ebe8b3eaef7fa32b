/**
 * `DELETE /api/v1/tasks/{task_id}`: an owner or admin deletes a whole task (decision 0054) — a customer's data, a test
 * run. In one transaction: the task's events, checkpoints, side effects (with their kept payloads and unapplied
 * receipts), artifacts and the bytes no other task of the workspace shares, approval requests, gate asks, tool
 * definitions, spend records and webhook messages go; the `tasks` row stays as a tombstone (`deleted_at`,
 * `deleted_by`, `deletion_reason`, `deletion_summary`); and one audit entry `task.deleted` names the task, who, why
 * and what went (counts per kind, the latest checkpoint's digest, the artifacts' sha256). The audit log itself is
 * never touched, so the chain still verifies. From then on every path answers 410 `task_deleted`
 * (lib/domain/tasks/deleted.ts; a trigger of migration 0035 refuses rows written under the id).
 *
 * When the workspace requires an export first (`retention_settings.export_before_delete`), a workspace export must
 * have been recorded (`export_bundles`, scope `workspace`) after the task's last change: the latest of the task row's
 * `updated_at`, its events' `received_at`, its checkpoints' and artifacts' `created_at`, its side effects'
 * `updated_at`, its approval requests' `requested_at` / `decided_at` and its unapplied receipts' `received_at`.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound, validationError } from "../errors";
import { typedText } from "../typed-text";
import { withRetry } from "../tx";
import { checkTaskId } from "./read";

export const deleteTaskBodySchema = z.strictObject({
  /** Why the task is deleted: required, kept on the tombstone and in the audit entry. */
  reason: typedText("reason", { min: 3, max: 1000, hint: "say why the task is deleted" }),
});

/** At most this many artifacts are named one by one in the audit entry (all are counted). */
export const MAX_LISTED_ARTIFACTS = 500;

/** What a deletion removed, per kind of row. */
export type DeletedCounts = {
  events: number;
  checkpoints: number;
  side_effects: number;
  side_effect_payloads: number;
  unapplied_receipts: number;
  artifacts: number;
  artifact_contents: number;
  artifact_bytes: number;
  approval_requests: number;
  gate_asks: number;
  tool_definitions: number;
  spend_records: number;
  webhook_messages: number;
};

/** What the tombstone and the audit entry say went. */
export type DeletionSummary = {
  counts: DeletedCounts;
  /** The latest checkpoint (its version and the sha256 of its canonical record), or null when there was none. */
  latest_checkpoint: { version: number; digest: string } | null;
  /** The artifacts (ref and sha256), at most {@link MAX_LISTED_ARTIFACTS}; `artifacts_truncated` when more went. */
  artifacts: Array<{ object_ref: string; sha256: string }>;
  artifacts_truncated: boolean;
  /** The task's last change (ISO 8601), as the export rule reads it. */
  last_change: string | null;
};

/** What deleting a task answers: the tombstone. */
export type DeleteTaskResult = {
  task_id: string;
  deleted_at: string;
  deleted_by: string;
  reason: string;
  summary: DeletionSummary;
};

/**
 * Deletes a task, keeping its tombstone and one audit entry.
 * @param body `{reason}` (3–1000 characters of plain text, no credentials).
 * @throws DomainError forbidden (a runtime key, or a role other than owner or admin); not_found (no such task in the
 *   tenant, also another tenant's); validation_failed (reason; nothing is written); conflict (already deleted: who and
 *   when — also the loser of two deletions at once); export_required (409: the workspace requires an export taken
 *   after the task's last change, and there is none; `details.last_change`, `details.last_export`).
 */
export async function deleteTask(
  { db, actor }: VerbContext,
  { taskId, body }: { taskId: string; body: unknown },
): Promise<DeleteTaskResult> {
  authorize(actor, "tasks.delete");
  checkTaskId(taskId);
  const parsed = deleteTaskBodySchema.safeParse(body ?? {});
  if (!parsed.success) throw validationError(parsed.error.issues);
  const reason = parsed.data.reason;
  const by = actorRef(actor).label;
  const tenantId = actor.tenantId;
  return withAuditSealed(db, tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        // The guard: the row locked, and taken only while it is not a tombstone yet. A second deletion waits here
        // and then finds the tombstone.
        const [task] = await queryRows<{ deleted_at: string | null; deleted_by: string | null }>(
          tx,
          sql`select ${isoUtc("deleted_at")} as deleted_at, deleted_by from tasks
              where tenant_id = ${tenantId} and task_id = ${taskId} for update`,
        );
        if (!task) throw notFound(`Task ${taskId}`);
        if (task.deleted_at) {
          throw new DomainError(
            "conflict",
            `Task ${taskId} was already deleted by ${task.deleted_by ?? "someone"} at ${task.deleted_at}.`,
            { deleted_at: task.deleted_at, deleted_by: task.deleted_by },
          );
        }
        const lastChange = await taskLastChange(tx, tenantId, taskId);
        await requireExportIfAsked(tx, tenantId, taskId, lastChange);
        const summary = await removeTaskRows(tx, tenantId, taskId, lastChange);
        const [row] = await queryRows<{ deleted_at: string }>(
          tx,
          sql`update tasks set deleted_at = now(), deleted_by = ${by}, deletion_reason = ${reason},
                deletion_summary = ${JSON.stringify(summary)}::jsonb, updated_at = now()
              where tenant_id = ${tenantId} and task_id = ${taskId} and deleted_at is null
              returning ${isoUtc("deleted_at")} as deleted_at`,
        );
        if (!row) throw new DomainError("conflict", `Task ${taskId} was deleted by someone else just now.`);
        await appendAuditPending(tx, actor, {
          action: "task.deleted",
          target: `task:${taskId}`,
          details: { reason, ...summary },
        });
        return { task_id: taskId, deleted_at: row.deleted_at, deleted_by: by, reason, summary };
      }),
    ),
  );
}

/** The latest time anything of the task changed (see the module comment), ISO 8601, or null. */
async function taskLastChange(tx: Db, tenantId: string, taskId: string): Promise<string | null> {
  const where = sql`tenant_id = ${tenantId} and task_id = ${taskId}`;
  const [row] = await queryRows<{ at: string | null }>(
    tx,
    sql`select ${isoUtc(
      sql`greatest(
        (select updated_at from tasks where ${where}),
        (select max(received_at) from events where ${where}),
        (select max(created_at) from task_checkpoints where ${where}),
        (select max(updated_at) from side_effects where ${where}),
        (select max(greatest(requested_at, decided_at)) from approval_requests where ${where}),
        (select max(created_at) from artifacts where ${where}),
        (select max(received_at) from unapplied_receipts where ${where}))`,
    )} as at`,
  );
  return row?.at ?? null;
}

/**
 * Refuses when the workspace requires an export before a deletion and none was recorded after `lastChange`.
 * @throws DomainError export_required.
 */
async function requireExportIfAsked(tx: Db, tenantId: string, taskId: string, lastChange: string | null) {
  const [row] = await queryRows<{ required: boolean | null; last_export: string | null }>(
    tx,
    sql`select (select export_before_delete from retention_settings where tenant_id = ${tenantId}) as required,
          (select ${isoUtc("max(created_at)")} from export_bundles where tenant_id = ${tenantId} and scope = 'workspace') as last_export`,
  );
  if (!row?.required) return;
  if (row.last_export && (!lastChange || Date.parse(row.last_export) > Date.parse(lastChange))) return;
  throw new DomainError(
    "export_required",
    `This workspace requires an export before a task is deleted, and ${
      row.last_export
        ? `the last one (${row.last_export}) is older than task ${taskId}'s last change`
        : "none was taken"
    }. Export the workspace (Settings → Export), then delete the task.`,
    { last_change: lastChange, last_export: row.last_export },
  );
}

/** Deletes every row of the task except its `tasks` row, in one statement; returns what went. */
async function removeTaskRows(
  tx: Db,
  tenantId: string,
  taskId: string,
  lastChange: string | null,
): Promise<DeletionSummary> {
  const where = sql`tenant_id = ${tenantId} and task_id = ${taskId}`;
  const [latest] = await queryRows<{ version: number; digest: string }>(
    tx,
    sql`select version, digest from task_checkpoints where ${where} order by version desc limit 1`,
  );
  const listed = await queryRows<{ object_ref: string; sha256: string }>(
    tx,
    sql`select object_ref, sha256 from artifacts where ${where} order by object_ref, sha256 limit ${MAX_LISTED_ARTIFACTS + 1}`,
  );
  // Bytes are content-addressed per workspace: those another task also lists stay.
  const [c] = await queryRows<Record<keyof DeletedCounts, string | number>>(
    tx,
    sql`with
      ev as (delete from events where ${where} returning 1),
      cp as (delete from task_checkpoints where ${where} returning 1),
      se as (delete from side_effects where ${where} returning 1),
      sp as (delete from side_effect_payloads where ${where} returning 1),
      ur as (delete from unapplied_receipts where ${where} returning 1),
      ar as (delete from artifacts where ${where} returning sha256),
      ac as (delete from artifact_contents c where c.tenant_id = ${tenantId}
               and c.sha256 in (select sha256 from ar)
               and not exists (select 1 from artifacts o where o.tenant_id = ${tenantId} and o.sha256 = c.sha256
                               and o.task_id <> ${taskId})
             returning c.size_bytes),
      ap as (delete from approval_requests where ${where} returning 1),
      ga as (delete from gate_asks where ${where} returning 1),
      td as (delete from task_tool_definitions where ${where} returning 1),
      sr as (delete from spend_records where ${where} returning 1),
      wm as (delete from webhook_messages where ${where} returning 1)
    select (select count(*) from ev) as events, (select count(*) from cp) as checkpoints,
      (select count(*) from se) as side_effects, (select count(*) from sp) as side_effect_payloads,
      (select count(*) from ur) as unapplied_receipts, (select count(*) from ar) as artifacts,
      (select count(*) from ac) as artifact_contents, (select coalesce(sum(size_bytes), 0) from ac) as artifact_bytes,
      (select count(*) from ap) as approval_requests, (select count(*) from ga) as gate_asks,
      (select count(*) from td) as tool_definitions, (select count(*) from sr) as spend_records,
      (select count(*) from wm) as webhook_messages`,
  );
  const counts = Object.fromEntries(Object.entries(c ?? {}).map(([k, v]) => [k, Number(v)])) as DeletedCounts;
  return {
    counts,
    latest_checkpoint: latest ? { version: latest.version, digest: latest.digest } : null,
    artifacts: listed.slice(0, MAX_LISTED_ARTIFACTS),
    artifacts_truncated: listed.length > MAX_LISTED_ARTIFACTS,
    last_change: lastChange,
  };
}
