"use client";

/**
 * Accept a tool's changed definition (decision 0033): the button beside a `tool_definition_changed` reason, for a
 * person who may (`tools.accept`). It sends the digest the reason names, so a definition that changed again since the
 * page was read is refused (409) rather than accepted unseen.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError, apiFetch } from "@/lib/client/api";

const enc = encodeURIComponent;

/** The tool and new digest a `tool_definition_changed` reason's target names, or null. */
export function toolOfTarget(target: string): { tool: string; digest: string } | null {
  const query = target.split("?")[1];
  if (!query) return null;
  const params = new URLSearchParams(query);
  const tool = params.get("tool");
  const digest = params.get("definition_digest");
  return tool && digest ? { tool, digest } : null;
}

/** "Accept new definition" for one tool of a task; refreshes the task and the gate when done. */
export function AcceptToolButton({ taskId, tool, digest }: { taskId: string; tool: string; digest: string }) {
  const qc = useQueryClient();
  const accept = useMutation({
    mutationFn: () =>
      apiFetch(`/api/v1/tasks/${enc(taskId)}/tool-definitions/${enc(tool)}/accept`, {
        method: "POST",
        body: { definition_digest: digest },
      }),
    onSettled: () => qc.invalidateQueries({ queryKey: ["task", taskId] }),
  });
  return (
    <span className="inline-flex flex-wrap items-baseline gap-x-2 text-xs">
      <button
        type="button"
        className="rounded border border-sky-700 px-2 py-0.5 text-sky-800 disabled:opacity-50"
        disabled={accept.isPending || accept.isSuccess}
        onClick={() => accept.mutate()}
        data-testid="accept-tool-definition"
      >
        {accept.isSuccess ? "Accepted" : `Accept new definition of ${tool}`}
      </button>
      {accept.error ? (
        <span className="text-red-700">
          {accept.error instanceof ApiError ? accept.error.message : "Could not accept the definition."}
        </span>
      ) : null}
    </span>
  );
}
