/**
 * react-query keys and hooks for the dashboard.
 */
"use client";

import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { apiFetch } from "./api";
import type { ArtifactPreview, ArtifactView, CheckpointPage, GateVerdict, TaskView } from "@/lib/contract/api";

/** Query-key factory: one place that names every cached query. */
export const keys = {
  task: (taskId: string) => ["task", taskId] as const,
  timeline: (taskId: string) => ["task", taskId, "timeline"] as const,
  checkpoints: (taskId: string) => ["task", taskId, "checkpoints"] as const,
  artifacts: (taskId: string) => ["task", taskId, "artifacts"] as const,
  artifact: (taskId: string, sha256: string) => ["task", taskId, "artifacts", sha256] as const,
  gate: (taskId: string) => ["task", taskId, "gate"] as const,
};

const enc = encodeURIComponent;

/**
 * The task view, refreshed every `refetchMs` (false: not refreshed). `refetchMs` may be a function of the latest
 * view, so that polling follows the task (e.g. stops once the run has ended and nothing waits on a person).
 */
export function useTask(
  taskId: string,
  initialData: TaskView | undefined,
  refetchMs: number | false | ((task: TaskView | undefined) => number | false),
) {
  return useQuery({
    queryKey: keys.task(taskId),
    queryFn: () => apiFetch<TaskView>(`/api/v1/tasks/${enc(taskId)}`),
    initialData,
    refetchInterval: typeof refetchMs === "function" ? (query) => refetchMs(query.state.data) : refetchMs,
  });
}

/**
 * Checkpoint history with records, newest first, one page of 50 at a time (`fetchNextPage` for older ones). Fetched again
 * when the task's checkpoint `version` (from the polled task view) changes, so the final checkpoint is never missed.
 */
export function useCheckpoints(taskId: string, version: number) {
  return useInfiniteQuery({
    queryKey: [...keys.checkpoints(taskId), version],
    queryFn: ({ pageParam }) =>
      apiFetch<CheckpointPage>(
        `/api/v1/tasks/${enc(taskId)}/checkpoints?limit=50${pageParam ? `&cursor=${enc(pageParam)}` : ""}`,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
  });
}

/**
 * Artifacts with sha256 (checkpoints list them). Fetched again when the task's checkpoint `version` (from the polled
 * task view) moves, like the timeline with the event count; the previous list stays on screen meanwhile.
 */
export function useArtifacts(taskId: string, version: number) {
  return useQuery({
    queryKey: [...keys.artifacts(taskId), version],
    queryFn: async () =>
      (await apiFetch<{ artifacts: ArtifactView[] }>(`/api/v1/tasks/${enc(taskId)}/artifacts`)).artifacts,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
  });
}

/** One artifact's preview (decision 0045), fetched when a viewer opens; bytes under a digest never change. */
export function useArtifactPreview(taskId: string, sha256: string) {
  return useQuery({
    queryKey: keys.artifact(taskId, sha256),
    queryFn: () => apiFetch<ArtifactPreview>(`/api/v1/tasks/${enc(taskId)}/artifacts/${enc(sha256)}`),
    staleTime: 60_000,
  });
}

/**
 * The gate's verdict as another part of the page already holds it ({@link useGate}'s cache), kept current with it;
 * never asks the server itself (a person's look is not an ask). Undefined until the verdict is there.
 */
export function useGateIfKnown(taskId: string): GateVerdict | undefined {
  return useQuery({
    queryKey: keys.gate(taskId),
    queryFn: () => apiFetch<GateVerdict>(`/api/v1/tasks/${enc(taskId)}/resume`, { method: "POST", body: {} }),
    enabled: false,
  }).data;
}

/** The resume-gate verdict as the runtime would get it now (asking the gate writes nothing). */
export function useGate(taskId: string, initialData: GateVerdict | undefined, refetchMs: number | false) {
  return useQuery({
    queryKey: keys.gate(taskId),
    queryFn: () => apiFetch<GateVerdict>(`/api/v1/tasks/${enc(taskId)}/resume`, { method: "POST", body: {} }),
    initialData,
    refetchInterval: refetchMs,
  });
}
