import type { Metadata } from "next";
import Link from "next/link";
import { can } from "@/lib/domain/authz";
import { DomainError } from "@/lib/domain/errors";
import { listMapsForActor } from "@/lib/domain/maps/read";
import { requirePageContext } from "@/lib/server/page-actor";
import { MapStatusBadge, ProgressFigure, RecommendationBadge } from "@/components/maps/badges";
import { ImportMapForm, NewMapForm } from "@/components/maps/MapForms";
import { Time } from "@/components/ui/time";
import type { MapListItem } from "@/lib/contract/maps";

export const metadata: Metadata = { title: "Custody maps" };

type SP = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);

/**
 * The tenant's workflows and their custody maps, with progress per map (layers with a named custodian, verified,
 * decided) and filters by text, status, what needs attention, archive (archived maps are hidden unless asked
 * for; when they hide every match, the empty state says so) and one workflow (`workflow`, the task list's link for a
 * workflow without a map). Owners and admins start or import a map here; importing a map of a workflow that has one offers to take it
 * as that map's next version.
 */
export default async function MapsPage({ searchParams }: { searchParams: Promise<SP> }) {
  const ctx = await requirePageContext();
  const { actor } = ctx;
  const sp = await searchParams;
  const q = one(sp.q) ?? "";
  const status = one(sp.status) ?? "";
  const attention = one(sp.attention) ?? "";
  const archived = one(sp.archived) ?? "";
  // One workflow exactly: where a task's Workflow column sends a workflow that has no map yet (decision 0049).
  const workflow = one(sp.workflow)?.trim() ?? "";
  const canEdit = can(actor, "maps.edit");
  let maps: MapListItem[] = [];
  // Maps the archive filter hid: when it hid every match, the empty state says so and offers to show them.
  let hiddenArchived = 0;
  let error: string | null = null;
  try {
    maps = (await listMapsForActor(ctx, { q, status, attention, archived, workflow })).maps;
    if (maps.length === 0 && !archived) {
      hiddenArchived = (await listMapsForActor(ctx, { q, status, attention, archived: "only", workflow })).maps.length;
    }
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    error = err.message;
  }
  const filtered = Boolean(q || status || attention || archived || workflow);
  const withArchived = () => {
    const p = new URLSearchParams();
    if (q) p.set("q", q);
    if (status) p.set("status", status);
    if (attention) p.set("attention", attention);
    if (workflow) p.set("workflow", workflow);
    p.set("archived", "include");
    return `/maps?${p.toString()}`;
  };
  const byWorkflow = new Map<string, MapListItem[]>();
  for (const m of maps) byWorkflow.set(m.workflow, [...(byWorkflow.get(m.workflow) ?? []), m]);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="max-w-2xl">
          <h1 className="text-xl font-semibold">Custody maps</h1>
          <p className="text-sm text-neutral-700">
            For each workflow: who holds each layer of a long run, what evidence is kept, how work is recovered and
            exported, and what was decided. Prove a map by interrupting a disposable run.
          </p>
        </div>
        <form className="flex flex-wrap items-end gap-2" role="search" action="/maps">
          <div>
            <label htmlFor="maps-q" className="block text-xs font-medium text-neutral-700">
              Workflow or title
            </label>
            <input
              id="maps-q"
              name="q"
              defaultValue={q}
              className="w-56 max-w-full rounded-md border border-neutral-400 px-2 py-1.5 text-sm"
            />
          </div>
          <div>
            <label htmlFor="maps-status" className="block text-xs font-medium text-neutral-700">
              Status
            </label>
            <select
              id="maps-status"
              name="status"
              defaultValue={status}
              className="rounded-md border border-neutral-400 px-2 py-1.5 text-sm"
            >
              <option value="">any</option>
              <option value="draft">draft</option>
              <option value="published">published</option>
            </select>
          </div>
          <div>
            <label htmlFor="maps-attention" className="block text-xs font-medium text-neutral-700">
              Needs attention
            </label>
            <select
              id="maps-attention"
              name="attention"
              defaultValue={attention}
              className="rounded-md border border-neutral-400 px-2 py-1.5 text-sm"
            >
              <option value="">any map</option>
              <option value="failed">a layer failed verification</option>
              <option value="undecided">a layer is undecided</option>
              <option value="evidence_requested">evidence requested</option>
              <option value="unverified">a layer not verified</option>
            </select>
          </div>
          <div>
            <label htmlFor="maps-archived" className="block text-xs font-medium text-neutral-700">
              Archived maps
            </label>
            <select
              id="maps-archived"
              name="archived"
              defaultValue={archived}
              className="rounded-md border border-neutral-400 px-2 py-1.5 text-sm"
            >
              <option value="">hidden</option>
              <option value="include">shown too</option>
              <option value="only">only archived</option>
            </select>
          </div>
          {workflow ? <input type="hidden" name="workflow" value={workflow} /> : null}
          <button className="rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white">Filter</button>
          {filtered ? (
            <Link href="/maps" className="px-2 py-1.5 text-sm text-neutral-800 underline">
              Clear
            </Link>
          ) : null}
        </form>
      </div>

      {canEdit ? (
        <div className="grid gap-3 lg:grid-cols-2">
          <NewMapForm key={workflow} initialWorkflow={workflow} />
          <ImportMapForm />
        </div>
      ) : (
        <p className="text-sm text-neutral-700">
          Your role ({actor.role}) can read custody maps; owners and admins write and test them.
        </p>
      )}

      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
          {error}{" "}
          <Link href="/maps" className="underline">
            Start again
          </Link>
        </p>
      ) : maps.length === 0 ? (
        <div
          className="rounded-lg border border-dashed border-neutral-400 bg-white p-8 text-sm text-neutral-800"
          data-testid="maps-empty"
        >
          {hiddenArchived > 0 ? (
            <>
              <h2 className="text-base font-semibold text-neutral-900">
                {filtered
                  ? `Every map that matches is archived (${hiddenArchived})`
                  : `All custody maps are archived (${hiddenArchived})`}
              </h2>
              <p className="mt-2">
                Archived maps are hidden from this list.{" "}
                <Link href={withArchived()} className="underline" data-testid="maps-show-archived">
                  Show archived maps
                </Link>
                {canEdit
                  ? workflow
                    ? `, or start a new map for workflow ${workflow} above.`
                    : ", or start a new map above."
                  : "."}
              </p>
            </>
          ) : workflow && !q && !status && !attention ? (
            <>
              <h2 className="text-base font-semibold text-neutral-900">
                No custody map for workflow <span className="font-mono">{workflow}</span> yet
              </h2>
              <p className="mt-2">
                {canEdit
                  ? "Start one above: the workflow is filled in. Give it a title, then fill the eight layers."
                  : "An owner or admin starts one for this workflow; it appears here for everyone to read."}{" "}
                <Link href="/maps" className="underline">
                  Show all maps
                </Link>
                .
              </p>
            </>
          ) : filtered ? (
            <>
              No map matches these filters.{" "}
              <Link href="/maps" className="underline">
                Show all maps
              </Link>
              .
            </>
          ) : (
            <>
              <h2 className="text-base font-semibold text-neutral-900">No custody maps yet</h2>
              <p className="mt-2">
                {canEdit
                  ? "Start one above for a workflow you are about to give more duration or permissions: name its workflow, then fill the eight layers."
                  : "An owner or admin starts one for each workflow; it appears here for everyone to read."}
              </p>
            </>
          )}
        </div>
      ) : (
        <div className="space-y-4">
          {[...byWorkflow].map(([workflow, list]) => (
            <section
              key={workflow}
              aria-label={`Workflow ${workflow}`}
              className="rounded-lg border border-neutral-200 bg-white"
            >
              <h2 className="border-b border-neutral-200 bg-neutral-50 px-3 py-2 text-sm font-semibold">
                <span className="text-neutral-700">Workflow</span> <span className="font-mono">{workflow}</span>
              </h2>
              <ul>
                {list.map((m) => (
                  <li
                    key={m.id}
                    className="flex flex-wrap items-center gap-x-6 gap-y-2 border-b border-neutral-100 px-3 py-2.5 last:border-0"
                    data-testid="map-row"
                  >
                    <div className="min-w-60 flex-1">
                      <Link
                        href={`/maps/${m.id}`}
                        className="font-medium text-sky-800 underline-offset-2 hover:underline"
                        data-testid="map-link"
                      >
                        {m.title}
                      </Link>
                      <div className="mt-0.5 flex flex-wrap items-center gap-2 text-xs text-neutral-700">
                        <MapStatusBadge status={m.status} version={m.version} />
                        {m.archived_at ? (
                          <span
                            className="inline-flex items-center gap-1 rounded-full border border-neutral-400 bg-neutral-100 px-2 py-0.5 text-xs font-medium text-neutral-800"
                            data-testid="map-archived"
                          >
                            <span aria-hidden="true">▣</span> archived
                          </span>
                        ) : null}
                        <span>
                          changed <Time iso={m.updated_at} />
                        </span>
                        <span>
                          {m.exercises} {m.exercises === 1 ? "exercise" : "exercises"}
                        </span>
                      </div>
                    </div>
                    <div className="flex flex-wrap gap-4" data-testid="map-progress">
                      <ProgressFigure
                        label="custodians named"
                        n={m.progress.custodians_named}
                        total={m.progress.total}
                      />
                      <ProgressFigure label="verified" n={m.progress.verified} total={m.progress.total} />
                      <ProgressFigure label="decided" n={m.progress.decided} total={m.progress.total} />
                    </div>
                    <div className="flex items-center gap-2">
                      {m.progress.failed ? (
                        <span className="inline-flex items-center gap-1 rounded-full border border-red-300 bg-red-50 px-2 py-0.5 text-xs font-medium text-red-800">
                          <span aria-hidden="true">✕</span>
                          {m.progress.failed} failed
                        </span>
                      ) : null}
                      <RecommendationBadge value={m.recommendation} />
                    </div>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}
    </div>
  );
}
