import type { Metadata } from "next";
import Link from "next/link";
import { listTaskWorkflowsForActor, listTasksForActor } from "@/lib/domain/tasks/list";
import { pageSize } from "@/lib/domain/tasks/read";
import { TASK_STATUSES, TASK_STATUS_WORD, type TaskStatus } from "@/lib/domain/tasks/status";
import { requirePageContext } from "@/lib/server/page-actor";
import { withSigningKey } from "@/lib/server/verb-context";
import { Time } from "@/components/ui/time";
import { LiveRefresh } from "@/components/LiveRefresh";
import { DomainError } from "@/lib/domain/errors";
import type { TaskListItem } from "@/lib/contract/api";
import { isTerminalPhase, phaseLabel } from "@/lib/domain/tasks/phases";
import { policyVersionName } from "@/lib/domain/policies/version-name";
import { activeMapsForWorkflows } from "@/lib/domain/maps/read";
import { can } from "@/lib/domain/authz";

export const metadata: Metadata = { title: "Tasks" };

type SP = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);

/**
 * The tenant's tasks: search by task id, idempotency key, sandbox id or host; filter by status (decision 0043),
 * workflow (each run's Workflow links to the workflow's custody map, decision 0049) and side-effect status; sort by last activity (default) or creation; cursor pagination. Every filter is in the URL, so a
 * filtered list can be shared, and pagination keeps them.
 */
export default async function TasksPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const sp = await searchParams;
  const q = one(sp.q) ?? "";
  const status = one(sp.status) ?? "";
  const effectStatus = one(sp.effect_status) ?? "";
  const sort = one(sp.sort) ?? "";
  // The incident responder's question (docs/concepts.md#egress-and-vault-custody): which task reached this host, used
  // this credential, ran under this policy.
  const host = one(sp.host) ?? "";
  const credentialRef = one(sp.credential_ref) ?? "";
  const policyVersion = one(sp.policy_version) ?? "";
  const workflow = one(sp.workflow) ?? "";
  const cursor = one(sp.cursor);
  const limitParam = one(sp.limit) ?? "";
  let data;
  let error: string | null = null;
  try {
    data = await listTasksForActor(withSigningKey(ctx), {
      q,
      status: status || null,
      effectStatus: effectStatus || null,
      sort: sort || null,
      host,
      credentialRef,
      policyVersion,
      workflow,
      cursor,
      limit: pageSize(limitParam || null, 200, 50),
    });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    error = err.message;
  }
  const filtered = Boolean(q || status || effectStatus || host || credentialRef || policyVersion || workflow);
  // The workflow filter's choices, and the custody map each shown workflow links to (decision 0049).
  const workflows = await listTaskWorkflowsForActor(ctx);
  if (workflow && !workflows.includes(workflow)) workflows.unshift(workflow);
  const shownWorkflows = (data?.tasks ?? []).flatMap((t) => (t.workflow ? [t.workflow] : []));
  const maps = can(ctx.actor, "maps.read") ? await activeMapsForWorkflows(ctx, shownWorkflows) : null;
  const qs = (extra: Record<string, string>) => {
    const p = new URLSearchParams();
    if (q) p.set("q", q);
    if (status) p.set("status", status);
    if (effectStatus) p.set("effect_status", effectStatus);
    if (sort) p.set("sort", sort);
    if (limitParam) p.set("limit", limitParam);
    if (host) p.set("host", host);
    if (credentialRef) p.set("credential_ref", credentialRef);
    if (policyVersion) p.set("policy_version", policyVersion);
    if (workflow) p.set("workflow", workflow);
    for (const [k, v] of Object.entries(extra)) p.set(k, v);
    return `/tasks?${p.toString()}`;
  };

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-xl font-semibold">Tasks</h1>
          <p className="text-sm text-neutral-600">
            Every run your runtimes reported, {sort === "created" ? "newest first" : "most recent activity first"}.
          </p>
          <LiveRefresh name="tasks" />
        </div>
        <form className="flex flex-wrap items-end gap-2" role="search" action="/tasks">
          <div>
            <label htmlFor="q" className="block text-xs font-medium text-neutral-700">
              Search tasks
            </label>
            <input
              id="q"
              name="q"
              defaultValue={q}
              placeholder="Task id, idempotency key, sandbox id or host"
              aria-describedby="q-hint"
              className="w-80 max-w-full rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            />
            <p id="q-hint" className="sr-only">
              Part of a task id, or an exact idempotency key, sandbox id or host.
            </p>
          </div>
          <div>
            <label htmlFor="status" className="block text-xs font-medium text-neutral-700">
              Status
            </label>
            <select
              id="status"
              name="status"
              defaultValue={status}
              className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            >
              <option value="">any</option>
              {TASK_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {TASK_STATUS_WORD[s]}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="workflow" className="block text-xs font-medium text-neutral-700">
              Workflow
            </label>
            <select
              id="workflow"
              name="workflow"
              defaultValue={workflow}
              className="max-w-48 rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            >
              <option value="">any</option>
              {workflows.map((w) => (
                <option key={w} value={w}>
                  {w}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="sort" className="block text-xs font-medium text-neutral-700">
              Sort
            </label>
            <select
              id="sort"
              name="sort"
              defaultValue={sort || "activity"}
              className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            >
              <option value="activity">last activity</option>
              <option value="created">newest first</option>
            </select>
          </div>
          <div>
            <label htmlFor="effect_status" className="block text-xs font-medium text-neutral-700">
              Side effects
            </label>
            <select
              id="effect_status"
              name="effect_status"
              defaultValue={effectStatus}
              className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            >
              <option value="">any</option>
              <option value="unknown">with an unknown effect</option>
              <option value="in_flight">with an effect in flight</option>
              <option value="awaiting_approval">awaiting approval</option>
              <option value="failed">with a failed effect</option>
            </select>
          </div>
          <details className="text-sm" open={Boolean(host || credentialRef || policyVersion)}>
            <summary className="cursor-pointer py-1.5 text-xs font-medium text-neutral-700">
              Egress and policy filters
            </summary>
            <div className="flex flex-wrap items-end gap-2">
              <div>
                <label htmlFor="host" className="block text-xs font-medium text-neutral-700">
                  Reached host
                </label>
                <input
                  id="host"
                  name="host"
                  defaultValue={host}
                  placeholder="records.example.com"
                  className="w-48 rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
                />
              </div>
              <div>
                <label htmlFor="credential_ref" className="block text-xs font-medium text-neutral-700">
                  Used credential
                </label>
                <input
                  id="credential_ref"
                  name="credential_ref"
                  defaultValue={credentialRef}
                  placeholder="credential reference"
                  className="w-44 rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
                />
              </div>
              <div>
                <label htmlFor="policy_version" className="block text-xs font-medium text-neutral-700">
                  Policy version
                </label>
                <input
                  id="policy_version"
                  name="policy_version"
                  defaultValue={policyVersion}
                  className="w-28 rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
                />
              </div>
            </div>
          </details>
          <button className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white">Search</button>
          {filtered ? (
            <Link href="/tasks" className="px-2 py-1.5 text-sm text-neutral-700 underline">
              Clear
            </Link>
          ) : null}
        </form>
      </div>

      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
          {error}{" "}
          <Link href="/tasks" className="underline">
            Start again
          </Link>
        </p>
      ) : !data || data.tasks.length === 0 ? (
        filtered ? (
          <div className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-center text-sm text-neutral-700">
            No task matches these filters.{" "}
            <Link href="/tasks" className="underline">
              Show all tasks
            </Link>
            .
          </div>
        ) : (
          <EmptyState />
        )
      ) : (
        <div className="relative overflow-x-auto rounded-lg border border-neutral-200 bg-white">
          <table className="w-full text-left text-sm">
            <thead className="border-b border-neutral-200 bg-neutral-50 text-xs uppercase tracking-wide text-neutral-600">
              <tr>
                <th scope="col" className="px-3 py-2">
                  Task
                </th>
                <th scope="col" className="px-3 py-2">
                  Status
                </th>
                <th scope="col" className="hidden px-3 py-2 sm:table-cell">
                  Attention
                </th>
                <th scope="col" className="px-3 py-2">
                  Last activity
                </th>
                <th scope="col" className="hidden px-3 py-2 md:table-cell">
                  Workflow
                </th>
                <th scope="col" className="hidden px-3 py-2 md:table-cell">
                  Phase
                </th>
                <th scope="col" className="hidden px-3 py-2 lg:table-cell">
                  Principal
                </th>
                <th scope="col" className="hidden px-3 py-2 lg:table-cell">
                  Policy
                </th>
                <th scope="col" className="hidden px-3 py-2 text-right md:table-cell">
                  Events
                </th>
              </tr>
            </thead>
            <tbody>
              {data.tasks.map((t) => (
                <tr
                  key={t.task_id}
                  className="border-b border-neutral-100 last:border-0 hover:bg-neutral-50"
                  data-testid="task-row"
                  data-status={t.status}
                >
                  <td className="px-3 py-2 font-mono text-xs">
                    <Link
                      href={`/tasks/${encodeURIComponent(t.task_id)}`}
                      className="block max-w-[12rem] truncate text-sky-800 underline-offset-2 hover:underline sm:max-w-[22rem]"
                      title={t.task_id}
                      data-testid="task-link"
                    >
                      {t.task_id}
                    </Link>
                    {/* Below 640 px the Attention column sits under the task id, so it stays in view at 420 px. */}
                    <div className="mt-1 font-sans sm:hidden">
                      <AttentionBadges task={t} testId="task-attention-narrow" hideNone />
                    </div>
                    {/* Below 768 px the Workflow column is hidden; its link sits under the task id instead. */}
                    {t.workflow ? (
                      <div className="mt-1 font-sans text-neutral-700 md:hidden">
                        <span className="sr-only">Workflow: </span>
                        <WorkflowLink workflow={t.workflow} maps={maps} testId="task-workflow-narrow" />
                      </div>
                    ) : null}
                  </td>
                  <td className="px-3 py-2 text-xs">
                    <StatusBadge status={t.status} />
                  </td>
                  <td className="hidden px-3 py-2 text-xs sm:table-cell">
                    <AttentionBadges task={t} />
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 text-xs text-neutral-700">
                    <Time iso={t.last_activity_at} />
                  </td>
                  <td className="hidden max-w-56 px-3 py-2 text-xs md:table-cell">
                    {t.workflow ? (
                      <WorkflowLink workflow={t.workflow} maps={maps} testId="task-workflow" />
                    ) : (
                      <span className="text-neutral-500">—</span>
                    )}
                  </td>
                  <td className="hidden px-3 py-2 md:table-cell">{phaseLabel(t.phase, t.version)}</td>
                  <td
                    className="hidden max-w-64 truncate px-3 py-2 font-mono text-xs lg:table-cell"
                    title={t.principal ?? undefined}
                  >
                    {t.principal ?? "—"}
                  </td>
                  <td className="hidden px-3 py-2 font-mono text-xs lg:table-cell">
                    {policyVersionName(t.policy_version)}
                  </td>
                  <td className="hidden px-3 py-2 text-right tabular-nums md:table-cell">{t.event_count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && (cursor || data.next_cursor) ? (
        <nav aria-label="Pagination" className="flex gap-3 text-sm">
          {cursor ? (
            <Link href={qs({})} className="underline">
              First page
            </Link>
          ) : null}
          {data.next_cursor ? (
            <Link href={qs({ cursor: data.next_cursor })} className="underline">
              Next page
            </Link>
          ) : null}
        </nav>
      ) : null}
    </div>
  );
}

/**
 * A run's workflow, linking to the workflow's active custody map; for a workflow without one, to the maps page for that
 * workflow, which offers to start it (decision 0049). `maps` null: the viewer cannot read maps, so no link.
 */
function WorkflowLink({
  workflow,
  maps,
  testId,
}: {
  workflow: string;
  maps: Map<string, { id: string; title: string }> | null;
  testId: string;
}) {
  if (!maps) {
    return (
      <span className="break-all font-mono text-xs" data-testid={testId}>
        {workflow}
      </span>
    );
  }
  const map = maps.get(workflow);
  return (
    <span className="inline-flex flex-wrap items-baseline gap-x-1.5" data-testid={testId} data-map={map?.id ?? ""}>
      {map ? (
        <Link
          href={`/maps/${map.id}`}
          className="break-all font-mono text-xs text-sky-800 underline underline-offset-2"
          title={`Custody map: ${map.title}`}
          aria-label={`${workflow}: custody map ${map.title}`}
        >
          {workflow}
        </Link>
      ) : (
        <>
          <span className="break-all font-mono text-xs">{workflow}</span>
          <Link
            href={`/maps?workflow=${encodeURIComponent(workflow)}`}
            className="whitespace-nowrap text-xs text-sky-800 underline underline-offset-2"
            aria-label={`No custody map for ${workflow} yet: start one`}
          >
            no map yet
          </Link>
        </>
      )}
    </span>
  );
}

function EmptyState() {
  return (
    <div
      className="rounded-lg border border-dashed border-neutral-300 bg-white p-8 text-sm text-neutral-700"
      data-testid="tasks-empty"
    >
      <h2 className="text-base font-semibold text-neutral-900">No runs reported yet</h2>
      <p className="mt-2">Connect an agent runtime and its tasks appear here:</p>
      <ol className="mt-2 list-decimal space-y-1 pl-5">
        <li>
          An owner creates a runtime API key under{" "}
          <Link href="/settings/api-keys" className="underline">
            Settings → Runtime API keys
          </Link>
          .
        </li>
        <li>
          The runtime sends events with it:{" "}
          <code className="rounded bg-neutral-100 px-1 font-mono text-xs">
            POST /api/v1/events Authorization: Bearer rck_…
          </code>
        </li>
        <li>
          and checkpoints its task record with{" "}
          <code className="rounded bg-neutral-100 px-1 font-mono text-xs">PUT /api/v1/tasks/&#123;task_id&#125;</code>.
        </li>
      </ol>
      <p className="mt-2">
        The typed client in <code className="font-mono text-xs">lib/sdk/runtime-client.ts</code> does both.
      </p>
    </div>
  );
}

const STATUS_STYLE: Record<TaskStatus, { icon: string; cls: string }> = {
  running: { icon: "▶", cls: "border-sky-300 bg-sky-50 text-sky-900" },
  stopped: { icon: "■", cls: "border-red-300 bg-red-50 text-red-800" },
  waiting_for_approval: { icon: "‖", cls: "border-sky-300 bg-white text-sky-900" },
  replay: { icon: "↺", cls: "border-amber-300 bg-amber-50 text-amber-900" },
  stale: { icon: "…", cls: "border-neutral-400 bg-neutral-100 text-neutral-800" },
  done: { icon: "✓", cls: "border-emerald-300 bg-emerald-50 text-emerald-900" },
  failed: { icon: "✕", cls: "border-red-300 bg-white text-red-800" },
  terminated: { icon: "⊘", cls: "border-neutral-400 bg-white text-neutral-800" },
};

/** The task's status (lib/domain/tasks/status.ts) as a word with an icon; colour never carries it alone. */
function StatusBadge({ status }: { status: TaskStatus }) {
  const st = STATUS_STYLE[status];
  return (
    <span
      className={`inline-flex items-center gap-1 whitespace-nowrap rounded-full border px-2 py-0.5 font-medium ${st.cls}`}
      data-testid="task-status"
    >
      <span aria-hidden="true">{st.icon}</span>
      {TASK_STATUS_WORD[status]}
    </span>
  );
}

/**
 * What on this task waits for a person, in the attention queue's words: unknown writes, approval waits, and a
 * revoked principal while the run has not ended. "—" when nothing does.
 */
function AttentionBadges({
  task,
  testId = "task-attention",
  hideNone = false,
}: {
  task: TaskListItem;
  testId?: string;
  /** Render nothing (not "—") when nothing waits. */
  hideNone?: boolean;
}) {
  const badges: Array<{ key: string; text: string; cls: string }> = [];
  if (task.unknown_side_effects > 0) {
    badges.push({
      key: "unknown",
      text: `? ${task.unknown_side_effects} unknown`,
      cls: "border-amber-300 bg-amber-50 text-amber-900",
    });
  }
  if (task.awaiting_approval_side_effects > 0) {
    badges.push({
      key: "approval",
      text: `${task.awaiting_approval_side_effects} awaiting approval`,
      cls: "border-sky-300 bg-sky-50 text-sky-900",
    });
  }
  if (task.principal_revoked && !isTerminalPhase(task.phase)) {
    badges.push({ key: "revoked", text: "principal revoked", cls: "border-red-300 bg-red-50 text-red-800" });
  }
  if (badges.length === 0) return hideNone ? null : <span className="text-neutral-500">—</span>;
  return (
    <span className="flex flex-wrap gap-1 text-xs" data-testid={testId}>
      {badges.map((b) => (
        <span
          key={b.key}
          className={`inline-flex items-center whitespace-nowrap rounded-full border px-2 py-0.5 font-medium ${b.cls}`}
        >
          {b.text}
        </span>
      ))}
    </span>
  );
}
