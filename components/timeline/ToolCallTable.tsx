"use client";

/**
 * The compact history (issue 24, decision 0043): one row per tool call with its outcome — the pairing the Tools lane
 * draws as bars (model/tool-calls.ts `deriveToolCallBars`: by call id and attempt; a mutating call whose attempt ended
 * without an outcome is "outcome unknown"). Temporal users read a run this way; the full event list stays one toggle
 * away. Times in UTC like the rest of the page.
 */
import { useMemo } from "react";
import type { SideEffectView, StoredEvent } from "@/lib/contract/api";
import { formatDuration, formatInstant } from "./format";
import { TOOL_CALL_WORD, deriveToolCallBars, sortEvents, type ToolCallStatus } from "./model";

const ICON: Record<ToolCallStatus, string> = {
  completed: "✓",
  failed: "✕",
  pending: "…",
  unknown: "?",
  reconciled: "✓",
  no_result: "–",
};

const TONE: Record<ToolCallStatus, string> = {
  completed: "text-emerald-800",
  failed: "text-red-800",
  pending: "text-neutral-700",
  unknown: "text-amber-900",
  reconciled: "text-neutral-800",
  no_result: "text-neutral-600",
};

/** Props: the loaded events, the task's side effects (a reconciled effect names the call's outcome), `onSelect(id)`. */
export function ToolCallTable({
  events,
  sideEffects,
  onSelect,
  partial,
}: {
  events: readonly StoredEvent[];
  sideEffects: Readonly<Record<string, Pick<SideEffectView, "status">>>;
  onSelect: (eventId: string) => void;
  /** Only some events are loaded (a long run): say so. */
  partial: boolean;
}) {
  const rows = useMemo(() => {
    const sorted = sortEvents(events);
    const end = sorted.at(-1)?.t ?? 0;
    const byId = new Map(events.map((e) => [e.id, e]));
    return deriveToolCallBars(sorted, end, 1, sideEffects).map((b) => ({
      ...b,
      outcome: byId.get(b.outcomeEventId ?? ""),
    }));
  }, [events, sideEffects]);
  if (rows.length === 0) {
    return (
      <p
        className="rounded border border-dashed border-neutral-300 p-4 text-sm text-neutral-600"
        data-testid="tool-calls-empty"
      >
        No tool calls with a call id{partial ? " among the loaded events" : ""}. Runtimes report them as{" "}
        <code className="font-mono text-xs">tool.called</code> and{" "}
        <code className="font-mono text-xs">tool.completed</code> /{" "}
        <code className="font-mono text-xs">tool.failed</code> with the same{" "}
        <code className="font-mono text-xs">call_id</code>.
      </p>
    );
  }
  return (
    <div className="overflow-x-auto rounded-lg border border-neutral-200 bg-white" data-testid="tool-call-table">
      <table className="w-full text-left text-sm">
        <caption className="px-3 py-2 text-left text-xs text-neutral-600">
          {rows.length} tool {rows.length === 1 ? "call" : "calls"}, each with its outcome
          {partial ? " (of the loaded events)" : ""}. Times in UTC.
        </caption>
        <thead className="border-b border-neutral-200 bg-neutral-50 text-xs uppercase tracking-wide text-neutral-600">
          <tr>
            <th scope="col" className="px-3 py-2">
              Tool
            </th>
            <th scope="col" className="px-3 py-2">
              Outcome
            </th>
            <th scope="col" className="px-3 py-2">
              Called
            </th>
            <th scope="col" className="px-3 py-2">
              Took
            </th>
            <th scope="col" className="px-3 py-2">
              Attempt
            </th>
            <th scope="col" className="px-3 py-2">
              Call id
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={`${r.callId}/${r.calledEventId}`}
              className="border-b border-neutral-100 last:border-0"
              data-testid="tool-call-row"
              data-status={r.status}
            >
              <td className="px-3 py-1.5">
                <button
                  type="button"
                  onClick={() => onSelect(r.outcomeEventId ?? r.calledEventId)}
                  className="font-mono text-xs text-sky-800 underline-offset-2 hover:underline focus-visible:outline focus-visible:outline-2 focus-visible:outline-sky-600"
                >
                  {r.tool ?? "tool"}
                </button>
                {r.mutation ? (
                  <span className="ml-1 text-xs text-neutral-600">(write{r.effect ? `: ${r.effect}` : ""})</span>
                ) : null}
              </td>
              <td className={`px-3 py-1.5 text-xs font-medium ${TONE[r.status]}`}>
                <span aria-hidden="true">{ICON[r.status]} </span>
                {TOOL_CALL_WORD[r.status]}
                {r.status === "failed" && typeof r.outcome?.attrs.error === "string" ? (
                  <span className="ml-1 font-normal text-neutral-700">— {r.outcome.attrs.error.slice(0, 200)}</span>
                ) : null}
              </td>
              <td className="whitespace-nowrap px-3 py-1.5 font-mono text-xs text-neutral-700">
                {formatInstant(r.start, "utc")}
              </td>
              <td className="whitespace-nowrap px-3 py-1.5 text-xs tabular-nums text-neutral-700">
                {r.outcomeEventId ? formatDuration(r.end - r.start) : "—"}
              </td>
              <td className="px-3 py-1.5 text-xs tabular-nums">{r.attempt ?? "—"}</td>
              <td className="max-w-48 truncate px-3 py-1.5 font-mono text-xs text-neutral-600" title={r.callId}>
                {r.callId}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
