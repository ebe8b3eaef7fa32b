"use client";

import { useMemo, useState } from "react";
import { useCheckpoints } from "@/lib/client/queries";
import { SignatureBadge } from "@/components/ui/status";
import { Time } from "@/components/ui/time";

type Change = { path: string; before: unknown; after: unknown };

/** Leaf-level differences between two JSON values (paths in dot/bracket notation). */
export function diffJson(before: unknown, after: unknown, path = ""): Change[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const isObj = (v: unknown) => v !== null && typeof v === "object";
  if (!isObj(before) || !isObj(after) || Array.isArray(before) !== Array.isArray(after)) {
    return [{ path: path || "(record)", before, after }];
  }
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
  return keys.flatMap((k) => diffJson(b[k], a[k], Array.isArray(after) ? `${path}[${k}]` : path ? `${path}.${k}` : k));
}

const show = (v: unknown) => (v === undefined ? "—" : JSON.stringify(v));

/** Checkpoint history with signature checks and a diff between two versions. */
export function CheckpointsTab({ taskId, version }: { taskId: string; version: number }) {
  const q = useCheckpoints(taskId, version);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const list = useMemo(() => q.data?.pages.flatMap((p) => p.checkpoints) ?? [], [q.data]);
  const newest = list[0]?.version ?? null;
  const a = list.find((c) => c.version === (from ?? (newest !== null ? newest - 1 : null)));
  const b = list.find((c) => c.version === (to ?? newest));
  const changes = a && b ? diffJson(a.record, b.record) : [];

  if (q.isPending) return <p className="p-4 text-sm text-neutral-600">Loading checkpoints…</p>;
  if (q.error) {
    return (
      <p role="alert" className="p-4 text-sm text-red-700">
        Could not load checkpoints: {q.error.message}{" "}
        <button type="button" className="underline" onClick={() => q.refetch()}>
          Retry
        </button>
      </p>
    );
  }
  if (!list.length)
    return (
      <p className="p-4 text-sm text-neutral-600">
        No checkpoint yet: the runtime saves one with PUT /api/v1/tasks/&#123;id&#125;.
      </p>
    );
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <ol className="space-y-1" aria-label="Checkpoint history">
        {list.map((c) => (
          <li
            key={c.version}
            className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded border border-neutral-200 px-3 py-2 text-sm"
            data-testid="checkpoint-row"
          >
            <span className="font-semibold">v{c.version}</span>
            <span>{c.phase}</span>
            {c.attempt !== null && <span className="text-xs text-neutral-600">attempt {c.attempt}</span>}
            <SignatureBadge valid={c.signature_valid} check={c.signature_check} />
            <code
              className="font-mono text-xs text-neutral-600"
              title={`sha256 ${c.digest}\nsignature ${c.signature}\nkey ${c.key_id}`}
            >
              {c.digest.slice(0, 12)}…
            </code>
            <span className="text-xs text-neutral-600">
              <Time iso={c.created_at} />
            </span>
          </li>
        ))}
        <li className="pt-1 text-xs text-neutral-600" data-testid="checkpoint-history-end">
          {q.hasNextPage ? (
            <button
              type="button"
              className="rounded border border-neutral-300 px-2 py-1 text-sm text-neutral-800 hover:bg-neutral-50 disabled:opacity-60"
              onClick={() => q.fetchNextPage()}
              disabled={q.isFetchingNextPage}
            >
              {q.isFetchingNextPage
                ? "Loading older checkpoints…"
                : `Load older checkpoints (${list.length} of v1–v${newest} shown)`}
            </button>
          ) : (
            <>
              All {list.length} checkpoint{list.length === 1 ? "" : "s"} shown.
            </>
          )}
        </li>
      </ol>
      <div>
        {list.length < 2 ? (
          <p className="text-sm text-neutral-600">One version so far; a diff needs two.</p>
        ) : (
          <>
            <div className="flex flex-wrap items-end gap-2 text-sm">
              <label className="flex flex-col text-xs">
                From
                <select
                  className="rounded border border-neutral-300 px-2 py-1 text-sm"
                  value={a?.version ?? ""}
                  onChange={(e) => setFrom(Number(e.target.value))}
                >
                  {list.map((c) => (
                    <option key={c.version} value={c.version}>
                      v{c.version}
                    </option>
                  ))}
                </select>
              </label>
              <label className="flex flex-col text-xs">
                To
                <select
                  className="rounded border border-neutral-300 px-2 py-1 text-sm"
                  value={b?.version ?? ""}
                  onChange={(e) => setTo(Number(e.target.value))}
                >
                  {list.map((c) => (
                    <option key={c.version} value={c.version}>
                      v{c.version}
                    </option>
                  ))}
                </select>
              </label>
            </div>
            <table className="mt-2 w-full table-fixed text-left text-xs">
              <thead className="text-neutral-600">
                <tr>
                  <th className="w-1/3 py-1">Field</th>
                  <th className="py-1">v{a?.version}</th>
                  <th className="py-1">v{b?.version}</th>
                </tr>
              </thead>
              <tbody>
                {changes.length === 0 ? (
                  <tr>
                    <td colSpan={3} className="py-2 text-neutral-600">
                      No differences.
                    </td>
                  </tr>
                ) : (
                  changes.map((c) => (
                    <tr key={c.path} className="border-t border-neutral-100 align-top">
                      <td className="py-1 pr-2 font-mono break-all">{c.path}</td>
                      <td className="py-1 pr-2 font-mono break-all text-red-800">{show(c.before)}</td>
                      <td className="py-1 font-mono break-all text-emerald-800">{show(c.after)}</td>
                    </tr>
                  ))
                )}
              </tbody>
            </table>
          </>
        )}
      </div>
    </div>
  );
}
