"use client";

/**
 * Published versions of a map and a comparison of any two (or of one with the current draft): every field that
 * changed, per layer, before and after.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { mapApi, mapKeys } from "@/lib/client/maps";
import type { MapVersionInfo } from "@/lib/contract/maps";
import { diffMaps, type MapChange } from "@/lib/domain/maps/diff";
import { LAYER_GUIDE } from "@/lib/domain/maps/layers";
import { Time } from "@/components/ui/time";

const FIELD_WORD: Record<string, string> = {
  workflow: "Workflow",
  title: "Title",
  custodians: "Custodians",
  handoff: "Handoff",
  evidence: "Evidence to retain",
  recovery_path: "Recovery or export path",
  acceptance_question: "Acceptance question",
  verification: "Verification",
  verification_evidence: "Verification evidence",
  decision: "Decision",
  decision_note: "Decision note",
};

const CURRENT = 0;

export function VersionsPanel({
  mapId,
  versions,
  currentVersion,
  currentStatus,
}: {
  mapId: string;
  versions: MapVersionInfo[];
  currentVersion: number;
  currentStatus: "draft" | "published";
}) {
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number>(CURRENT);
  const fromVersion = from ?? versions[0]?.version ?? null;
  const load = (v: number) => (v === CURRENT ? mapApi.get(mapId) : mapApi.version(mapId, v));
  const compare = useQuery({
    queryKey: [...mapKeys.map(mapId), "compare", fromVersion, to, currentVersion, currentStatus],
    enabled: fromVersion !== null,
    queryFn: async () => {
      const [a, b] = await Promise.all([load(fromVersion!), load(to)]);
      return diffMaps(a, b);
    },
  });
  const label = (v: number) => (v === CURRENT ? `current (v${currentVersion} ${currentStatus})` : `v${v}`);

  return (
    <section
      aria-labelledby="versions-h"
      className="rounded-lg border border-neutral-200 bg-white p-3"
      data-testid="versions"
    >
      <h2 id="versions-h" className="text-sm font-semibold">
        Versions
      </h2>
      {versions.length === 0 ? (
        <p className="mt-2 text-sm text-neutral-700">
          Not published yet. Publishing freezes a version; later edits start a new draft you can compare with it.
        </p>
      ) : (
        <>
          <ul className="mt-2 space-y-1 text-xs text-neutral-800">
            {versions.map((v) => (
              <li key={v.version}>
                <a
                  className="font-medium text-sky-800 underline"
                  href={`/api/v1/maps/${mapId}/export?format=md&version=${v.version}`}
                  download
                >
                  v{v.version}
                </a>{" "}
                published by {v.published_by} · <Time iso={v.published_at} />
              </li>
            ))}
          </ul>
          <div className="mt-3 grid grid-cols-2 gap-2">
            <label className="text-xs font-medium text-neutral-800">
              Compare
              <select
                className="w-full rounded-md border border-neutral-400 px-2 py-1 text-sm"
                value={fromVersion ?? ""}
                onChange={(e) => setFrom(Number(e.target.value))}
              >
                {versions.map((v) => (
                  <option key={v.version} value={v.version}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </label>
            <label className="text-xs font-medium text-neutral-800">
              with
              <select
                className="w-full rounded-md border border-neutral-400 px-2 py-1 text-sm"
                value={to}
                onChange={(e) => setTo(Number(e.target.value))}
              >
                <option value={CURRENT}>{label(CURRENT)}</option>
                {versions.map((v) => (
                  <option key={v.version} value={v.version}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <div className="mt-2" data-testid="version-diff">
            {compare.isPending ? (
              <p className="text-xs text-neutral-700">Comparing…</p>
            ) : compare.isError ? (
              <p role="alert" className="text-xs text-red-800">
                {compare.error.message}
              </p>
            ) : compare.data.length === 0 ? (
              <p className="text-xs text-neutral-700">
                No differences between {label(fromVersion!)} and {label(to)}.
              </p>
            ) : (
              <ChangeList changes={compare.data} />
            )}
          </div>
        </>
      )}
    </section>
  );
}

function ChangeList({ changes }: { changes: MapChange[] }) {
  return (
    <ol className="space-y-2 text-xs">
      {changes.map((c, i) => (
        <li key={i} className="rounded border border-neutral-200 p-2">
          <p className="font-semibold text-neutral-900">
            {c.scope === "layer" ? `${LAYER_GUIDE[c.layer].label} · ` : ""}
            {FIELD_WORD[c.field] ?? c.field}
          </p>
          <p className="mt-0.5 whitespace-pre-wrap break-words text-red-900">
            <span className="font-medium">− </span>
            {c.before || "(empty)"}
          </p>
          <p className="whitespace-pre-wrap break-words text-emerald-900">
            <span className="font-medium">+ </span>
            {c.after || "(empty)"}
          </p>
        </li>
      ))}
    </ol>
  );
}
