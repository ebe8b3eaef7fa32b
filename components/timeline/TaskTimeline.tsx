"use client";

/**
 * The task page's timeline block: the four-lane `Timeline`, the `EventDrawer` for the selected event and
 * the `EventList`, sharing one selection (owned by the host, e.g. kept in the URL), one clock (UTC /
 * Local) and one filter.
 */
import dynamic from "next/dynamic";
import { useMemo, useState } from "react";
import type { SideEffectView, StoredEvent } from "@/lib/contract/api";
import { EventList } from "./EventList";
import type { TimeZoneMode } from "./format";
import { ALL_EVENTS_FILTER, type EventFilter } from "./model";
import { Timeline, type TimelineProps } from "./Timeline";

// The drawer (with its JSON tree) loads when an event is first selected, not with the page.
const EventDrawer = dynamic(() => import("./EventDrawer").then((m) => m.EventDrawer));

/** Props of `TaskTimeline`. */
export type TaskTimelineProps = {
  /** The task's events, in any order. */
  events: StoredEvent[];
  /** The task's side effects by name (from the task view); used for `unknown` marks and drawer status. */
  sideEffects?: Record<string, SideEffectView>;
  /** Id of the selected event, or null (the host owns it, e.g. `?event=` in the URL). */
  selectedId: string | null;
  /** Called with the newly selected event id, or null when the selection is cleared. */
  onSelect: (id: string | null) => void;
  /** Epoch ms of "now" while the run is live: open sandbox bars extend to it. */
  now?: number;
  /** Optional link target for a side effect named in the drawer. */
  sideEffectHref?: (name: string) => string;
  /** Height in px of the event list's scrolling area (default 420). */
  listHeight?: number;
  /** For a long run of which only some events are loaded: the server's bins and counts, and the zoom callback. */
  overview?: Pick<TimelineProps, "serverBins" | "completeFrom" | "totalEvents" | "laneCounts" | "onViewChange">;
  /** The compaction whose constraints were not re-checked: marked on the timeline and noted in its drawer. */
  constraintsUnchecked?: TimelineProps["constraintsUnchecked"];
};

/**
 * Timeline + drawer + list for one task. Props: see `TaskTimelineProps`. Selecting in the timeline or
 * the list calls `onSelect`; both follow `selectedId`. The drawer sits beside the list on wide screens
 * and above it on narrow ones.
 */
export function TaskTimeline({
  events,
  sideEffects,
  selectedId,
  onSelect,
  now,
  sideEffectHref,
  listHeight,
  overview,
  constraintsUnchecked,
}: TaskTimelineProps) {
  const [zone, setZone] = useState<TimeZoneMode>("utc");
  const [filter, setFilter] = useState<EventFilter>(ALL_EVENTS_FILTER);
  const selected = useMemo(
    () => (selectedId === null ? undefined : events.find((e) => e.id === selectedId)),
    [events, selectedId],
  );

  return (
    <div className="flex min-w-0 flex-col gap-4">
      <Timeline
        events={events}
        selectedId={selectedId}
        onSelect={onSelect}
        sideEffects={sideEffects}
        zone={zone}
        onZoneChange={setZone}
        filter={filter}
        now={now}
        {...overview}
        constraintsUnchecked={constraintsUnchecked}
      />

      {selectedId !== null && !selected ? (
        <p
          role="status"
          className="flex flex-wrap items-center gap-2 rounded-md border border-neutral-200 bg-neutral-50 px-3 py-2 text-xs text-neutral-700 dark:border-neutral-800 dark:bg-neutral-900 dark:text-neutral-200"
        >
          Event <span className="font-mono">{selectedId}</span> is not among the loaded events.
          <button
            type="button"
            onClick={() => onSelect(null)}
            className="font-medium text-sky-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600 dark:text-sky-300"
          >
            Clear selection
          </button>
        </p>
      ) : null}

      <div
        className={
          selected ? "grid min-w-0 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(20rem,26rem)]" : "min-w-0"
        }
      >
        <EventList
          events={events}
          selectedId={selectedId}
          onSelect={onSelect}
          sideEffects={sideEffects}
          zone={zone}
          filter={filter}
          onFilterChange={setFilter}
          height={listHeight}
        />
        {selected ? (
          <EventDrawer
            event={selected}
            onClose={() => onSelect(null)}
            sideEffects={sideEffects}
            sideEffectHref={sideEffectHref}
            constraintsHref={
              constraintsUnchecked && constraintsUnchecked.eventId === selected.id
                ? constraintsUnchecked.href
                : undefined
            }
            className="order-first lg:sticky lg:top-4 lg:order-last lg:max-h-[calc(100vh-2rem)] lg:overflow-y-auto"
          />
        ) : null}
      </div>
    </div>
  );
}
