"use client";

import { Fragment, useState } from "react";
import { ArtifactMismatch, ArtifactViewer } from "@/components/artifacts/ArtifactViewer";
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
 * Artifacts listed by the task's checkpoints, each with its sha256 and, when the runtime uploaded its bytes, a viewer
 * (decision 0045): the first uploaded one opens by itself. `version` is the task's latest checkpoint version from the
 * live task view: the list is fetched again when it moves. Bytes that no longer hash to their digest are a stop.
 */
export function ArtifactsTab({ taskId, version }: { taskId: string; version: number }) {
  const q = useArtifacts(taskId, version);
  const [open, setOpen] = useState<string | null | undefined>(undefined);
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
  const firstStored = q.data.find((a) => a.content === "stored");
  const shown = open === undefined ? (firstStored ? `${firstStored.ref}@${firstStored.sha256}` : null) : open;
  const opened = q.data.find((a) => `${a.ref}@${a.sha256}` === shown) ?? null;
  return (
    <div>
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
              <th scope="col" className="px-2 py-1.5">
                Content
              </th>
            </tr>
          </thead>
          <tbody>
            {q.data.map((a) => {
              const id = `${a.ref}@${a.sha256}`;
              return (
                <Fragment key={id}>
                  <tr className="border-t border-neutral-100" data-testid="artifact-row">
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
                    <td className="px-2 py-2 text-xs">
                      {a.content === "stored" ? (
                        <button
                          type="button"
                          className="rounded border border-neutral-300 px-2 py-0.5 hover:bg-neutral-50"
                          aria-expanded={shown === id}
                          aria-controls="artifact-viewer-panel"
                          onClick={() => setOpen(shown === id ? null : id)}
                        >
                          {shown === id ? "Hide" : "View"}
                        </button>
                      ) : a.content === "mismatch" ? (
                        <span className="font-semibold text-red-800" data-testid="artifact-row-mismatch">
                          ✕ bytes changed
                        </span>
                      ) : (
                        <span className="text-neutral-600">not uploaded</span>
                      )}
                    </td>
                  </tr>
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      {/* Outside the table: a viewer is as wide as the tab, never as wide as the table's columns. */}
      {q.data
        .filter((a) => a.content === "mismatch")
        .map((a) => (
          <div key={`stop-${a.ref}@${a.sha256}`} className="mt-3">
            <ArtifactMismatch refName={a.ref} sha256={a.sha256} />
          </div>
        ))}
      {opened && opened.content === "stored" ? (
        <section id="artifact-viewer-panel" aria-label={`Content of ${opened.ref}`} className="mt-3 min-w-0">
          <h3 className="mb-1 font-mono text-xs break-all text-neutral-700">{opened.ref}</h3>
          <ArtifactViewer taskId={taskId} sha256={opened.sha256} label={opened.ref} />
        </section>
      ) : null}
    </div>
  );
}
