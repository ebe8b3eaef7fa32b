"use client";

/**
 * Settings → Retention (decision 0054): the two retention settings with a save button (owners and admins; a read-only
 * view for others), the deleted tasks with when, by whom, why and what went, and the retention runs that dropped old
 * events (audit entries `events.retention_applied`).
 */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Time } from "@/components/ui/time";
import { apiFetch } from "@/lib/client/api";
import type { DeletedTaskView, RetentionRunView, RetentionSettingsView } from "@/lib/domain/settings/retention";
import { ErrorLine, inputClass, primaryClass, Section, TableScroll } from "../_components/kit";

/** Words for the kinds of rows a deletion counts: [one, many]. */
const KINDS: Record<string, [string, string]> = {
  events: ["event", "events"],
  checkpoints: ["checkpoint", "checkpoints"],
  side_effects: ["side effect", "side effects"],
  side_effect_payloads: ["kept payload", "kept payloads"],
  unapplied_receipts: ["kept receipt", "kept receipts"],
  artifacts: ["artifact", "artifacts"],
  artifact_contents: ["stored artifact file", "stored artifact files"],
  approval_requests: ["approval request", "approval requests"],
  gate_asks: ["gate ask record", "gate ask records"],
  tool_definitions: ["accepted tool definition", "accepted tool definitions"],
  spend_records: ["spend record", "spend records"],
  webhook_messages: ["webhook message", "webhook messages"],
};

/** `12 events, 1 checkpoint` — the counts of a deletion that are not zero. */
function countsText(summary: Record<string, unknown> | null): string {
  const counts = (summary?.counts ?? {}) as Record<string, unknown>;
  const parts = Object.entries(counts)
    .filter(([k, v]) => typeof v === "number" && v > 0 && k in KINDS)
    .map(([k, v]) => `${String(v)} ${KINDS[k]![v === 1 ? 0 : 1]}`);
  return parts.length ? parts.join(", ") : "nothing but the task row";
}

/** `partitions dropped: 2, events dropped: 1200` — a retention run's details as plain words. */
function runText(details: Record<string, unknown>): string {
  const parts = Object.entries(details)
    .filter(([, v]) => typeof v === "number" || typeof v === "string" || Array.isArray(v))
    .map(([k, v]) => `${k.replace(/_/g, " ")}: ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  return parts.length ? parts.join(" · ") : "no details";
}

export function RetentionClient({
  initial,
  deletedTasks,
  retentionRuns,
  canManage,
}: {
  initial: RetentionSettingsView;
  deletedTasks: DeletedTaskView[];
  retentionRuns: RetentionRunView[];
  canManage: boolean;
}) {
  const router = useRouter();
  const [keepForever, setKeepForever] = useState(initial.event_retention_days === null);
  const [days, setDays] = useState(String(initial.event_retention_days ?? 365));
  const [exportFirst, setExportFirst] = useState(initial.export_before_delete);
  const [saved, setSaved] = useState<RetentionSettingsView>(initial);
  const save = useMutation({
    mutationFn: () =>
      apiFetch<RetentionSettingsView>("/api/v1/settings/retention", {
        method: "PUT",
        body: { event_retention_days: keepForever ? null : Number(days), export_before_delete: exportFirst },
      }),
    onSuccess: (s) => {
      setSaved(s);
      router.refresh();
    },
  });
  return (
    <div className="max-w-4xl space-y-4">
      <Section
        id="retention-settings"
        title="Retention"
        hint="How long this workspace keeps the tool traffic of its runs (calls and outcomes, credential uses, phases), and whether a task may be deleted only after an export. The facts the resume gate judges by, the events of tasks still running, checkpoints, receipts, approvals and the audit log are never dropped by retention."
      >
        <p className="text-sm" data-testid="retention-current">
          Events are kept{" "}
          <strong>{saved.event_retention_days === null ? "forever" : `for ${saved.event_retention_days} days`}</strong>.{" "}
          {saved.export_before_delete
            ? "A task may be deleted only after a workspace export taken after its last change."
            : "A task may be deleted without an export first."}
          {saved.updated_by ? (
            <span className="text-neutral-600">
              {" "}
              (changed by {saved.updated_by}
              {saved.updated_at ? (
                <>
                  {" "}
                  at <Time iso={saved.updated_at} />
                </>
              ) : null}
              )
            </span>
          ) : null}
        </p>
        {canManage ? (
          <form
            className="mt-3 flex flex-col gap-3"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate();
            }}
          >
            <fieldset className="flex flex-col gap-2 text-sm">
              <legend className="font-medium">Event history</legend>
              <label className="flex items-center gap-2">
                <input
                  type="radio"
                  name="keep"
                  checked={keepForever}
                  onChange={() => setKeepForever(true)}
                  data-testid="retention-keep-forever"
                />
                Keep every event forever
              </label>
              <label className="flex flex-wrap items-center gap-2">
                <input
                  type="radio"
                  name="keep"
                  checked={!keepForever}
                  onChange={() => setKeepForever(false)}
                  data-testid="retention-keep-days"
                />
                Drop events older than
                <input
                  className={`${inputClass} w-24`}
                  type="number"
                  min={1}
                  max={36500}
                  step={1}
                  value={days}
                  disabled={keepForever}
                  onChange={(e) => setDays(e.target.value)}
                  aria-label="Days to keep events"
                  data-testid="retention-days"
                />
                days
              </label>
            </fieldset>
            <label className="flex items-start gap-2 text-sm">
              <input
                type="checkbox"
                className="mt-1"
                checked={exportFirst}
                onChange={(e) => setExportFirst(e.target.checked)}
                data-testid="retention-export-before-delete"
              />
              <span>
                Require a workspace export before a task is deleted (one taken after the task&apos;s last change)
              </span>
            </label>
            <div>
              <button className={primaryClass} disabled={save.isPending} data-testid="retention-save">
                {save.isPending ? "Saving…" : "Save retention settings"}
              </button>
            </div>
            {save.isSuccess && !save.isPending ? (
              <p role="status" className="text-sm text-emerald-800" data-testid="retention-saved">
                Saved.
              </p>
            ) : null}
            <ErrorLine error={save.error} />
          </form>
        ) : (
          <p className="mt-2 text-sm text-neutral-600">Owners and admins change these settings.</p>
        )}
      </Section>

      <Section
        id="deleted-tasks"
        title="Deleted tasks"
        hint="Tasks an owner or admin deleted. Only this row and the task.deleted entry of the audit log remain; every request for the task's id answers 410 task_deleted."
      >
        {deletedTasks.length === 0 ? (
          <p className="text-sm text-neutral-600" data-testid="deleted-tasks-empty">
            No task has been deleted. Owners and admins delete a task from its page (Delete task…).
          </p>
        ) : (
          <TableScroll label="Deleted tasks">
            <table className="w-full min-w-[40rem] text-left text-sm" data-testid="deleted-tasks">
              <thead className="text-xs uppercase text-neutral-500">
                <tr>
                  <th className="py-1 pr-3">Task</th>
                  <th className="py-1 pr-3">Deleted</th>
                  <th className="py-1 pr-3">By</th>
                  <th className="py-1 pr-3">Reason</th>
                  <th className="py-1">What went</th>
                </tr>
              </thead>
              <tbody>
                {deletedTasks.map((t) => (
                  <tr key={t.task_id} className="border-t border-neutral-100 align-top" data-testid="deleted-task-row">
                    <td className="py-1.5 pr-3 font-mono text-xs break-all">{t.task_id}</td>
                    <td className="py-1.5 pr-3 whitespace-nowrap">
                      <Time iso={t.deleted_at} />
                    </td>
                    <td className="py-1.5 pr-3 break-all">{t.deleted_by ?? "—"}</td>
                    <td className="py-1.5 pr-3 break-words">{t.reason ?? "—"}</td>
                    <td className="py-1.5 text-xs text-neutral-700">{countsText(t.summary)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>

      <Section
        id="retention-runs"
        title="Retention runs"
        hint="Each time retention dropped a month of tool traffic, as the audit log recorded it. Servers check hourly; a month goes once every workspace with events in it keeps them for less time than its age."
      >
        {retentionRuns.length === 0 ? (
          <p className="text-sm text-neutral-600" data-testid="retention-runs-empty">
            No events have been dropped by retention.
          </p>
        ) : (
          <ul className="space-y-1 text-sm" data-testid="retention-runs">
            {retentionRuns.map((r) => (
              <li key={r.seq} className="border-t border-neutral-100 pt-1">
                <Time iso={r.at} /> · {r.actor} · {runText(r.details)}
              </li>
            ))}
          </ul>
        )}
      </Section>
    </div>
  );
}
