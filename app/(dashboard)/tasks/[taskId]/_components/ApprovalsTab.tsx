"use client";

/**
 * The task's approvals (docs/concepts.md#approvals): every live request with its status, stale reasons and decision,
 * linking to the approval page where approvers act. Fetched again when the task's event count moves (a request, a
 * decision and an invalidation each put a mark on the session lane).
 */
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import type { ApprovalView } from "@/lib/domain/approvals/read";
import { ApprovalStatusBadge } from "@/components/approvals/ApprovalStatusBadge";
import { Time } from "@/components/ui/time";
import { policyVersionName } from "@/lib/domain/policies/version-name";

export function ApprovalsTab({ taskId, eventCount }: { taskId: string; eventCount: number }) {
  const q = useQuery({
    queryKey: ["task", taskId, "approvals", eventCount],
    queryFn: () =>
      apiFetch<{ approvals: ApprovalView[] }>(`/api/v1/approvals?task_id=${encodeURIComponent(taskId)}&limit=200`),
  });
  if (q.isPending) return <p className="p-4 text-sm text-neutral-600">Loading approvals…</p>;
  if (q.error) {
    return (
      <p role="alert" className="p-4 text-sm text-red-700">
        Could not load approvals: {q.error.message}{" "}
        <button type="button" className="underline" onClick={() => q.refetch()}>
          Retry
        </button>
      </p>
    );
  }
  const rows = q.data.approvals;
  if (!rows.length) {
    return (
      <p className="p-4 text-sm text-neutral-600" data-testid="task-approvals-empty">
        No approvals for this task. A runtime asks for one with an intent that says{" "}
        <code className="font-mono text-xs">&quot;requires_approval&quot;: true</code>.
      </p>
    );
  }
  return (
    <div className="relative overflow-x-auto">
      <table className="w-full min-w-[44rem] text-left text-sm" data-testid="task-approvals">
        <thead className="text-xs uppercase tracking-wide text-neutral-600">
          <tr>
            <th scope="col" className="px-2 py-1.5">
              Side effect
            </th>
            <th scope="col" className="px-2 py-1.5">
              Action
            </th>
            <th scope="col" className="px-2 py-1.5">
              Status
            </th>
            <th scope="col" className="px-2 py-1.5">
              Policy
            </th>
            <th scope="col" className="px-2 py-1.5">
              Decision
            </th>
            <th scope="col" className="px-2 py-1.5">
              <span className="sr-only">Open</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((a) => (
            <tr
              key={a.id}
              className="border-t border-neutral-100"
              data-testid="task-approval-row"
              data-status={a.status}
            >
              <td className="px-2 py-2 font-mono text-xs">{a.side_effect}</td>
              <td className="px-2 py-2 font-mono text-xs">{a.action}</td>
              <td className="px-2 py-2">
                <ApprovalStatusBadge status={a.status} reasons={a.stale_reasons} />
              </td>
              <td className="px-2 py-2 text-xs">{policyVersionName(a.policy_version)}</td>
              <td className="px-2 py-2 text-xs">
                {a.decision ? (
                  <>
                    {a.decision.decision === "approve" ? "approved" : "rejected"} by {a.decision.decided_by} ·{" "}
                    <Time iso={a.decision.decided_at} />
                    {a.used_at ? " · used" : ""}
                  </>
                ) : (
                  <span className="text-neutral-500">
                    requested <Time iso={a.requested_at} />
                  </span>
                )}
              </td>
              <td className="px-2 py-2 text-right">
                <Link
                  href={`/approvals/${a.id}`}
                  className="rounded-md border border-neutral-300 px-2.5 py-1 text-xs hover:bg-neutral-50"
                >
                  {a.status === "stale" ? "Review change" : "Open"}
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
