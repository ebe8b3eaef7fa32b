"use client";

/**
 * The task's egress custody (issue 11): per host its runs asked to reach, the requests the egress proxy allowed
 * and denied, under which policy versions, for which tools and credential references, and whether the current
 * policy still admits the host ("drift"). Refetched when the task's event count moves.
 */
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import { Time } from "@/components/ui/time";

type EgressHost = {
  host: string;
  allowed: number;
  denied: number;
  last_at: string;
  ports: number[];
  policy_versions: string[];
  tools: string[];
  credential_refs: string[];
  in_current_policy: boolean | null;
  drift: boolean;
};

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "—");

export function EgressTab({ taskId, eventCount }: { taskId: string; eventCount: number }) {
  const q = useQuery({
    queryKey: ["task", taskId, "egress", eventCount],
    queryFn: () => apiFetch<{ current_policy_version: number | null; hosts: EgressHost[] }>(`/api/v1/tasks/${encodeURIComponent(taskId)}/egress`),
  });
  if (q.isPending) return <p className="p-4 text-sm text-neutral-600">Loading egress…</p>;
  if (q.error) {
    return (
      <p role="alert" className="p-4 text-sm text-red-700">
        Could not load egress: {q.error.message} <button type="button" className="underline" onClick={() => q.refetch()}>Retry</button>
      </p>
    );
  }
  const { hosts, current_policy_version: current } = q.data;
  const drifted = hosts.filter((h) => h.drift).length;
  return (
    <div className="space-y-2" data-testid="egress-tab">
      <p className="text-sm text-neutral-800">
        {current === null ? (
          <>No policy is active, so drift cannot be judged. <Link className="underline" href="/policies">Policies</Link></>
        ) : (
          <>
            Judged against the current policy <Link className="underline" href={`/policies?v=${current}`}>v{current}</Link>
            {drifted ? <strong className="text-red-800">: {drifted} host{drifted === 1 ? "" : "s"} this run reached {drifted === 1 ? "is" : "are"} no longer admitted.</strong> : ": every host this run reached is still admitted."}
          </>
        )}
      </p>
      {hosts.length === 0 ? (
        <p className="p-2 text-sm text-neutral-600">No egress recorded. The egress proxy reports each request as egress.allowed or egress.denied with its host.</p>
      ) : (
        <div className="relative overflow-x-auto">
          <table className="w-full text-left text-sm">
            <thead className="text-xs uppercase tracking-wide text-neutral-600">
              <tr>
                <th scope="col" className="px-2 py-1.5">Host</th>
                <th scope="col" className="px-2 py-1.5">Allowed</th>
                <th scope="col" className="px-2 py-1.5">Denied</th>
                <th scope="col" className="px-2 py-1.5">Current policy</th>
                <th scope="col" className="px-2 py-1.5">Policy versions</th>
                <th scope="col" className="px-2 py-1.5">Tools</th>
                <th scope="col" className="px-2 py-1.5">Credentials</th>
                <th scope="col" className="px-2 py-1.5">Last</th>
              </tr>
            </thead>
            <tbody>
              {hosts.map((h) => (
                <tr key={h.host} className={`border-t border-neutral-100 ${h.drift ? "bg-red-50" : ""}`} data-testid="egress-host" data-host={h.host} data-drift={h.drift}>
                  <td className="px-2 py-2 font-mono text-xs break-all">
                    <Link className="underline" href={`/tasks?host=${encodeURIComponent(h.host)}`} title="Every task that reached this host">{h.host}</Link>
                    {h.ports.length ? <span className="text-neutral-700">:{h.ports.join(",")}</span> : null}
                  </td>
                  <td className="px-2 py-2 tabular-nums">{h.allowed}</td>
                  <td className="px-2 py-2 tabular-nums">{h.denied}</td>
                  <td className="px-2 py-2 text-xs">
                    {h.in_current_policy === null ? "—" : h.in_current_policy ? "admitted" : h.drift ? <strong className="text-red-800">drift: no longer admitted</strong> : "not admitted"}
                  </td>
                  <td className="px-2 py-2 text-xs">{list(h.policy_versions)}</td>
                  <td className="px-2 py-2 text-xs">{list(h.tools)}</td>
                  <td className="px-2 py-2 font-mono text-xs">{list(h.credential_refs)}</td>
                  <td className="px-2 py-2 text-xs"><Time iso={h.last_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
