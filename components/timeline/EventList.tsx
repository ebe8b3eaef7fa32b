"use client";

/**
 * Event list under the timeline (UX.md "Task page" → Events tab): a table of the task's events in time
 * order with a plane filter and a type filter, synced with the timeline's selection. Long lists are
 * virtualized (@tanstack/react-virtual); rows have a fixed height so scrolling maths stays exact.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useId, useMemo, useState, type KeyboardEvent as ReactKeyboardEvent } from "react";
import type { Plane, SideEffectView, StoredEvent } from "@/lib/contract/api";
import { formatClock, formatInstant, type TimeZoneMode } from "./format";
import { useHydrated } from "./hooks";
import {
  ALL_EVENTS_FILTER,
  LANES,
  classifyOutcome,
  markShape,
  matchesFilter,
  sortEvents,
  summarizeAttrs,
  type EventFilter,
} from "./model";
import { MarkGlyph, OutcomeLabel, StatusIcon } from "./parts";

/** Props of `EventList`. */
export type EventListProps = {
  /** The task's events, in any order (shown in time order). */
  events: StoredEvent[];
  /** Id of the selected event, or null; its row is highlighted and scrolled into view. */
  selectedId: string | null;
  /** Called with a row's event id on click / arrow keys, with null on Escape. */
  onSelect: (id: string | null) => void;
  /** The task's side effects by name (outcome `unknown` for intents of unknown effects). */
  sideEffects?: Record<string, SideEffectView>;
  /** Clock for the time column (default UTC). */
  zone?: TimeZoneMode;
  /** Filter (controlled). Without it the list keeps its own, starting with everything shown. */
  filter?: EventFilter;
  /** Called when the plane checkboxes or the type filter change. */
  onFilterChange?: (filter: EventFilter) => void;
  /** Height in px of the scrolling table area (default 420). */
  height?: number;
};

const ROW_H = 32;
const HEADER_H = 30;
const VIRTUALIZE_AFTER = 100;

/**
 * The event list. Props: see `EventListProps`. Renders the filters, a count, and a scrollable table
 * (`role="grid"`, rows `data-testid="event-row"`); the table area is focusable and ↑/↓, Home/End move
 * the selection, Escape clears it.
 */
export function EventList({
  events,
  selectedId,
  onSelect,
  sideEffects,
  zone: zoneProp = "utc",
  filter: filterProp,
  onFilterChange,
  height = 420,
}: EventListProps) {
  const hydrated = useHydrated();
  const zone: TimeZoneMode = hydrated ? zoneProp : "utc";
  const [filterState, setFilterState] = useState<EventFilter>(ALL_EVENTS_FILTER);
  const filter = filterProp ?? filterState;
  const setFilter = (f: EventFilter) => {
    setFilterState(f);
    onFilterChange?.(f);
  };
  const [scrollEl, setScrollEl] = useState<HTMLDivElement | null>(null);
  const ids = useId();

  const sorted = useMemo(() => sortEvents(events), [events]);
  const countByPlane = useMemo(() => {
    const counts: Record<Plane, number> = { session: 0, environment: 0, tools: 0, vault: 0 };
    for (const { event } of sorted) counts[event.plane] += 1;
    return counts;
  }, [sorted]);
  const rows = useMemo(() => sorted.filter(({ event }) => matchesFilter(event, filter)), [sorted, filter]);
  const selectedIndex = selectedId === null ? -1 : rows.findIndex((r) => r.event.id === selectedId);
  const selectedHidden = selectedId !== null && selectedIndex === -1 && sorted.some((r) => r.event.id === selectedId);
  const filtered = rows.length !== sorted.length;

  // The library returns fresh functions each render; this component does not memoize on them.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollEl,
    estimateSize: () => ROW_H,
    overscan: 12,
    // Rows start below the sticky header: offsets include it, and "start" alignment keeps rows out from under it.
    scrollMargin: HEADER_H,
    scrollPaddingStart: HEADER_H,
    // Until the scroll area is measured (on the server and while hydrating), assume it is as tall as it may grow:
    // the first screen of rows is rendered with the page instead of one render later.
    initialRect: { width: 0, height },
  });
  const virtualize = rows.length > VIRTUALIZE_AFTER;

  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: "auto" });
  }, [selectedIndex, virtualizer]);

  const togglePlane = (plane: Plane) => {
    const planes = filter.planes.includes(plane)
      ? filter.planes.filter((p) => p !== plane)
      : LANES.map((l) => l.plane).filter((p) => p === plane || filter.planes.includes(p));
    setFilter({ ...filter, planes });
  };

  const onKeyDown = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    let next: number | null = null;
    if (e.key === "ArrowDown") next = selectedIndex < 0 ? 0 : Math.min(rows.length - 1, selectedIndex + 1);
    else if (e.key === "ArrowUp") next = selectedIndex < 0 ? rows.length - 1 : Math.max(0, selectedIndex - 1);
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = rows.length - 1;
    else if (e.key === "Escape" && selectedId !== null) {
      e.preventDefault();
      onSelect(null);
      return;
    }
    if (next === null) return;
    e.preventDefault();
    const row = rows[next];
    if (row && row.event.id !== selectedId) onSelect(row.event.id);
  };

  const virtualItems = virtualize ? virtualizer.getVirtualItems() : [];
  const shown = virtualize
    ? virtualItems.map((vi) => ({ index: vi.index, row: rows[vi.index] }))
    : rows.map((row, index) => ({ index, row }));
  const padTop = virtualize ? (virtualItems[0]?.start ?? HEADER_H) - HEADER_H : 0;
  const padBottom = virtualize ? virtualizer.getTotalSize() - ((virtualItems.at(-1)?.end ?? HEADER_H) - HEADER_H) : 0;

  return (
    <section
      aria-labelledby={`${ids}-title`}
      className="min-w-0 rounded-lg border border-neutral-200 bg-white dark:border-neutral-800 dark:bg-neutral-950"
    >
      <div className="flex flex-wrap items-end gap-x-4 gap-y-2 border-b border-neutral-200 px-3 py-2 dark:border-neutral-800">
        <h3 id={`${ids}-title`} className="text-sm font-semibold text-neutral-900 dark:text-neutral-100">
          Events
        </h3>
        <fieldset className="flex flex-wrap items-center gap-1.5">
          <legend className="sr-only">Show planes</legend>
          {LANES.map(({ plane, label }) => {
            const on = filter.planes.includes(plane);
            return (
              <label
                key={plane}
                className={`inline-flex cursor-pointer items-center gap-1.5 rounded-full border px-2 py-0.5 text-xs has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-sky-600 ${
                  on
                    ? "border-neutral-400 bg-neutral-100 text-neutral-900 dark:border-neutral-500 dark:bg-neutral-800 dark:text-neutral-100"
                    : "border-neutral-200 text-neutral-500 dark:border-neutral-800 dark:text-neutral-400"
                }`}
              >
                <input
                  type="checkbox"
                  checked={on}
                  onChange={() => togglePlane(plane)}
                  className="size-3 accent-neutral-800 dark:accent-neutral-200"
                />
                {label}
                <span className="tabular-nums text-neutral-600 dark:text-neutral-400" data-testid="plane-count">
                  {countByPlane[plane]}
                </span>
              </label>
            );
          })}
        </fieldset>
        <label className="flex min-w-0 flex-1 basis-48 flex-col text-xs text-neutral-600 dark:text-neutral-300">
          <span>Filter by type</span>
          <input
            type="search"
            value={filter.typeQuery}
            onChange={(e) => setFilter({ ...filter, typeQuery: e.target.value })}
            placeholder="e.g. egress or side_effect.intent"
            className="mt-0.5 w-full min-w-0 rounded-md border border-neutral-300 bg-white px-2 py-1 font-mono text-xs text-neutral-900 placeholder:font-sans placeholder:text-neutral-400 focus-visible:outline-2 focus-visible:outline-sky-600 dark:border-neutral-700 dark:bg-neutral-900 dark:text-neutral-100"
          />
        </label>
        <p className="text-xs text-neutral-500 tabular-nums dark:text-neutral-400" aria-live="polite">
          {filtered
            ? `${rows.length} of ${sorted.length} events`
            : `${sorted.length} ${sorted.length === 1 ? "event" : "events"}`}
          {filtered ? (
            <button
              type="button"
              onClick={() => setFilter(ALL_EVENTS_FILTER)}
              className="ml-2 font-medium text-sky-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600 dark:text-sky-300"
            >
              Clear filters
            </button>
          ) : null}
        </p>
      </div>

      {selectedHidden ? (
        <p className="border-b border-neutral-200 bg-neutral-50 px-3 py-1.5 text-xs text-neutral-600 dark:border-neutral-800 dark:bg-neutral-900 dark:text-neutral-300">
          The selected event is hidden by the filters.{" "}
          <button
            type="button"
            onClick={() => setFilter(ALL_EVENTS_FILTER)}
            className="font-medium text-sky-700 underline-offset-2 hover:underline dark:text-sky-300"
          >
            Show all events
          </button>
        </p>
      ) : null}

      <div
        ref={setScrollEl}
        tabIndex={0}
        aria-label="Event list: arrow keys move the selection"
        onKeyDown={onKeyDown}
        className="relative overflow-auto focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-sky-600"
        style={{ maxHeight: height }}
      >
        <table
          role="grid"
          aria-rowcount={rows.length + 1}
          aria-labelledby={`${ids}-title`}
          className="w-full table-fixed text-xs"
        >
          <thead className="sticky top-0 z-10 bg-neutral-50 text-left text-[11px] text-neutral-500 dark:bg-neutral-900 dark:text-neutral-400">
            <tr aria-rowindex={1} style={{ height: HEADER_H }}>
              <th scope="col" className="w-[8rem] px-3 font-medium">
                Time <span className="font-normal">({zone === "utc" ? "UTC" : "local"})</span>
              </th>
              <th scope="col" className="hidden w-28 px-2 font-medium sm:table-cell">
                Plane
              </th>
              <th scope="col" className="w-auto px-2 font-medium md:w-[15rem]">
                Type
              </th>
              <th scope="col" className="hidden px-2 font-medium md:table-cell">
                Summary
              </th>
              <th scope="col" className="hidden w-16 px-2 text-right font-medium sm:table-cell">
                Attempt
              </th>
              <th scope="col" className="w-[5.5rem] px-3 text-right font-medium">
                Redacted
              </th>
            </tr>
          </thead>
          <tbody>
            {padTop > 0 ? (
              <tr aria-hidden="true" style={{ height: padTop }}>
                <td colSpan={6} />
              </tr>
            ) : null}
            {shown.map(({ index, row }) => {
              if (!row) return null;
              const { event, t } = row;
              const isSelected = event.id === selectedId;
              const outcome = classifyOutcome(event, sideEffects);
              const summary = summarizeAttrs(event.attrs);
              return (
                <tr
                  key={event.id}
                  data-testid="event-row"
                  data-event-id={event.id}
                  data-plane={event.plane}
                  aria-rowindex={index + 2}
                  aria-selected={isSelected}
                  onClick={() => onSelect(event.id)}
                  style={{ height: ROW_H }}
                  className={`cursor-pointer whitespace-nowrap ${
                    isSelected
                      ? "bg-sky-100 text-neutral-950 dark:bg-sky-950 dark:text-white"
                      : index % 2 === 1
                        ? "bg-neutral-50/70 hover:bg-neutral-100 dark:bg-neutral-900/50 dark:hover:bg-neutral-800"
                        : "hover:bg-neutral-100 dark:hover:bg-neutral-800"
                  }`}
                >
                  <td
                    className={`truncate px-3 font-mono tabular-nums ${isSelected ? "shadow-[inset_3px_0_0_var(--color-sky-600)]" : ""}`}
                    title={formatInstant(t, zone)}
                  >
                    {formatClock(t, zone)}
                  </td>
                  <td className="hidden truncate px-2 text-neutral-600 sm:table-cell dark:text-neutral-300">
                    {LANES.find((l) => l.plane === event.plane)?.label}
                  </td>
                  <td className="truncate px-2" title={event.type}>
                    <span className="inline-flex max-w-full items-center gap-1.5">
                      <MarkGlyph shape={markShape(event.type)} outcome={outcome} />
                      <span className="truncate font-mono">{event.type}</span>
                      {outcome !== "ok" ? <OutcomeLabel outcome={outcome} className="shrink-0 font-medium" /> : null}
                    </span>
                  </td>
                  <td
                    className="hidden truncate px-2 text-neutral-600 md:table-cell dark:text-neutral-300"
                    title={summary}
                  >
                    {summary || <span className="text-neutral-400">—</span>}
                  </td>
                  <td className="hidden px-2 text-right tabular-nums sm:table-cell">{event.attempt ?? "—"}</td>
                  <td className="px-3 text-right tabular-nums">
                    {event.redaction_count > 0 ? (
                      <span
                        title={`${event.redaction_count} ${event.redaction_count === 1 ? "value" : "values"} redacted before storage`}
                        className="inline-flex items-center gap-1 rounded bg-amber-100 px-1.5 py-0.5 font-medium text-amber-900 dark:bg-amber-900/60 dark:text-amber-100"
                      >
                        <StatusIcon name="lock" />
                        {event.redaction_count}
                        <span className="sr-only"> redacted</span>
                      </span>
                    ) : (
                      <span className="text-neutral-400">—</span>
                    )}
                  </td>
                </tr>
              );
            })}
            {padBottom > 0 ? (
              <tr aria-hidden="true" style={{ height: padBottom }}>
                <td colSpan={6} />
              </tr>
            ) : null}
          </tbody>
        </table>
        {rows.length === 0 ? (
          <p className="px-3 py-6 text-center text-xs text-neutral-500 dark:text-neutral-400">
            {sorted.length === 0
              ? "No events recorded for this task yet. Runtimes send them to POST /api/v1/events."
              : "No events match these filters."}
          </p>
        ) : null}
      </div>
    </section>
  );
}
