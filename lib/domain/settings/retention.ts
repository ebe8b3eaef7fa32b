/**
 * Settings → Retention (decision 0054): the workspace's retention settings (`retention_settings`: how long events are
 * kept, whether a task may be deleted only after an export), the deleted tasks (their tombstones) and the retention
 * runs (audit entries `events.retention_applied`, written by the event retention job).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { queryRows } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import { appendAudit } from "../audit/append";
import { actorRef, authorize } from "../authz";
import type { VerbContext } from "../context";
import { validationError } from "../errors";

export const retentionSettingsBodySchema = z.strictObject({
  /** Days an event is kept after it was received; null keeps every event forever. */
  event_retention_days: z
    .number({ error: "event_retention_days must be a whole number of days (1–36500) or null" })
    .int("event_retention_days must be a whole number of days")
    .min(1, "event_retention_days is at least 1 day")
    .max(36_500, "event_retention_days is at most 36500 days (100 years); send null to keep events forever")
    .nullable(),
  /** A task may be deleted only when a workspace export was taken after its last change. */
  export_before_delete: z.boolean({ error: "export_before_delete must be true or false" }),
});

/** The workspace's retention settings (the defaults when none were saved). */
export type RetentionSettingsView = {
  event_retention_days: number | null;
  export_before_delete: boolean;
  updated_by: string | null;
  updated_at: string | null;
};

/**
 * The workspace's retention settings; without a saved row, the defaults (keep every event, no export required).
 * @throws DomainError forbidden (runtime keys).
 */
export async function getRetentionSettings({ db, actor }: VerbContext): Promise<RetentionSettingsView> {
  authorize(actor, "settings.read");
  const [row] = await queryRows<RetentionSettingsView>(
    db,
    sql`select event_retention_days, export_before_delete, updated_by, ${isoUtc("updated_at")} as updated_at
        from retention_settings where tenant_id = ${actor.tenantId}`,
  );
  return row ?? { event_retention_days: null, export_before_delete: false, updated_by: null, updated_at: null };
}

/**
 * Saves both retention settings (one upsert beside its audit entry `settings.retention_changed`, with the values before
 * and after).
 * @param body `{event_retention_days: 1–36500 | null, export_before_delete: boolean}`.
 * @throws DomainError forbidden (owners and admins only), validation_failed (nothing is written).
 */
export async function updateRetentionSettings(
  { db, actor }: VerbContext,
  { body }: { body: unknown },
): Promise<RetentionSettingsView> {
  authorize(actor, "retention.manage");
  const parsed = retentionSettingsBodySchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const v = parsed.data;
  const by = actorRef(actor).label;
  return db.transaction(async (tx) => {
    const [before] = await queryRows<{ event_retention_days: number | null; export_before_delete: boolean }>(
      tx,
      sql`select event_retention_days, export_before_delete from retention_settings
          where tenant_id = ${actor.tenantId} for update`,
    );
    const [row] = await queryRows<RetentionSettingsView>(
      tx,
      sql`insert into retention_settings (tenant_id, event_retention_days, export_before_delete, updated_by)
          values (${actor.tenantId}, ${v.event_retention_days}, ${v.export_before_delete}, ${by})
          on conflict (tenant_id) do update set event_retention_days = excluded.event_retention_days,
            export_before_delete = excluded.export_before_delete, updated_by = excluded.updated_by, updated_at = now()
          returning event_retention_days, export_before_delete, updated_by, ${isoUtc("updated_at")} as updated_at`,
    );
    await appendAudit(tx, actor, {
      action: "settings.retention_changed",
      target: `tenant:${actor.tenantId}`,
      details: {
        before: before ?? { event_retention_days: null, export_before_delete: false },
        after: { event_retention_days: v.event_retention_days, export_before_delete: v.export_before_delete },
      },
    });
    return row!;
  });
}

/** One deleted task as Settings → Retention lists it. */
export type DeletedTaskView = {
  task_id: string;
  deleted_at: string;
  deleted_by: string | null;
  reason: string | null;
  /** What went: counts per kind, the latest checkpoint's digest, the artifacts (lib/domain/tasks/delete.ts). */
  summary: Record<string, unknown> | null;
};

/** One retention run: an audit entry `events.retention_applied`. */
export type RetentionRunView = { seq: number; at: string; actor: string; details: Record<string, unknown> };

/** How many deleted tasks and retention runs Settings → Retention shows (newest first). */
const LISTED = 100;

/**
 * The workspace's deleted tasks (newest first, at most 100) and retention runs (audit entries
 * `events.retention_applied`, newest first, at most 100). Any signed-in role.
 * @throws DomainError forbidden (runtime keys).
 */
export async function listRetentionActivity({
  db,
  actor,
}: VerbContext): Promise<{ deleted_tasks: DeletedTaskView[]; retention_runs: RetentionRunView[] }> {
  authorize(actor, "settings.read");
  const [deleted, runs] = await Promise.all([
    queryRows<DeletedTaskView>(
      db,
      sql`select task_id, ${isoUtc("deleted_at")} as deleted_at, deleted_by, deletion_reason as reason,
            deletion_summary as summary
          from tasks where tenant_id = ${actor.tenantId} and deleted_at is not null
          order by deleted_at desc, task_id limit ${LISTED}`,
    ),
    queryRows<{ seq: string | number; at: string; actor: string; details: Record<string, unknown> }>(
      db,
      sql`select seq, ${isoUtc("at")} as at, actor_label as actor, details from audit_log
          where tenant_id = ${actor.tenantId} and action = 'events.retention_applied'
          order by seq desc limit ${LISTED}`,
    ),
  ]);
  return { deleted_tasks: deleted, retention_runs: runs.map((r) => ({ ...r, seq: Number(r.seq) })) };
}
