"use client";

import { useArtifacts } from "@/lib/client/queries";
import { CopyButton } from "@/components/ui/CopyButton";
import { Time } from "@/components/ui/time";

function size(n: number | null): string {
  if (n === null) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Artifacts listed by the task's checkpoints, each with its sha256. `version` is the task's latest checkpoint
 * version from the live task view: the list is fetched again when it moves.
 */
export function ArtifactsTab({ taskId, version }: { taskId: string; version: number }) {
  const q = useArtifacts(taskId, version);
  if (q.isPending) return <p className="p-4 text-sm text-neutral-600">Loading artifacts…</p>;
  if (q.error) {
    return (
      <p role="alert" className="p-4 text-sm text-red-700">
        Could not load artifacts: {q.error.message}{" "}
        <button type="button" className="underline" onClick={() => q.refetch()}>
          Retry
        </button>
      </p>
    );
  }
  if (!q.data.length)
    return <p className="p-4 text-sm text-neutral-600">No artifacts yet. A checkpoint lists them with their sha256.</p>;
  return (
    <div className="relative overflow-x-auto">
      <table className="w-full text-left text-sm">
        <thead className="text-xs uppercase tracking-wide text-neutral-600">
          <tr>
            <th scope="col" className="px-2 py-1.5">
              Object
            </th>
            <th scope="col" className="px-2 py-1.5">
              sha256
            </th>
            <th scope="col" className="px-2 py-1.5">
              Size
            </th>
            <th scope="col" className="px-2 py-1.5">
              Type
            </th>
            <th scope="col" className="px-2 py-1.5">
              First in
            </th>
          </tr>
        </thead>
        <tbody>
          {q.data.map((a) => (
            <tr key={`${a.ref}@${a.sha256}`} className="border-t border-neutral-100" data-testid="artifact-row">
              <td className="px-2 py-2 font-mono text-xs break-all">{a.ref}</td>
              <td className="px-2 py-2">
                <span className="flex items-center gap-2">
                  <code className="font-mono text-xs" title={a.sha256}>
                    {a.sha256.slice(0, 16)}…
                  </code>
                  <CopyButton value={a.sha256} label="Copy" />
                </span>
              </td>
              <td className="px-2 py-2 text-xs tabular-nums">{size(a.size)}</td>
              <td className="px-2 py-2 text-xs">{a.media_type ?? "—"}</td>
              <td className="px-2 py-2 text-xs">
                v{a.first_version} · <Time iso={a.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
