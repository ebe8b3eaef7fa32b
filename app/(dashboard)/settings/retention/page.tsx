import type { Metadata } from "next";
import { can } from "@/lib/domain/authz";
import { getRetentionSettings, listRetentionActivity } from "@/lib/domain/settings/retention";
import { requirePageContext } from "@/lib/server/page-actor";
import { RetentionClient } from "./RetentionClient";

export const metadata: Metadata = { title: "Retention · Settings" };

/**
 * Settings → Retention (decision 0054): how long events are kept and whether a task may be deleted only after an
 * export (owners and admins change them; others read them), the deleted tasks (tombstones) and the retention runs.
 */
export default async function RetentionPage() {
  const ctx = await requirePageContext();
  const [settings, activity] = await Promise.all([getRetentionSettings(ctx), listRetentionActivity(ctx)]);
  return (
    <RetentionClient
      initial={settings}
      deletedTasks={activity.deleted_tasks}
      retentionRuns={activity.retention_runs}
      canManage={can(ctx.actor, "retention.manage")}
    />
  );
}
