"use client";

/**
 * The timeline's controls (zoom out / in, Fit, compress idle time, UTC / Local) and its legend (shapes, outcomes,
 * bars and controls in words, no colour-only meaning).
 */
import type { TimeZoneMode } from "./format";
import { MarkGlyph, OutcomeLabel, SHAPE_WORD } from "./parts";

/** Zoom, fit, idle compression and clock. `zoomBy(2)` zooms out, `zoomBy(0.5)` in. */
export function TimelineControls({
  zoomBy,
  onFit,
  hasIdle,
  compressIdle,
  onToggleCompress,
  zone,
  onZone,
}: {
  zoomBy: (factor: number) => void;
  onFit: () => void;
  hasIdle: boolean;
  compressIdle: boolean;
  onToggleCompress: () => void;
  zone: TimeZoneMode;
  onZone: (zone: TimeZoneMode) => void;
}) {
  return (
    <div className="ml-auto flex flex-wrap items-center gap-2">
      <div className="inline-flex overflow-hidden rounded-md border border-neutral-300 dark:border-neutral-700">
        <button
          type="button"
          onClick={() => zoomBy(2)}
          aria-label="Zoom out"
          title="Zoom out (−)"
          className="px-2 py-1 hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:hover:bg-neutral-800"
        >
          −
        </button>
        <button
          type="button"
          onClick={() => zoomBy(0.5)}
          aria-label="Zoom in"
          title="Zoom in (+)"
          className="border-l border-neutral-300 px-2 py-1 hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 dark:hover:bg-neutral-800"
        >
          +
        </button>
        <button
          type="button"
          onClick={onFit}
          title="Fit all events (0)"
          className="border-l border-neutral-300 px-2 py-1 font-medium hover:bg-neutral-100 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 dark:hover:bg-neutral-800"
        >
          Fit
        </button>
      </div>
      {hasIdle ? (
        <button
          type="button"
          aria-pressed={compressIdle}
          onClick={onToggleCompress}
          title="Draw long stretches without events narrow, so the rest of the run stays readable"
          className={`rounded-md border border-neutral-300 px-2 py-1 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 dark:border-neutral-700 ${
            compressIdle
              ? "bg-neutral-900 text-white dark:bg-neutral-100 dark:text-neutral-900"
              : "hover:bg-neutral-100 dark:hover:bg-neutral-800"
          }`}
        >
          Compress idle time
        </button>
      ) : null}
      <div
        role="group"
        aria-label="Time zone"
        className="inline-flex overflow-hidden rounded-md border border-neutral-300 dark:border-neutral-700"
      >
        {(["utc", "local"] as const).map((z, i) => (
          <button
            key={z}
            type="button"
            aria-pressed={zone === z}
            onClick={() => onZone(z)}
            className={`px-2 py-1 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600 ${
              i > 0 ? "border-l border-neutral-300 dark:border-neutral-700" : ""
            } ${
              zone === z
                ? "bg-neutral-900 text-white dark:bg-neutral-100 dark:text-neutral-900"
                : "hover:bg-neutral-100 dark:hover:bg-neutral-800"
            }`}
          >
            {z === "utc" ? "UTC" : "Local"}
          </button>
        ))}
      </div>
    </div>
  );
}

/** Shapes, outcomes and controls, in words (no colour-only meaning). */
export function Legend({ hintId, constraints = false }: { hintId: string; constraints?: boolean }) {
  return (
    <div className="flex flex-wrap items-center gap-x-4 gap-y-1 border-t border-neutral-200 px-3 py-2 text-[11px] text-neutral-600 dark:border-neutral-800 dark:text-neutral-400">
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        {(["circle", "diamond", "square", "triangle"] as const).map((shape) => (
          <span key={shape} className="inline-flex items-center gap-1">
            <MarkGlyph shape={shape} outcome="ok" />
            {SHAPE_WORD[shape]}
          </span>
        ))}
      </span>
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        <OutcomeLabel outcome="ok" />
        <OutcomeLabel outcome="denied" />
        <OutcomeLabel outcome="failed" />
        <OutcomeLabel outcome="unknown" />
      </span>
      <span className="inline-flex flex-wrap items-center gap-x-3 gap-y-1">
        <span className="inline-flex items-center gap-1">
          <svg width={22} height={10} aria-hidden="true">
            <rect x={0.5} y={0.5} width={21} height={9} rx={2} className="fill-neutral-200 stroke-neutral-500" />
          </svg>
          tool call, call → outcome
        </span>
        <span className="inline-flex items-center gap-1">
          <svg width={22} height={10} aria-hidden="true">
            <rect
              x={0.5}
              y={0.5}
              width={21}
              height={9}
              rx={2}
              className="fill-amber-100 stroke-amber-800"
              strokeDasharray="3 2"
            />
          </svg>
          ? outcome unknown
        </span>
        {constraints ? (
          <span className="inline-flex items-center gap-1">
            <svg width={14} height={12} aria-hidden="true">
              <path
                d="M7,1 L13,11 L1,11 Z"
                className="fill-amber-300 stroke-amber-900"
                strokeWidth={1}
                strokeLinejoin="round"
              />
            </svg>
            constraints not re-checked after a compaction
          </span>
        ) : null}
      </span>
      <span id={hintId} className="sm:ml-auto">
        Scroll to zoom · drag to pan · Shift-drag to zoom to a range · ←/→ step through events · Esc clears
      </span>
    </div>
  );
}
