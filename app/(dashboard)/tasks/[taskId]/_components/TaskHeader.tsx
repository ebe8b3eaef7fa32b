"use client";

import type { ReactNode } from "react";
import type { GateVerdict, TaskView } from "@/lib/contract/api";
import { CopyButton } from "@/components/ui/CopyButton";
import { Id } from "@/components/ui/Id";
import { SignatureBadge, VerdictBadge } from "@/components/ui/status";
import { Time } from "@/components/ui/time";
import { phaseLabel } from "@/lib/domain/tasks/phases";
import { FenceButton } from "./FenceButton";
import { TerminateButton } from "./TerminateButton";
import { DeleteTaskButton } from "./DeleteTaskButton";
import { policyVersionName } from "@/lib/domain/policies/version-name";

/** A button in the header for the one next action. */
export type PrimaryAction = { label: string; onClick: () => void };

/**
 * Task id, principal, policy version, phase, checkpoint + signature, how the run ended, and the one next action when it
 * does not depend on the gate. Rendered once, with the page's first HTML: what reads the gate's verdict (the verdict
 * badge, an approval the gate waits for) is `gated`, which the page streams in a Suspense boundary of its own
 * (`GatedHeaderParts`), so the header itself never has a streamed copy beside a placeholder.
 */
export function TaskHeader({
  task,
  gated,
  primaryAction,
  live,
  finished,
  unknownEffects,
  refreshing,
  canFence = false,
  canTerminate = false,
  canDelete = false,
  deleteNeedsExport = false,
}: {
  task: TaskView;
  /** The parts that read the gate's verdict, placed after the run's status and before `primaryAction`. */
  gated: ReactNode;
  /** The next action that does not depend on the gate (reconcile an unknown write); when set, `gated` shows none. */
  primaryAction: PrimaryAction | null;
  live: boolean;
  /** The run reached a terminal phase: show that instead of a verdict nobody will act on. */
  finished: boolean;
  /** Names of side effects whose outcome is unknown: an ended run with one did not end quietly. */
  unknownEffects: readonly string[];
  refreshing: boolean;
  /** The person may fence the task to a new attempt (owners, responders, admins). */
  canFence?: boolean;
  /** The person may end the task for good (owners, responders, admins). */
  canTerminate?: boolean;
  /** The person may delete the task (owners, admins; decision 0054). */
  canDelete?: boolean;
  /** The workspace requires an export before a task is deleted (Settings → Retention). */
  deleteNeedsExport?: boolean;
}) {
  return (
    <header className="rounded-lg border border-neutral-200 bg-white p-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 max-w-full">
          <p className="text-xs uppercase tracking-wide text-neutral-500">Task</p>
          <div className="flex flex-wrap items-center gap-2">
            <h1
              className="min-w-0 max-w-full truncate font-mono text-lg font-semibold"
              title={task.task_id}
              data-testid="task-id"
            >
              {task.task_id}
            </h1>
            <CopyButton value={task.task_id} label="Copy id" />
            {live ? (
              <span
                className="inline-flex items-center gap-1 rounded-full bg-sky-50 px-2 py-0.5 text-xs text-sky-800"
                title="Refreshing every few seconds"
              >
                <span aria-hidden="true" className={refreshing ? "animate-spin" : ""}>
                  ↻
                </span>{" "}
                live
              </span>
            ) : null}
          </div>
        </div>
        <div className="flex flex-wrap items-center gap-3">
          {finished && unknownEffects.length > 0 ? (
            <span
              className="inline-flex items-center gap-1.5 rounded-md border border-amber-300 bg-amber-50 px-2.5 py-1 text-sm font-semibold text-amber-900"
              data-testid="run-finished"
              data-unresolved="write_unknown"
            >
              <span aria-hidden="true">?</span> Run ended · {task.phase} · {unknownEffects.length}{" "}
              {unknownEffects.length === 1 ? "write" : "writes"} unknown
            </span>
          ) : finished ? (
            <span
              className="inline-flex items-center gap-1.5 rounded-md border border-neutral-300 bg-neutral-50 px-2.5 py-1 text-sm font-semibold text-neutral-800"
              data-testid="run-finished"
            >
              <span aria-hidden="true">■</span> Run ended · {task.phase}
            </span>
          ) : null}
          {gated}
          {primaryAction ? <PrimaryActionButton action={primaryAction} /> : null}
          {canTerminate && !task.terminated ? <TerminateButton taskId={task.task_id} /> : null}
          {canDelete ? <DeleteTaskButton taskId={task.task_id} exportRequired={deleteNeedsExport} /> : null}
        </div>
      </div>
      {task.terminated ? (
        <p
          className="mt-3 rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="task-terminated"
        >
          Ended by {task.terminated.by} at <Time iso={task.terminated.at} />: {task.terminated.reason}. The runtime may
          not checkpoint or write again.
        </p>
      ) : null}
      <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-2 text-sm sm:grid-cols-3 lg:grid-cols-5">
        <Field label="Principal">{task.principal ? <Id value={task.principal} className="text-xs" /> : "—"}</Field>
        <Field label="Policy version">
          <span className="font-mono text-xs" data-testid="task-policy-version">
            {policyVersionName(task.policy_version)}
          </span>
        </Field>
        <Field label="Phase">
          <span data-testid="task-phase">{phaseLabel(task.phase, task.version)}</span>
        </Field>
        <Field label="Checkpoint">
          <span className="flex flex-wrap items-center gap-2">
            {task.version ? `v${task.version}` : "none"}
            <SignatureBadge valid={task.signature_valid} check={task.signature_check} />
          </span>
        </Field>
        <Field label="Sandbox attempt">
          <span className="flex flex-wrap items-center gap-2">
            {task.current_attempt || "—"}
            {canFence && !task.terminated ? (
              <FenceButton taskId={task.task_id} currentAttempt={task.current_attempt} />
            ) : null}
          </span>
        </Field>
      </dl>
      {task.clock_skew ? (
        <p
          className="mt-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950"
          data-testid="clock-skew"
        >
          <span aria-hidden="true">⚠ </span>
          The runtime&apos;s clock differs from the server&apos;s by about {formatSkew(task.clock_skew.ms)} (
          {task.clock_skew.ms > 0 ? "ahead" : "behind"}). {task.clock_skew.note}
        </p>
      ) : null}
    </header>
  );
}

/**
 * The header's parts that read the gate's verdict: the verdict badge (unless the run ended, `showVerdict` false) and
 * the next action the gate asks for (an approval to decide). With `gate` null (still being asked) it is the
 * placeholder the page shows until the verdict streams in: a badge of the same height, and no action yet.
 */
export function GatedHeaderParts({
  gate,
  showVerdict,
  action,
}: {
  gate: GateVerdict | null;
  showVerdict: boolean;
  action: PrimaryAction | null;
}) {
  return (
    <>
      {!showVerdict ? null : gate ? (
        <VerdictBadge verdict={gate.verdict} reasons={gate.reasons.length} />
      ) : (
        <span
          className="inline-flex items-center gap-1.5 rounded-md border border-neutral-300 bg-neutral-50 px-2.5 py-1 text-sm text-neutral-700"
          data-testid="gate-verdict-pending"
          aria-busy="true"
        >
          <span aria-hidden="true">…</span> Asking the resume gate
        </span>
      )}
      {action ? <PrimaryActionButton action={action} /> : null}
    </>
  );
}

/** The one next action, as the header's one filled button. */
function PrimaryActionButton({ action }: { action: PrimaryAction }) {
  return (
    <button
      type="button"
      onClick={action.onClick}
      className="rounded-md bg-amber-700 px-3 py-1.5 text-sm font-semibold text-white shadow-sm hover:bg-amber-800"
      data-testid="primary-action"
    >
      {action.label}
    </button>
  );
}

/** A clock difference in words: "2 min 5 s", "45 s". */
function formatSkew(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m} min` : `${Math.round(m / 60)} h`;
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-neutral-500">{label}</dt>
      {/* A long value (a phase, a policy version) wraps inside its column instead of running over the next one. */}
      <dd className="mt-0.5 [overflow-wrap:anywhere]">{children}</dd>
    </div>
  );
}
