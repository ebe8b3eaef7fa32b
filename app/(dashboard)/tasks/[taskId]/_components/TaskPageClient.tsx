"use client";

/**
 * The task page's client part: live data through react-query, selection and tab in the URL, and the
 * header, gate panel, timeline and tabs below it. The gate's verdict arrives as a promise from the server and is
 * shown, in the header's verdict badge and the gate panel (Suspense boundaries of their own), as soon as it resolves.
 * The header itself is outside any boundary: a streamed boundary's content sits in the DOM as a hidden copy beside its
 * placeholder until React reveals it (up to ~300 ms), so a streamed header meant two task ids on the page.
 */
import dynamic from "next/dynamic";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { Suspense, use, useCallback, useMemo, useState, type ReactNode } from "react";
import type { Role } from "@/db/schema/enums";
import type { GateVerdict, TaskView } from "@/lib/contract/api";
import type { PageOverview } from "@/lib/contract/overview-pack";
import { useArtifacts, useGate, useGateIfKnown, useTask } from "@/lib/client/queries";
import { useTimelineData } from "@/lib/client/timeline-data";
import { TaskTimeline } from "@/components/timeline/TaskTimeline";
import { ToolCallTable } from "@/components/timeline/ToolCallTable";
import { ExportPanel } from "./ExportPanel";
import { GatedHeaderParts, TaskHeader } from "./TaskHeader";
import { GatePanel } from "./GatePanel";
import { SideEffectsTab } from "./SideEffectsTab";

// Loaded when first shown (not part of the page's first-load JavaScript): the tabs after the first and the dialog.
const ArtifactsTab = dynamic(() => import("./ArtifactsTab").then((m) => m.ArtifactsTab));
const CheckpointsTab = dynamic(() => import("./CheckpointsTab").then((m) => m.CheckpointsTab));
const ReconcileDialog = dynamic(() => import("./ReconcileDialog").then((m) => m.ReconcileDialog));
const EgressTab = dynamic(() => import("./EgressTab").then((m) => m.EgressTab));
const ApprovalsTab = dynamic(() => import("./ApprovalsTab").then((m) => m.ApprovalsTab));
import { isTerminalPhase } from "@/lib/domain/tasks/phases";

const LIVE_REFRESH_MS = 3000;

const TABS = [
  { id: "side-effects", label: "Side effects" },
  { id: "approvals", label: "Approvals" },
  { id: "artifacts", label: "Artifacts" },
  { id: "checkpoints", label: "Checkpoints" },
  { id: "egress", label: "Egress and vault" },
] as const;
type TabId = (typeof TABS)[number]["id"];

export type TaskPageClientProps = {
  taskId: string;
  initialTask: TaskView;
  /** The timeline overview as the server read it (bins packed). */
  initialTimeline: PageOverview;
  /** The gate's verdict, asked on the server while the page streams. */
  gate: Promise<GateVerdict>;
  canReconcile: boolean;
  /** The person may fence the task to a new attempt (decision 0032). */
  canFence?: boolean;
  /** The person may end the task for good (decision 0043). */
  canTerminate?: boolean;
  /** The person may delete the task (decision 0054). */
  canDelete?: boolean;
  /** The workspace requires an export before a task is deleted. */
  deleteNeedsExport?: boolean;
  /**
   * The person may approve or re-approve (docs/screens.md#task-page): a stale or pending approval becomes the page's
   * primary action.
   */
  canDecideApprovals?: boolean;
  role: Role;
};

/**
 * Whether the page keeps refreshing the task and the gate: while the run has not ended, and after it ended while
 * something still waits on a person (a write whose outcome is unknown, a record that does not verify).
 */
function followsLive(task: TaskView): boolean {
  if (!isTerminalPhase(task.phase)) return true;
  return task.signature_valid === false || Object.values(task.side_effects).some((e) => e.status === "unknown");
}

/**
 * The gate's verdict once the server's answer has streamed in (suspends until then), kept fresh by react-query every
 * `refresh` ms; renders `children` with it. Several of these share one query.
 */
function WithGate({
  taskId,
  initial,
  refresh,
  children,
}: {
  taskId: string;
  initial: Promise<GateVerdict>;
  refresh: number | false;
  children: (gate: GateVerdict, q: { error: Error | null; refetch: () => void }) => ReactNode;
}) {
  const first = use(initial);
  const q = useGate(taskId, first, refresh);
  return children(q.data ?? first, { error: q.error, refetch: () => void q.refetch() });
}

/** Client part of /tasks/[taskId]; the gate's verdict fills its places when it has streamed in. */
export function TaskPageClient({
  taskId,
  initialTask,
  initialTimeline,
  gate,
  canReconcile,
  canFence = false,
  canTerminate = false,
  canDelete = false,
  deleteNeedsExport = false,
  canDecideApprovals = false,
  role,
}: TaskPageClientProps) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const [reconciling, setReconciling] = useState<string | null>(null);

  const taskQ = useTask(taskId, initialTask, (t) => (followsLive(t ?? initialTask) ? LIVE_REFRESH_MS : false));
  const task = taskQ.data ?? initialTask;
  const isLive = !isTerminalPhase(task.phase);
  const refresh = followsLive(task) ? LIVE_REFRESH_MS : false;

  const setParam = useCallback(
    (updates: Record<string, string | null>) => {
      const next = new URLSearchParams(params.toString());
      for (const [k, v] of Object.entries(updates)) {
        if (v === null) next.delete(k);
        else next.set(k, v);
      }
      const qs = next.toString();
      // The browser's own history (Next keeps useSearchParams in step): selecting an event or a tab changes only
      // the URL, without asking the server to render the page again (on a long run that meant the overview again).
      window.history.replaceState(null, "", qs ? `${pathname}?${qs}` : pathname);
    },
    [params, pathname],
  );

  const selectedId = params.get("event");
  const tabParam = params.get("tab");
  const tab: TabId = TABS.some((t) => t.id === tabParam) ? (tabParam as TabId) : "side-effects";
  const focusEffect = params.get("effect");

  const unknownEffects = useMemo(
    () =>
      Object.entries(task.side_effects)
        .filter(([, e]) => e.status === "unknown")
        .map(([name]) => name),
    [task.side_effects],
  );
  /** The next action that does not depend on the gate: reconcile an unknown write. */
  const reconcileAction =
    canReconcile && unknownEffects[0]
      ? { label: `Reconcile ${unknownEffects[0]}`, onClick: () => setReconciling(unknownEffects[0]!) }
      : null;
  /** Else the approval the gate waits for (once it answered); the gate links approval reasons to their approval page. */
  const approvalAction = (g: GateVerdict) => {
    if (reconcileAction || !canDecideApprovals) return null;
    const approvalReason = g.reasons.find(
      (r) => (r.code === "approval_stale" || r.code === "approval_missing") && r.target.startsWith("/approvals/"),
    );
    return approvalReason
      ? {
          label: approvalReason.code === "approval_stale" ? "Re-approve" : "Review approval",
          onClick: () => router.push(approvalReason.target),
        }
      : null;
  };

  return (
    <div className="space-y-4">
      {/* The header is rendered once, in the first HTML; only its parts that read the verdict stream in. */}
      <TaskHeader
        task={task}
        gated={
          <Suspense fallback={<GatedHeaderParts gate={null} showVerdict={isLive} action={null} />}>
            <WithGate taskId={taskId} initial={gate} refresh={refresh}>
              {(g) => <GatedHeaderParts gate={g} showVerdict={isLive} action={approvalAction(g)} />}
            </WithGate>
          </Suspense>
        }
        primaryAction={reconcileAction}
        live={isLive}
        finished={!isLive}
        unknownEffects={unknownEffects}
        refreshing={taskQ.isFetching}
        canFence={canFence}
        canTerminate={canTerminate}
        canDelete={canDelete}
        deleteNeedsExport={deleteNeedsExport}
      />
      {task.version > 0 ? (
        <ArtifactStops taskId={taskId} version={task.version} tabHref={`${pathname}?tab=artifacts`} />
      ) : null}
      <Suspense fallback={<GatePending />}>
        <WithGate taskId={taskId} initial={gate} refresh={refresh}>
          {(g, q) => (
            <GatePanel
              gate={g}
              finishedPhase={isLive ? null : task.phase}
              unknownEffects={unknownEffects}
              role={role}
              asks={{ list: task.gate_asks, asOf: taskQ.dataUpdatedAt, currentAttempt: task.current_attempt }}
              error={q.error}
              onRetry={q.refetch}
              taskId={taskId}
            />
          )}
        </WithGate>
      </Suspense>

      <section aria-labelledby="timeline-heading" className="rounded-lg border border-neutral-200 bg-white p-3">
        <TimelineSection
          taskId={taskId}
          initial={initialTimeline}
          tick={taskQ.dataUpdatedAt}
          task={task}
          selectedId={selectedId}
          onSelect={(id) => setParam({ event: id })}
          sideEffectHref={(name) => `${pathname}?tab=side-effects&effect=${encodeURIComponent(name)}`}
        />
      </section>

      <section className="rounded-lg border border-neutral-200 bg-white">
        <div
          role="tablist"
          aria-label="Task details"
          className="flex flex-wrap gap-1 border-b border-neutral-200 px-2 pt-2"
        >
          {TABS.map((t) => (
            <button
              key={t.id}
              role="tab"
              type="button"
              id={`tab-${t.id}`}
              aria-selected={tab === t.id}
              aria-controls={`panel-${t.id}`}
              onClick={() => setParam({ tab: t.id })}
              className={`rounded-t px-3 py-1.5 text-sm ${tab === t.id ? "border border-b-white border-neutral-200 bg-white font-semibold" : "text-neutral-600 hover:text-neutral-900"}`}
            >
              {t.label}
              {t.id === "side-effects" && unknownEffects.length ? (
                <span className="ml-1 rounded-full bg-amber-100 px-1.5 text-xs text-amber-900">
                  {unknownEffects.length} unknown
                </span>
              ) : null}
            </button>
          ))}
        </div>
        <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="p-3">
          {tab === "side-effects" ? (
            <SideEffectsTab
              taskId={taskId}
              sideEffects={task.side_effects}
              focus={focusEffect}
              canReconcile={canReconcile}
              role={role}
              onReconcile={(name) => setReconciling(name)}
            />
          ) : tab === "approvals" ? (
            <ApprovalsTab taskId={taskId} eventCount={task.event_count} />
          ) : tab === "artifacts" ? (
            <ArtifactsTab taskId={taskId} version={task.version} />
          ) : tab === "egress" ? (
            <EgressTab taskId={taskId} eventCount={task.event_count} role={role} />
          ) : (
            <CheckpointsTab taskId={taskId} version={task.version} />
          )}
        </div>
      </section>

      <ExportPanel taskId={taskId} />

      {reconciling && task.side_effects[reconciling] ? (
        <ReconcileDialog
          taskId={taskId}
          name={reconciling}
          effect={task.side_effects[reconciling]!}
          onClose={() => setReconciling(null)}
        />
      ) : null}
    </div>
  );
}

/**
 * A visible stop for each artifact whose stored bytes no longer hash to its digest (decision 0045): someone changed
 * them after the upload. The resume gate does not read artifacts, so the stop is on the page, beside the gate.
 */
function ArtifactStops({ taskId, version, tabHref }: { taskId: string; version: number; tabHref: string }) {
  const q = useArtifacts(taskId, version);
  const bad = (q.data ?? []).filter((a) => a.content === "mismatch");
  if (!bad.length) return null;
  return (
    <section
      role="alert"
      aria-labelledby="artifact-stop-heading"
      className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-950"
      data-testid="artifact-stop"
    >
      <h2 id="artifact-stop-heading" className="font-semibold">
        <span aria-hidden="true">✕ </span>Stop: {bad.length === 1 ? "an artifact's" : `${bad.length} artifacts'`} bytes
        do not match their sha256
      </h2>
      <ul className="mt-1 list-disc pl-5">
        {bad.map((a) => (
          <li key={`${a.ref}@${a.sha256}`} className="break-all">
            <span className="font-mono text-xs">{a.ref}</span> (sha256{" "}
            <code className="font-mono text-xs">{a.sha256.slice(0, 16)}…</code>)
          </li>
        ))}
      </ul>
      <p className="mt-1">
        The stored bytes were changed after the runtime uploaded them, so they are neither shown nor served. Upload them
        again from the runtime that wrote them, or treat them as lost.{" "}
        <a href={tabHref} className="font-medium underline">
          See the artifacts
        </a>
      </p>
    </section>
  );
}

/**
 * The gate panel's place while the server asks the gate: as tall as the shortest answered panel (a verdict with one line
 * under it), so the timeline below moves less when the answer arrives.
 */
function GatePending() {
  return (
    <section
      aria-labelledby="gate-heading"
      aria-busy="true"
      className="min-h-[6.5rem] rounded-lg border border-neutral-200 bg-white p-4"
      data-testid="gate-panel-pending"
    >
      <h2 id="gate-heading" className="text-sm font-semibold">
        Resume gate
      </h2>
      <p className="mt-1 text-sm text-neutral-600">Asking the resume gate…</p>
    </section>
  );
}

/**
 * The timeline block: counts, the four-lane timeline with its event list and drawer, new events from the arrival feed
 * on each `tick`, and detail fetched on zoom.
 */
function TimelineSection({
  taskId,
  initial,
  tick,
  task,
  selectedId,
  onSelect,
  sideEffectHref,
}: {
  taskId: string;
  initial: PageOverview;
  /** Changes on each refresh of the task view: the arrival feed is read then. */
  tick: unknown;
  task: TaskView;
  selectedId: string | null;
  onSelect: (id: string | null) => void;
  sideEffectHref: (name: string) => string;
}) {
  // Each refresh of the task view reads the arrival feed from where it stopped (new and back-dated events).
  const timeline = useTimelineData(taskId, initial, tick);
  const events = timeline.events;
  // The compaction whose constraints were not re-checked: its timeline marker links to the gate's reason (listed when no
  // stop reason hides it; else to the gate panel, whose verdict already holds mutations back). The verdict is read from
  // what the gate panel holds, never asked for here, so the timeline does not wait for it.
  const gateNow = useGateIfKnown(taskId);
  const constraintsUnchecked = timeline.compactionUnchecked
    ? {
        eventId: timeline.compactionUnchecked.event_id,
        occurredAt: timeline.compactionUnchecked.occurred_at,
        href: gateNow?.reasons.some((r) => r.code === "constraints_unchecked")
          ? "#gate-reason-constraints_unchecked"
          : "#gate-heading",
      }
    : null;
  const partial = timeline.total > events.length;
  const [historyView, setHistoryView] = useState<"events" | "calls">("events");
  const { loadWindow } = timeline;
  const onTimelineView = useCallback(
    (domain: readonly [number, number] | null) => {
      if (domain) loadWindow(domain[0], domain[1]);
    },
    [loadWindow],
  );
  return (
    <>
      <div className="mb-2 flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="timeline-heading" className="text-sm font-semibold">
          Timeline
        </h2>
        <p className="text-xs text-neutral-600">
          {timeline.total} {timeline.total === 1 ? "event" : "events"}
          {partial
            ? ` (${events.length} loaded: every restart and interruption, the newest, and what you zoom into)`
            : ""}{" "}
          · attempt {task.current_attempt || "—"}
          {timeline.loadingWindow ? (
            <span className="ml-2" role="status">
              Loading detail…
            </span>
          ) : null}
          {timeline.error ? (
            <span className="ml-2 text-red-700">Could not refresh: {timeline.error.message}</span>
          ) : null}
        </p>
      </div>
      <HistoryViews taskId={taskId} view={historyView} onView={setHistoryView} />
      {events.length === 0 ? (
        <p className="rounded border border-dashed border-neutral-300 p-6 text-center text-sm text-neutral-600">
          No events yet. The runtime reports them with <code className="font-mono text-xs">POST /api/v1/events</code>.
        </p>
      ) : historyView === "calls" ? (
        <ToolCallTable
          events={events}
          sideEffects={task.side_effects}
          partial={partial}
          onSelect={(id) => {
            setHistoryView("events");
            onSelect(id);
          }}
        />
      ) : (
        <TaskTimeline
          events={events}
          sideEffects={task.side_effects}
          selectedId={selectedId}
          onSelect={onSelect}
          sideEffectHref={sideEffectHref}
          constraintsUnchecked={constraintsUnchecked}
          overview={
            partial || timeline.serverBins.length
              ? {
                  serverBins: timeline.serverBins,
                  completeFrom: timeline.completeFrom,
                  totalEvents: timeline.total,
                  laneCounts: timeline.counts,
                  onViewChange: onTimelineView,
                }
              : undefined
          }
        />
      )}
    </>
  );
}

/**
 * The history two ways (issue 24, decision 0043): the timeline with every event, or one row per tool call with its
 * outcome; and the events as JSON — in the browser (`GET …/timeline`, time order, pages of 1000 with `next_cursor`) or
 * downloaded whole (`GET …/events`, streamed).
 */
function HistoryViews({
  taskId,
  view,
  onView,
}: {
  taskId: string;
  view: "events" | "calls";
  onView: (v: "events" | "calls") => void;
}) {
  const enc = encodeURIComponent(taskId);
  const btn = (on: boolean) =>
    `px-2.5 py-1 text-xs focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600 ${on ? "bg-neutral-900 text-white" : "bg-white text-neutral-800 hover:bg-neutral-50"}`;
  return (
    <div className="mb-2 flex flex-wrap items-center gap-x-4 gap-y-2" data-testid="history-views">
      <div
        role="group"
        aria-label="History view"
        className="inline-flex overflow-hidden rounded-md border border-neutral-300"
      >
        <button
          type="button"
          aria-pressed={view === "events"}
          className={btn(view === "events")}
          onClick={() => onView("events")}
        >
          Every event
        </button>
        <button
          type="button"
          aria-pressed={view === "calls"}
          className={`${btn(view === "calls")} border-l border-neutral-300`}
          onClick={() => onView("calls")}
          data-testid="history-compact"
        >
          Compact: one row per tool call
        </button>
      </div>
      <span className="text-xs text-neutral-700">
        Events as JSON:{" "}
        <a
          href={`/api/v1/tasks/${enc}/timeline?limit=1000`}
          className="underline"
          target="_blank"
          rel="noreferrer"
          data-testid="history-json-view"
        >
          view
        </a>{" "}
        ·{" "}
        <a href={`/api/v1/tasks/${enc}/events`} className="underline" download data-testid="history-json-download">
          download
        </a>
      </span>
    </div>
  );
}
