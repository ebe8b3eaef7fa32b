import type { Metadata } from "next";
import Link from "next/link";
import { listApprovals, type ApprovalView } from "@/lib/domain/approvals/read";
import { can } from "@/lib/domain/authz";
import { requirePageContext } from "@/lib/server/page-actor";
import { ApprovalStatusBadge } from "@/components/approvals/ApprovalStatusBadge";
import { Id } from "@/components/ui/Id";
import { Time } from "@/components/ui/time";
import { LiveRefresh } from "@/components/LiveRefresh";
import { policyVersionName } from "@/lib/domain/policies/version-name";

export const metadata: Metadata = { title: "Approvals" };

type SP = Record<string, string | string[] | undefined>;

/** Age filter choices: requests older than this many seconds. */
const AGES: Record<string, { label: string; seconds: number }> = {
  "1h": { label: "older than 1 hour", seconds: 3600 },
  "24h": { label: "older than 24 hours", seconds: 86_400 },
  "7d": { label: "older than 7 days", seconds: 604_800 },
};

const one = (v: string | string[] | undefined) => (typeof v === "string" && v.trim() ? v.trim() : null);

/**
 * The approver's queue (docs/concepts.md#approvals): pending and stale requests first, oldest first, then the decided
 * ones; filters by task, action and age (in the URL, so a filtered queue can be shared).
 */
export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const sp = await searchParams;
  const task = one(sp.task);
  const action = one(sp.action);
  const age = one(sp.age);
  const olderThanSeconds = age && AGES[age] ? AGES[age]!.seconds : null;
  const filters = { task_id: task, action, older_than_seconds: olderThanSeconds, limit: 200 };
  const [pending, stale, approved, rejected] = await Promise.all([
    listApprovals(ctx, { ...filters, status: "pending" }),
    listApprovals(ctx, { ...filters, status: "stale" }),
    listApprovals(ctx, { ...filters, status: "approved" }),
    listApprovals(ctx, { ...filters, status: "rejected" }),
  ]);
  const waiting = [...pending.approvals, ...stale.approvals].sort((a, b) =>
    a.requested_at < b.requested_at ? -1 : a.requested_at > b.requested_at ? 1 : 0,
  );
  const decided = [...approved.approvals, ...rejected.approvals]
    .sort((a, b) => (a.requested_at < b.requested_at ? 1 : -1))
    .slice(0, 50);
  const mayDecide = can(actor, "approvals.decide");
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-xl font-semibold">Approvals</h1>
        <p className="text-sm text-neutral-600">
          Writes that wait for an approver: each approval is bound to exactly what will run, and goes stale by itself
          when any of that changes.{" "}
          {mayDecide
            ? "Open one to approve, re-approve or reject it."
            : "Approvers, admins and owners decide them; you can read them."}
        </p>
        <LiveRefresh name="approvals" />
      </div>
      <form className="flex flex-wrap items-end gap-2 text-sm" method="get" aria-label="Filter approvals">
        <label className="flex flex-col text-xs font-medium">
          Task
          <input
            name="task"
            defaultValue={task ?? ""}
            className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            placeholder="task id"
          />
        </label>
        <label className="flex flex-col text-xs font-medium">
          Action
          <input
            name="action"
            defaultValue={action ?? ""}
            className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
            placeholder="publish_report"
          />
        </label>
        <label className="flex flex-col text-xs font-medium">
          Age
          <select
            name="age"
            defaultValue={age ?? ""}
            className="rounded-md border border-neutral-300 px-2 py-1.5 text-sm"
          >
            <option value="">any age</option>
            {Object.entries(AGES).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
          </select>
        </label>
        <button className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white">Filter</button>
        {task || action || age ? (
          <Link href="/approvals" className="py-1.5 text-sm underline">
            Clear filters
          </Link>
        ) : null}
      </form>

      <section aria-labelledby="waiting-h" className="space-y-2">
        <h2 id="waiting-h" className="text-base font-semibold">
          Waiting for a decision <span className="font-normal text-neutral-600">({waiting.length})</span>
        </h2>
        {waiting.length === 0 ? (
          <p
            className="rounded-lg border border-dashed border-neutral-300 bg-white p-6 text-center text-sm text-neutral-600"
            data-testid="approvals-empty"
          >
            No approval waits{task || action || age ? " for these filters" : ""}. A runtime asks for one by posting an
            intent with <code className="font-mono text-xs">&quot;requires_approval&quot;: true</code>, or for an action
            marked approval-required in Settings.
          </p>
        ) : (
          <ApprovalTable rows={waiting} testId="approvals-waiting" />
        )}
      </section>
      <section aria-labelledby="decided-h" className="space-y-2">
        <h2 id="decided-h" className="text-base font-semibold">
          Recently decided
        </h2>
        {decided.length === 0 ? (
          <p className="text-sm text-neutral-600">None yet.</p>
        ) : (
          <ApprovalTable rows={decided} testId="approvals-decided" />
        )}
      </section>
    </div>
  );
}

/**
 * The approvals as a table from 768 px; below that each row stacks into a card (its cells one under another, each with
 * its column's name), so a 420 px window shows every field without scrolling sideways.
 */
function ApprovalTable({ rows, testId }: { rows: ApprovalView[]; testId: string }) {
  const cell = "block px-0 py-0.5 md:table-cell md:px-3 md:py-2";
  const label = "mr-1 font-sans text-xs font-medium text-neutral-600 md:hidden";
  return (
    <div className="relative rounded-lg border border-neutral-200 bg-white md:overflow-x-auto" data-testid={testId}>
      <table className="block w-full text-left text-sm md:table md:min-w-[52rem]">
        <thead className="hidden border-b border-neutral-200 bg-neutral-50 text-xs uppercase tracking-wide text-neutral-600 md:table-header-group">
          <tr>
            <th scope="col" className="px-3 py-2">
              Status
            </th>
            <th scope="col" className="px-3 py-2">
              Action
            </th>
            <th scope="col" className="px-3 py-2">
              Task
            </th>
            <th scope="col" className="px-3 py-2">
              Side effect
            </th>
            <th scope="col" className="px-3 py-2">
              Policy
            </th>
            <th scope="col" className="px-3 py-2">
              Requested
            </th>
            <th scope="col" className="px-3 py-2">
              <span className="sr-only">Open</span>
            </th>
          </tr>
        </thead>
        <tbody className="block md:table-row-group">
          {rows.map((a) => (
            <tr
              key={a.id}
              className="block border-b border-neutral-100 px-3 py-2 last:border-0 md:table-row md:p-0"
              data-testid="approval-row"
              data-approval={a.id}
              data-status={a.status}
            >
              <td className={cell}>
                <ApprovalStatusBadge status={a.status} reasons={a.stale_reasons} />
              </td>
              <td className={`${cell} break-all font-mono text-xs`} data-testid="approval-cell">
                <span className={label}>Action</span>
                {a.action}
              </td>
              <td className={`${cell} text-xs md:max-w-[14rem]`} data-testid="approval-cell">
                <span className={label}>Task</span>
                <Link
                  href={`/tasks/${encodeURIComponent(a.task_id)}?tab=approvals`}
                  className="underline-offset-2 hover:underline"
                >
                  <Id value={a.task_id} />
                </Link>
              </td>
              <td className={`${cell} break-all font-mono text-xs`} data-testid="approval-cell">
                <span className={label}>Side effect</span>
                {a.side_effect}
              </td>
              <td className={`${cell} text-xs`} data-testid="approval-cell">
                <span className={label}>Policy</span>
                {policyVersionName(a.policy_version)}
              </td>
              <td className={`${cell} text-xs md:whitespace-nowrap`} data-testid="approval-cell">
                <span className={label}>Requested</span>
                <Time iso={a.requested_at} /> <span className="break-all text-neutral-500">by {a.requested_by}</span>
              </td>
              <td className={`${cell} pt-1.5 md:text-right`}>
                <Link
                  href={`/approvals/${a.id}`}
                  className="inline-block rounded-md border border-neutral-300 px-2.5 py-1 text-xs hover:bg-neutral-50"
                  aria-label={`Open the approval of ${a.action} for task ${a.task_id}`}
                >
                  Open
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
