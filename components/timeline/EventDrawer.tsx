"use client";

/**
 * Details of one selected event (UX.md "Timeline": click selects and opens a detail drawer). A labelled,
 * non-modal dialog: it never traps focus, Escape (with focus inside) or the close button closes it.
 */
import { useEffect, useId, useState, type KeyboardEvent as ReactKeyboardEvent, type ReactNode } from "react";
import { apiFetch } from "@/lib/client/api";
import type { SideEffectView, StoredEvent } from "@/lib/contract/api";
import { Id } from "@/components/ui/Id";
import { formatInstant } from "./format";
import { useHydrated } from "./hooks";
import { JsonTree } from "./JsonTree";
import { classifyOutcome, markShape, planeLabel, relatedSideEffectName } from "./model";
import { MarkGlyph, OutcomeLabel, SHAPE_WORD, SideEffectStatusLabel, StatusIcon } from "./parts";
import { shownWriteStatus } from "@/lib/domain/approvals/write-state";

/** Props of `EventDrawer`. */
export type EventDrawerProps = {
  /** The event to show. */
  event: StoredEvent;
  /** Called by the close button and by Escape. */
  onClose: () => void;
  /** The task's side effects by name: a side_effect.* (or approval.*) event about one shows its status. */
  sideEffects?: Record<string, SideEffectView>;
  /** Optional link target for a side effect (e.g. the Side effects tab anchor); no link without it. */
  sideEffectHref?: (name: string) => string;
  /** Set when this is the compaction no `constraint.checked` followed: where the gate's reason is. */
  constraintsHref?: string;
  /** Extra classes for the outer element (placement is the host's choice). */
  className?: string;
};

/**
 * The event drawer. Props: see `EventDrawerProps`. Shows type, outcome, plane, times (UTC and local),
 * sandbox id (as an untrusted pointer), attempt, actor, the redaction count and the attributes as a
 * collapsible JSON tree with `[REDACTED]` values highlighted.
 */
export function EventDrawer({
  event,
  onClose,
  sideEffects,
  sideEffectHref,
  constraintsHref,
  className = "",
}: EventDrawerProps) {
  const titleId = useId();
  const hydrated = useHydrated();
  const t = Date.parse(event.occurred_at);
  const received = Date.parse(event.received_at);
  const outcome = classifyOutcome(event, sideEffects);
  const shape = markShape(event.type);
  const seName = relatedSideEffectName(event, sideEffects);
  const se = seName !== null ? sideEffects?.[seName] : undefined;

  const onKeyDown = (e: ReactKeyboardEvent<HTMLElement>) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onClose();
    }
  };

  return (
    <section
      role="dialog"
      aria-modal="false"
      aria-labelledby={titleId}
      data-testid="event-drawer"
      data-event-id={event.id}
      onKeyDown={onKeyDown}
      className={`min-w-0 rounded-lg border border-neutral-200 bg-white text-sm shadow-sm dark:border-neutral-800 dark:bg-neutral-950 ${className}`}
    >
      <header className="flex items-start gap-2 border-b border-neutral-200 px-4 py-3 dark:border-neutral-800">
        <div className="min-w-0 flex-1">
          <p className="text-[11px] font-medium tracking-wide text-neutral-500 uppercase dark:text-neutral-400">
            Event
          </p>
          <h3
            id={titleId}
            className="flex items-center gap-1.5 font-mono text-sm font-semibold break-all text-neutral-900 dark:text-neutral-50"
          >
            <MarkGlyph shape={shape} outcome={outcome} />
            {event.type}
          </h3>
          <p className="mt-1 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-neutral-600 dark:text-neutral-300">
            <span>{planeLabel(event.plane)}</span>
            <span>{SHAPE_WORD[shape]}</span>
            <OutcomeLabel outcome={outcome} />
          </p>
        </div>
        <button
          type="button"
          onClick={onClose}
          aria-label="Close event details"
          title="Close (Esc)"
          className="rounded-md p-1 text-neutral-500 hover:bg-neutral-100 hover:text-neutral-900 focus-visible:outline-2 focus-visible:outline-sky-600 dark:hover:bg-neutral-800 dark:hover:text-neutral-100"
        >
          <svg
            width={16}
            height={16}
            viewBox="0 0 16 16"
            aria-hidden="true"
            fill="none"
            stroke="currentColor"
            strokeWidth={1.8}
            strokeLinecap="round"
          >
            <path d="M4 4l8 8M12 4l-8 8" />
          </svg>
        </button>
      </header>

      <div className="space-y-3 px-4 py-3">
        {event.credential_flagged ? (
          <p
            role="note"
            data-testid="credential-flagged"
            className="flex items-start gap-1.5 rounded-md bg-red-50 px-2 py-1.5 text-xs font-medium text-red-900 ring-1 ring-red-300 dark:bg-red-950 dark:text-red-100 dark:ring-red-700"
          >
            <StatusIcon name="lock" />
            <span>
              This event carried a credential value or placeholder; it was redacted before storage
              {event.redaction_kinds?.length ? ` (${event.redaction_kinds.join(", ")})` : ""}. The vault lane keeps
              metadata only: fix the runtime or vault integration that sent it.
            </span>
          </p>
        ) : null}
        {constraintsHref ? (
          <p
            role="note"
            data-testid="drawer-constraints-unchecked"
            className="rounded-md bg-amber-50 px-2 py-1.5 text-xs text-amber-900 ring-1 ring-amber-300 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-700"
          >
            <span className="font-medium">Constraints not re-checked</span> since this compaction: the resume gate holds
            mutations back until the runtime reports <span className="font-mono">constraint.checked</span>.{" "}
            <a
              href={constraintsHref}
              className="font-medium text-sky-700 underline-offset-2 hover:underline dark:text-sky-300"
            >
              The gate&apos;s reason
            </a>
          </p>
        ) : null}
        {event.redaction_count > 0 ? (
          <p
            role="note"
            data-testid="redaction-count"
            className="flex items-center gap-1.5 rounded-md bg-amber-50 px-2 py-1.5 text-xs font-medium text-amber-900 ring-1 ring-amber-300 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-700"
          >
            <StatusIcon name="lock" />
            {event.redaction_count} {event.redaction_count === 1 ? "value" : "values"} redacted before storage
          </p>
        ) : null}

        {se && seName !== null ? (
          <p className="flex flex-wrap items-center gap-x-1.5 gap-y-1 text-xs" data-testid="drawer-side-effect">
            <span className="text-neutral-500 dark:text-neutral-400">Side effect</span>
            {sideEffectHref ? (
              <a
                href={sideEffectHref(seName)}
                className="font-mono font-medium text-sky-700 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600 dark:text-sky-300"
              >
                {seName}
              </a>
            ) : (
              <span className="font-mono font-medium">{seName}</span>
            )}
            <span className="text-neutral-500 dark:text-neutral-400">is</span>
            <SideEffectStatusLabel status={shownWriteStatus(se.status, se.approval)} />
            {se.status_reason ? (
              <span className="text-neutral-600 dark:text-neutral-300">· {se.status_reason}</span>
            ) : null}
          </p>
        ) : null}

        <dl className="grid grid-cols-[8.5rem_minmax(0,1fr)] gap-x-3 gap-y-1 text-xs">
          <Row term="plane">{planeLabel(event.plane)}</Row>
          <Row term="occurred (UTC)">
            <span className="tabular-nums">{formatInstant(t, "utc")}</span>
          </Row>
          <Row term="occurred (local)">
            <span className="tabular-nums">{hydrated ? formatInstant(t, "local") : "—"}</span>
          </Row>
          <Row term="received (UTC)">
            <span className="tabular-nums">{formatInstant(received, "utc")}</span>
          </Row>
          <Row term="sandbox id (pointer, not trusted)">
            {event.environment_id ? (
              <Id value={event.environment_id} />
            ) : (
              <span className="text-neutral-500">none</span>
            )}
          </Row>
          <Row term="attempt">{event.attempt ?? <span className="text-neutral-500">—</span>}</Row>
          <Row term="actor">
            {event.actor ? <Id value={event.actor} /> : <span className="text-neutral-500">—</span>}
          </Row>
          <Row term="event id">
            <Id value={event.id} />
          </Row>
          <Row term="redactions">
            {event.redaction_count > 0 ? (
              <span className="font-medium text-amber-800 dark:text-amber-300">{event.redaction_count}</span>
            ) : (
              "none"
            )}
          </Row>
        </dl>

        <div>
          <h4 className="mb-1 text-xs font-semibold text-neutral-700 dark:text-neutral-200">Attributes</h4>
          <div className="rounded-md border border-neutral-200 bg-neutral-50 p-2 dark:border-neutral-800 dark:bg-neutral-900">
            <Attributes event={event} />
          </div>
        </div>
      </div>
    </section>
  );
}

/**
 * An event's attributes. When the page carried only their summary (`attrs_truncated`, decision 0034), the detail is
 * fetched on demand (`GET /api/v1/tasks/{id}/events/{event_id}`, itself capped) and the summary shown meanwhile.
 */
function Attributes({ event }: { event: StoredEvent }) {
  const [detail, setDetail] = useState<{ id: string; event: StoredEvent } | { id: string; error: string } | null>(null);
  useEffect(() => {
    if (!event.attrs_truncated) return;
    let live = true;
    apiFetch<StoredEvent>(`/api/v1/tasks/${encodeURIComponent(event.task_id)}/events/${encodeURIComponent(event.id)}`)
      .then((e) => live && setDetail({ id: event.id, event: e }))
      .catch(
        (err: unknown) => live && setDetail({ id: event.id, error: err instanceof Error ? err.message : "failed" }),
      );
    return () => {
      live = false;
    };
  }, [event.attrs_truncated, event.task_id, event.id]);
  if (!event.attrs_truncated) return <JsonTree value={event.attrs} />;
  const mine = detail && detail.id === event.id ? detail : null;
  const shown = mine && "event" in mine ? mine.event : event;
  return (
    <div data-testid="event-attrs" data-state={mine ? ("event" in mine ? "detail" : "error") : "loading"}>
      <JsonTree value={shown.attrs} />
      <p className="mt-1 text-xs text-neutral-600 dark:text-neutral-400">
        {!mine
          ? "A summary: loading the attributes…"
          : "error" in mine
            ? `A summary: the attributes could not be loaded (${mine.error}).`
            : shown.attrs_truncated
              ? "Truncated: this event is large, so its attributes are cut for display (long values shortened)."
              : null}
      </p>
    </div>
  );
}

function Row({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-neutral-500 dark:text-neutral-400">{term}</dt>
      <dd className="min-w-0 text-neutral-900 dark:text-neutral-100">{children}</dd>
    </>
  );
}
