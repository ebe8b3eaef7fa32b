"use client";

/**
 * The custody-map page: header (title — renamed in place —, workflow, version and status, publish, export, print,
 * archive), the adoption summary with the overall recommendation and the sign-off of the latest published version,
 * the grid of the eight layers at a glance, the eight rows (LayerEditor) each with its assignee, evidence items and
 * comments, the map's interruption exercises, and its published versions with a comparison. Each row saves itself;
 * the header adds up their save states. Publishing a map whose summary says "hold" asks first (decision 0046).
 */
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useMemo, useState } from "react";
import type { Role } from "@/db/schema/enums";
import { mapApi, type LayerSaveResult } from "@/lib/client/maps";
import type { AdoptionSummary, ExerciseListItem, LayerRow, MapLayer, MapProgress, MapView } from "@/lib/contract/maps";
import { Time } from "@/components/ui/time";
import { MapStatusBadge, OutcomeBadge, ProgressFigure, RecommendationBadge } from "./badges";
import { ConfirmDialog } from "./ConfirmDialog";
import { LayerEditor } from "./LayerEditor";
import { LayerGrid } from "./LayerGrid";
import { LayerWorkPanel } from "./LayerWork";
import { MapTitle } from "./MapTitle";
import { SignoffPanel } from "./SignoffPanel";
import type { SaveState } from "./useAutosave";
import { VersionsPanel } from "./VersionsPanel";

export function MapWorksheet({
  initial,
  exercises,
  canEdit,
  canSignOff,
  canComment,
  role,
  me,
  members,
}: {
  initial: MapView;
  exercises: ExerciseListItem[];
  canEdit: boolean;
  canSignOff: boolean;
  canComment: boolean;
  role: Role;
  /** The signed-in person's email (the sign-off panel says when they are the last editor). */
  me: string;
  /** Emails of the workspace's active members (the assignee choices). */
  members: string[];
}) {
  const router = useRouter();
  const [head, setHead] = useState({ version: initial.version, status: initial.status });
  const [rows, setRows] = useState<Record<MapLayer, LayerRow>>(
    () => Object.fromEntries(initial.layers.map((r) => [r.layer, r])) as Record<MapLayer, LayerRow>,
  );
  const [archived, setArchived] = useState({ at: initial.archived_at, by: initial.archived_by });
  const [confirm, setConfirm] = useState<"publish" | "archive" | null>(null);
  const [archiveError, setArchiveError] = useState<string | null>(null);
  const [summary, setSummary] = useState<AdoptionSummary>(initial.summary);
  const [progress, setProgress] = useState<MapProgress>(initial.progress);
  const [versions, setVersions] = useState(initial.versions);
  const [states, setStates] = useState<Partial<Record<MapLayer, SaveState>>>({});
  const [publishing, setPublishing] = useState(false);
  const [publishError, setPublishError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const onSaved = useCallback((res: LayerSaveResult) => {
    setHead({ version: res.map.version, status: res.map.status });
    setRows((prev) => ({ ...prev, [res.row.layer]: res.row }));
    setSummary(res.summary);
    setProgress(res.progress);
    if (res.map.new_draft)
      setNotice(
        `Version ${res.map.version - 1} stays published as it was; your edits start draft v${res.map.version}.`,
      );
  }, []);
  const onState = useCallback(
    (layer: MapLayer, s: SaveState) =>
      setStates((prev) => (prev[layer]?.kind === s.kind && s.kind !== "saved" ? prev : { ...prev, [layer]: s })),
    [],
  );

  const overall = useMemo(() => {
    const list = Object.values(states);
    if (list.some((s) => s.kind === "conflict" || s.kind === "invalid" || s.kind === "error")) {
      const n = list.filter((s) => s.kind === "conflict" || s.kind === "invalid" || s.kind === "error").length;
      return { kind: "problem" as const, text: `${n} ${n === 1 ? "row is" : "rows are"} not saved` };
    }
    if (list.some((s) => s.kind === "saving" || s.kind === "dirty")) return { kind: "busy" as const, text: "Saving…" };
    return { kind: "ok" as const, text: "All changes saved" };
  }, [states]);

  const publish = async () => {
    setPublishing(true);
    setPublishError(null);
    try {
      const view = await mapApi.publish(initial.id);
      setConfirm(null);
      setHead({ version: view.version, status: view.status });
      setVersions(view.versions);
      setNotice(`Version ${view.version} is published and frozen. Further edits start draft v${view.version + 1}.`);
    } catch (err) {
      setConfirm(null);
      setPublishError(err instanceof Error ? err.message : String(err));
    } finally {
      setPublishing(false);
    }
  };
  const askPublish = () => (summary.recommendation === "hold" ? setConfirm("publish") : void publish());
  const toggleArchive = async (to: boolean) => {
    setArchiveError(null);
    try {
      const view = await mapApi.update(initial.id, { archived: to });
      setArchived({ at: view.archived_at, by: view.archived_by });
      setConfirm(null);
      router.refresh();
    } catch (err) {
      setArchiveError(err instanceof Error ? err.message : String(err));
    }
  };
  const layerRows = initial.layers.map((r) => rows[r.layer]);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-xs text-neutral-700">
            <Link href="/maps" className="underline">
              Custody maps
            </Link>{" "}
            / workflow <span className="font-mono">{initial.workflow}</span>
          </p>
          <MapTitle mapId={initial.id} initial={initial.title} canEdit={canEdit} />
          <div className="mt-1 flex flex-wrap items-center gap-2 text-xs text-neutral-700">
            <MapStatusBadge status={head.status} version={head.version} />
            {archived.at ? (
              <span
                className="inline-flex items-center gap-1 rounded-full border border-neutral-400 bg-neutral-100 px-2 py-0.5 text-xs font-medium text-neutral-800"
                data-testid="archived-badge"
              >
                <span aria-hidden="true">▣</span> archived by {archived.by}, <Time iso={archived.at} />
              </span>
            ) : null}
            <span>started by {initial.created_by}</span>
            {canEdit ? (
              <span
                className={`font-medium print:hidden ${overall.kind === "problem" ? "text-red-800" : overall.kind === "busy" ? "text-neutral-700" : "text-emerald-800"}`}
                role="status"
                aria-live="polite"
                data-testid="map-save-state"
                data-state={overall.kind}
              >
                <span aria-hidden="true">
                  {overall.kind === "problem" ? "✕ " : overall.kind === "busy" ? "↻ " : "✔ "}
                </span>
                {overall.text}
              </span>
            ) : null}
          </div>
        </div>
        <div className="flex flex-wrap items-center gap-2 print:hidden">
          <button
            type="button"
            className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-neutral-100"
            onClick={() => window.print()}
          >
            Print or PDF
          </button>
          <a
            href={`/api/v1/maps/${initial.id}/export?format=md`}
            className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-neutral-100"
            download
          >
            Export Markdown
          </a>
          <a
            href={`/api/v1/maps/${initial.id}/export?format=json`}
            className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-neutral-100"
            download
          >
            Export JSON
          </a>
          {canEdit ? (
            <button
              type="button"
              className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60"
              disabled={publishing || head.status === "published" || overall.kind !== "ok"}
              title={head.status === "published" ? "Nothing changed since this version was published" : undefined}
              onClick={askPublish}
            >
              {publishing
                ? "Publishing…"
                : head.status === "published"
                  ? `v${head.version} published`
                  : `Publish v${head.version}`}
            </button>
          ) : null}
          {canEdit ? (
            <button
              type="button"
              className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-neutral-100"
              onClick={() => (archived.at ? void toggleArchive(false) : setConfirm("archive"))}
            >
              {archived.at ? "Restore from archive" : "Archive"}
            </button>
          ) : null}
        </div>
      </div>
      {archiveError && confirm === null ? (
        <p role="alert" className="text-sm text-red-800">
          {archiveError}
        </p>
      ) : null}
      <ConfirmDialog
        open={confirm === "publish"}
        title={`Publish v${head.version} although the summary says hold?`}
        confirmLabel={`Publish v${head.version} on hold`}
        busy={publishing}
        onConfirm={() => void publish()}
        onClose={() => setConfirm((c) => (c === "publish" ? null : c))}
        testId="publish-hold-dialog"
      >
        <p>{summary.headline}</p>
        <p>
          Publishing freezes this version as the team&apos;s record with the recommendation <strong>hold</strong>. A
          reviewer who did not edit it last then signs it off.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirm === "archive"}
        title={`Archive ${initial.title}?`}
        confirmLabel="Archive map"
        error={archiveError}
        onConfirm={() => void toggleArchive(true)}
        onClose={() => setConfirm((c) => (c === "archive" ? null : c))}
        testId="archive-dialog"
      >
        <p>
          The map leaves the list of custody maps (its filter &ldquo;archived&rdquo; shows it). Its rows, versions,
          sign-offs and exercises stay, and it still opens at this address.
        </p>
      </ConfirmDialog>
      {publishError ? (
        <p role="alert" className="text-sm text-red-800">
          {publishError}
        </p>
      ) : null}
      {notice ? (
        <p
          role="status"
          className="rounded-md border print:hidden border-neutral-300 bg-neutral-50 px-3 py-2 text-sm text-neutral-800"
        >
          {notice}
        </p>
      ) : null}
      {!canEdit ? (
        <p
          className="rounded-md border border-neutral-300 bg-neutral-50 px-3 py-2 text-sm text-neutral-800 print:hidden"
          data-testid="read-only-note"
        >
          Your role ({role}) can read this map; owners and admins edit it and record exercises.
        </p>
      ) : null}

      <section
        aria-labelledby="summary-h"
        className="rounded-lg border border-neutral-200 bg-white p-3"
        data-testid="adoption-summary"
      >
        <div className="flex flex-wrap items-center justify-between gap-3">
          <div className="min-w-0">
            <h2 id="summary-h" className="text-sm font-semibold">
              Adoption summary
            </h2>
            <p className="mt-1 flex flex-wrap items-center gap-2 text-sm">
              <RecommendationBadge value={summary.recommendation} large />
              <span data-testid="summary-headline">{summary.headline}</span>
            </p>
            <p className="mt-1 text-sm text-neutral-800" data-testid="summary-export">
              {summary.export_line}
            </p>
          </div>
          <dl className="flex flex-wrap gap-4 text-sm">
            {[
              ["Accepted", summary.accepted],
              ["Constrained", summary.constrained],
              ["Evidence requested", summary.evidence_requested],
              ["Undecided", summary.undecided],
            ].map(([k, v]) => (
              <div key={k} className="text-center">
                <dt className="text-xs text-neutral-700">{k}</dt>
                <dd
                  className="text-lg font-semibold tabular-nums"
                  data-testid={`summary-${String(k).toLowerCase().replace(" ", "-")}`}
                >
                  {v}
                </dd>
              </div>
            ))}
          </dl>
        </div>
        {summary.reasons.length ? (
          <ul className="mt-2 list-disc space-y-0.5 pl-5 text-sm text-neutral-800">
            {summary.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        ) : null}
        <div className="mt-3 flex flex-wrap gap-4">
          <ProgressFigure label="custodians named" n={progress.custodians_named} total={progress.total} />
          <ProgressFigure label="verified" n={progress.verified} total={progress.total} />
          <ProgressFigure label="decided" n={progress.decided} total={progress.total} />
        </div>
      </section>

      <SignoffPanel
        mapId={initial.id}
        versions={versions}
        status={head.status}
        me={me}
        canSignOff={canSignOff}
        onSigned={(v) => setVersions(v.versions)}
      />

      <LayerGrid rows={layerRows} />

      <div className="grid gap-4 2xl:grid-cols-[1fr_20rem]">
        <div className="min-w-0 space-y-3" data-testid="worksheet">
          <h2 className="sr-only">Worksheet</h2>
          {initial.layers.map((row) => (
            <LayerEditor
              key={row.layer}
              mapId={initial.id}
              initial={row}
              exercises={exercises}
              canEdit={canEdit}
              onSaved={onSaved}
              onState={onState}
              footer={
                <LayerWorkPanel
                  mapId={initial.id}
                  layer={row.layer}
                  initial={initial.work[row.layer]}
                  exercises={exercises}
                  members={members}
                  canEdit={canEdit}
                  canComment={canComment}
                />
              }
            />
          ))}
        </div>
        <aside className="space-y-4 print:hidden">
          <section
            aria-labelledby="exercises-h"
            className="rounded-lg border border-neutral-200 bg-white p-3"
            data-testid="exercises"
          >
            <div className="flex items-center justify-between gap-2">
              <h2 id="exercises-h" className="text-sm font-semibold">
                Interruption exercises
              </h2>
              {canEdit ? (
                <Link
                  href={`/maps/${initial.id}/exercises/new`}
                  className="rounded-md bg-neutral-900 px-2.5 py-1 text-xs font-medium text-white"
                >
                  New exercise
                </Link>
              ) : null}
            </div>
            {exercises.length === 0 ? (
              <p className="mt-2 text-sm text-neutral-700">
                None yet. An exercise interrupts a disposable run at one point and records what happened; completing it
                sets the verification of the layers it covered.
              </p>
            ) : (
              <ul className="mt-2 space-y-2">
                {exercises.map((x) => (
                  <li key={x.id} className="text-sm">
                    <Link
                      href={`/maps/${initial.id}/exercises/${x.id}`}
                      className="font-medium text-sky-800 underline"
                      data-testid="exercise-link"
                    >
                      {x.interruption_point}
                    </Link>
                    <div className="mt-0.5 flex flex-wrap items-center gap-2 text-xs text-neutral-700">
                      <OutcomeBadge value={x.status === "completed" ? x.outcome : null} />
                      <span>{x.layers.length} layers</span>
                      <Time iso={x.completed_at ?? x.updated_at} />
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <VersionsPanel
            mapId={initial.id}
            versions={versions}
            currentVersion={head.version}
            currentStatus={head.status}
          />
        </aside>
      </div>
    </div>
  );
}
