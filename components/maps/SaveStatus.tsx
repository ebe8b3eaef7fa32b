/**
 * An autosaved record's save state in words (announced politely to screen readers), with an icon so that colour
 * never carries the meaning alone.
 */
import type { SaveState } from "./useAutosave";

/**
 * @param testId the element's `data-testid`; its `data-state` is the state's kind.
 * @param why when set, a failed save says why ("Not saved: conflict", "…: fix the field", "…: retry"); otherwise
 *   "Not saved".
 */
export function SaveStatus({ state, testId, why = false }: { state: SaveState; testId: string; why?: boolean }) {
  const text =
    state.kind === "saved"
      ? state.at
        ? `Saved ${new Date(state.at).toISOString().slice(11, 19)} UTC`
        : "Saved"
      : state.kind === "dirty"
        ? "Unsaved changes…"
        : state.kind === "saving"
          ? "Saving…"
          : !why
            ? "Not saved"
            : state.kind === "conflict"
              ? "Not saved: conflict"
              : state.kind === "invalid"
                ? "Not saved: fix the field"
                : "Not saved: retry";
  const cls =
    state.kind === "saved"
      ? "text-emerald-800"
      : state.kind === "dirty" || state.kind === "saving"
        ? "text-neutral-700"
        : "text-red-800";
  const icon = state.kind === "saved" ? "✔" : state.kind === "saving" || state.kind === "dirty" ? "↻" : "✕";
  return (
    <span
      className={`inline-flex items-center gap-1 text-xs font-medium ${cls}`}
      role="status"
      aria-live="polite"
      data-testid={testId}
      data-state={state.kind}
    >
      <span aria-hidden="true">{icon}</span>
      {text}
    </span>
  );
}
