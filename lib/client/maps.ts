/**
 * Browser calls of the custody-map API (session cookie) and the react-query keys of map pages.
 */
"use client";

import { apiFetch } from "./api";
import type {
  EvidenceItem,
  EvidenceItemKind,
  ExerciseJson,
  ExerciseListItem,
  ExerciseView,
  LayerComment,
  LayerRow,
  MapLayer,
  MapListItem,
  MapView,
} from "@/lib/contract/maps";
import type { TaskList } from "@/lib/contract/api";

const enc = encodeURIComponent;

export const mapKeys = {
  map: (mapId: string) => ["map", mapId] as const,
  version: (mapId: string, version: number) => ["map", mapId, "version", version] as const,
  exercises: (mapId: string) => ["map", mapId, "exercises"] as const,
  exercise: (mapId: string, exerciseId: string) => ["map", mapId, "exercise", exerciseId] as const,
  taskSearch: (q: string) => ["tasks", "search", q] as const,
};

export type LayerSaveResult = {
  row: LayerRow;
  map: { id: string; version: number; status: "draft" | "published"; new_draft: boolean };
  summary: MapView["summary"];
  progress: MapView["progress"];
  changed: boolean;
};

export const mapApi = {
  get: (mapId: string) => apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}`),
  version: (mapId: string, version: number) => apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}?version=${version}`),
  create: (body: { workflow: string; title: string }) => apiFetch<MapView>("/api/v1/maps", { method: "POST", body }),
  import: (doc: unknown) => apiFetch<MapView>("/api/v1/maps/import", { method: "POST", body: doc }),
  saveLayer: (
    mapId: string,
    layer: MapLayer,
    body: Partial<Omit<LayerRow, "layer" | "revision">> & { revision: number },
  ) => apiFetch<LayerSaveResult>(`/api/v1/maps/${enc(mapId)}/layers/${layer}`, { method: "PATCH", body }),
  publish: (mapId: string) => apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}/publish`, { method: "POST", body: {} }),
  exercises: async (mapId: string) =>
    (await apiFetch<{ exercises: ExerciseListItem[] }>(`/api/v1/maps/${enc(mapId)}/exercises`)).exercises,
  createExercise: (mapId: string, body: { interruption_point: string; layers: MapLayer[] }) =>
    apiFetch<ExerciseJson>(`/api/v1/maps/${enc(mapId)}/exercises`, { method: "POST", body }),
  exercise: (mapId: string, exerciseId: string) =>
    apiFetch<ExerciseView>(`/api/v1/maps/${enc(mapId)}/exercises/${enc(exerciseId)}`),
  saveExercise: (mapId: string, exerciseId: string, body: Record<string, unknown> & { revision: number }) =>
    apiFetch<ExerciseJson>(`/api/v1/maps/${enc(mapId)}/exercises/${enc(exerciseId)}`, { method: "PATCH", body }),
  completeExercise: (mapId: string, exerciseId: string, body: { outcome: string; finding: string; revision: number }) =>
    apiFetch<{
      exercise: ExerciseJson;
      layers: LayerRow[];
      map: { id: string; version: number; status: string; new_draft: boolean };
    }>(`/api/v1/maps/${enc(mapId)}/exercises/${enc(exerciseId)}/complete`, { method: "POST", body }),
  /** Builds, verifies and records the export step's task bundle (decision 0038). */
  exportExerciseStep: (mapId: string, exerciseId: string) =>
    apiFetch<{ exercise: ExerciseJson; first_failure: { check: string; message: string } | null }>(
      `/api/v1/maps/${enc(mapId)}/exercises/${enc(exerciseId)}/export`,
      { method: "POST" },
    ),
  /** Rename and/or archive (decision 0046). */
  update: (mapId: string, body: { title?: string; archived?: boolean }) =>
    apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}`, { method: "PATCH", body }),
  signOff: (mapId: string, body: { version: number; note?: string }) =>
    apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}/signoff`, { method: "POST", body }),
  /** The maps of one workflow, archived ones included (to offer importing as a new version). */
  ofWorkflow: async (workflow: string) =>
    (await apiFetch<{ maps: MapListItem[] }>(`/api/v1/maps?archived=include&workflow=${enc(workflow)}`)).maps,
  importVersion: (mapId: string, doc: unknown) =>
    apiFetch<MapView>(`/api/v1/maps/${enc(mapId)}/import`, { method: "POST", body: doc }),
  addEvidence: (mapId: string, layer: MapLayer, body: { kind: EvidenceItemKind; ref: string; note?: string }) =>
    apiFetch<EvidenceItem>(`/api/v1/maps/${enc(mapId)}/layers/${layer}/evidence`, { method: "POST", body }),
  removeEvidence: (mapId: string, layer: MapLayer, id: string) =>
    apiFetch<{ removed: EvidenceItem }>(`/api/v1/maps/${enc(mapId)}/layers/${layer}/evidence/${enc(id)}`, {
      method: "DELETE",
    }),
  setAssignee: (mapId: string, layer: MapLayer, assignee: string | null) =>
    apiFetch<{ assignee: string | null }>(`/api/v1/maps/${enc(mapId)}/layers/${layer}/assignee`, {
      method: "PUT",
      body: { assignee },
    }),
  addComment: (mapId: string, layer: MapLayer, text: string) =>
    apiFetch<LayerComment>(`/api/v1/maps/${enc(mapId)}/layers/${layer}/comments`, { method: "POST", body: { text } }),
  searchTasks: async (q: string) => (await apiFetch<TaskList>(`/api/v1/tasks?limit=8&q=${enc(q)}`)).tasks,
};

/** `{path: message}` from a 422's `details.fields`, for showing each message next to its field. */
export function fieldErrors(details: unknown): Record<string, string> {
  const fields = (details as { fields?: Array<{ path?: string; message?: string }> } | undefined)?.fields ?? [];
  const out: Record<string, string> = {};
  for (const f of fields) if (f.path && f.message && !(f.path in out)) out[f.path] = f.message;
  return out;
}
