/**
 * Reading custody maps: the tenant's list with progress, one map (its current draft or a published version),
 * and the Markdown / JSON export. Every role reads; runtime keys do not. Another tenant's map is `not_found`.
 */
import * as q from "@/db/queries/maps";
import { MAP_STATUSES, type MapStatus } from "@/db/schema/map-vocabulary";
import type { CustodyMapJson, MapListItem, MapView } from "@/lib/contract/maps";
import { authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { mapToMarkdown } from "./markdown";
import { checkMapId, loadMapView, mapJson, signoffOf } from "./shape";
import { adoptionSummary, mapProgress } from "./summary";
import type { VerbContext } from "../context";

/** The list's "needs attention" filters. */
export const MAP_ATTENTION = ["failed", "undecided", "evidence_requested", "unverified"] as const;
export type MapAttention = (typeof MAP_ATTENTION)[number];

export const MAX_MAPS_LISTED = 500;

/** The list's archive filter: archived maps are hidden unless asked for (decision 0046). */
export const MAP_ARCHIVED = ["exclude", "include", "only"] as const;

/**
 * The custody map each of `workflows` links to from the task list (decision 0049): its active map (not archived, a
 * published one before a draft, then the most recently changed). A workflow without one is absent: the list then
 * offers to start one.
 * @throws DomainError forbidden without `maps.read` (runtime keys).
 */
export async function activeMapsForWorkflows(
  { db, actor }: VerbContext,
  workflows: string[],
): Promise<Map<string, { id: string; title: string; status: MapStatus }>> {
  authorize(actor, "maps.read");
  const rows = await q.activeMapsOfWorkflows(db, actor.tenantId, [...new Set(workflows)].slice(0, MAX_MAPS_LISTED));
  return new Map(rows.map((r) => [r.workflow, { id: r.id, title: r.title, status: r.status }]));
}

/**
 * The tenant's maps, by workflow then most recently changed, each with its progress and recommendation.
 * @param opts.q part of the workflow or title (any case); `status` draft | published; `attention`: failed (a layer
 *   failed verification), undecided (a layer has no decision), evidence_requested, unverified (a layer not verified);
 *   `workflow` one workflow exactly; `archived` exclude (default) | include | only.
 * @throws DomainError forbidden, bad_request (an unknown status or attention value, naming the allowed ones).
 */
export async function listMapsForActor(
  { db, actor }: VerbContext,
  opts: {
    q?: string | null;
    status?: string | null;
    attention?: string | null;
    workflow?: string | null;
    archived?: string | null;
  } = {},
): Promise<{ maps: MapListItem[] }> {
  authorize(actor, "maps.read");
  const archived = opts.archived || "exclude";
  if (!(MAP_ARCHIVED as readonly string[]).includes(archived)) {
    throw new DomainError("bad_request", `archived must be one of ${MAP_ARCHIVED.join(", ")}.`, {
      fields: [{ path: "archived", message: MAP_ARCHIVED.join(" | ") }],
    });
  }
  const status = opts.status || undefined;
  if (status && !(MAP_STATUSES as readonly string[]).includes(status)) {
    throw new DomainError("bad_request", `status must be one of ${MAP_STATUSES.join(", ")}.`, {
      fields: [{ path: "status", message: MAP_STATUSES.join(" | ") }],
    });
  }
  const attention = opts.attention || undefined;
  if (attention && !(MAP_ATTENTION as readonly string[]).includes(attention)) {
    throw new DomainError("bad_request", `attention must be one of ${MAP_ATTENTION.join(", ")}.`, {
      fields: [{ path: "attention", message: MAP_ATTENTION.join(" | ") }],
    });
  }
  const text = opts.q?.trim().slice(0, 200) || undefined;
  const maps = await q.listMaps(db, actor.tenantId, {
    q: text,
    status: status as MapStatus | undefined,
    workflow: opts.workflow ? opts.workflow.slice(0, 200) : undefined,
    archived: archived as (typeof MAP_ARCHIVED)[number],
    limit: MAX_MAPS_LISTED,
  });
  const ids = maps.map((m) => m.id);
  const [layers, exercises] = await Promise.all([
    q.listLayersOfMaps(db, actor.tenantId, ids),
    q.countExercises(db, actor.tenantId, ids),
  ]);
  const byMap = new Map<string, q.LayerDbRow[]>();
  for (const l of layers) {
    const list = byMap.get(l.map_id) ?? [];
    list.push(l);
    byMap.set(l.map_id, list);
  }
  const items: MapListItem[] = [];
  for (const m of maps) {
    const rows = mapJson(m, byMap.get(m.id) ?? []).layers;
    if (!needsAttention(rows, attention as MapAttention | undefined)) continue;
    items.push({
      id: m.id,
      workflow: m.workflow,
      title: m.title,
      version: m.version,
      status: m.status,
      updated_at: m.updated_at,
      progress: mapProgress(rows),
      recommendation: adoptionSummary(rows).recommendation,
      exercises: exercises.get(m.id) ?? 0,
      archived_at: m.archived_at,
    });
  }
  return { maps: items };
}

/** True when the rows match the list's attention filter (always, without one). */
function needsAttention(rows: CustodyMapJson["layers"], attention: MapAttention | undefined): boolean {
  switch (attention) {
    case "failed":
      return rows.some((r) => r.verification === "failed");
    case "undecided":
      return rows.some((r) => r.decision === null);
    case "evidence_requested":
      return rows.some((r) => r.decision === "request_evidence");
    case "unverified":
      return rows.some((r) => r.verification !== "verified");
    default:
      return true;
  }
}

/** Reads a `version` query value: absent, or a whole number ≥ 1. @throws DomainError bad_request */
export function versionParam(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new DomainError(
      "bad_request",
      `version must be a whole number from 1 (a published version); got ${JSON.stringify(String(raw).slice(0, 20))}.`,
      {
        fields: [{ path: "version", message: "a whole number ≥ 1" }],
      },
    );
  }
  return n;
}

/**
 * One map: the current draft (or latest published version) with summary, progress and published versions; or,
 * with `version`, that published version as it was frozen (same shape, status `published`).
 * @throws DomainError forbidden, not_found (no such map in this tenant, or no such published version).
 */
export async function getMapView(
  { db, actor }: VerbContext,
  { mapId, ...opts }: { mapId: string; version?: number },
): Promise<MapView> {
  authorize(actor, "maps.read");
  checkMapId(mapId);
  const m = await q.findMap(db, actor.tenantId, mapId);
  if (!m) throw notFound("Custody map");
  const view = await loadMapView(db, actor.tenantId, m);
  if (opts.version === undefined) return view;
  const frozen = await q.findVersionSnapshot(db, actor.tenantId, mapId, opts.version);
  if (!frozen) {
    const published = view.versions.map((v) => v.version);
    throw new DomainError(
      "not_found",
      `Version ${opts.version} of this map was never published${published.length ? `; published versions: ${published.join(", ")}` : "; it has no published version yet"}.`,
    );
  }
  const json = frozen as unknown as CustodyMapJson;
  const signoff = signoffOf(await q.listVersions(db, actor.tenantId, mapId), opts.version);
  const { signoff: _current, ...rest } = view;
  return {
    ...rest,
    ...json,
    ...(signoff ? { signoff } : {}),
    summary: adoptionSummary(json.layers),
    progress: mapProgress(json.layers),
  };
}

export type MapExport = { filename: string; contentType: string; body: string };

/**
 * The export of a map (current, or a published `version`): `json` is exactly `{id, workflow, title, version,
 * status, layers}` (what `POST /api/v1/maps/import` takes back); `md` is a Markdown document.
 * @throws DomainError forbidden, not_found, bad_request (format other than md or json).
 */
export async function exportMap(
  { db, actor }: VerbContext,
  { mapId, format, ...opts }: { mapId: string; format: string | null; version?: number },
): Promise<MapExport> {
  if (format !== "md" && format !== "json") {
    authorize(actor, "maps.read");
    throw new DomainError(
      "bad_request",
      `format must be md or json (got ${JSON.stringify(String(format ?? "").slice(0, 20))}).`,
      {
        fields: [{ path: "format", message: "md | json" }],
      },
    );
  }
  const view = await getMapView({ db, actor }, { mapId, ...opts });
  const json: CustodyMapJson = {
    id: view.id,
    workflow: view.workflow,
    title: view.title,
    version: view.version,
    status: view.status,
    ...(view.signoff ? { signoff: view.signoff } : {}),
    layers: view.layers,
  };
  const slug =
    view.workflow
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || "map";
  const base = `custody-map-${slug}-v${view.version}`;
  if (format === "json") {
    return {
      filename: `${base}.json`,
      contentType: "application/json; charset=utf-8",
      body: `${JSON.stringify(json, null, 2)}\n`,
    };
  }
  return {
    filename: `${base}.md`,
    contentType: "text/markdown; charset=utf-8",
    body: mapToMarkdown(json, { exportedAt: new Date().toISOString() }),
  };
}
