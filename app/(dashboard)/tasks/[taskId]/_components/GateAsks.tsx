"use client";

/**
 * "The runtime asked the gate N s ago (attempt k)": the sign that a runtime is alive and polling the resume gate
 * (docs/concepts.md#gate-asks). The age comes from the server's clock (`seconds_since_last_ask` when the task view was
 * read) plus the time elapsed in this browser since, so a browser clock that is off does not change it; it ticks every
 * second.
 */
import { useEffect, useState } from "react";
import type { GateAskView } from "@/lib/contract/api";

/** Without an ask for this long, a live run's runtime may have stopped polling: said in words, amber. */
export const QUIET_AFTER_S = 120;

/** "4 s", "3 min 05 s", "2 h 07 min", "3 d" (whole units, for an age). */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
  return `${Math.floor(s / 86_400)} d`;
}

/** The entry of the latest ask (the most recent `last_asked_at`), or null. */
export function latestAsk(asks: readonly GateAskView[]): GateAskView | null {
  let best: GateAskView | null = null;
  for (const a of asks) if (!best || a.seconds_since_last_ask < best.seconds_since_last_ask) best = a;
  return best;
}

/**
 * One line under the gate's verdict.
 * @param asks the task view's `gate_asks`; `asOf` epoch ms (browser clock) when that view was received;
 *   `currentAttempt` the task's attempt now; `live` whether the run has not ended (a quiet runtime matters only then).
 */
export function GateAsks({
  asks,
  asOf,
  currentAttempt,
  live,
}: {
  asks: readonly GateAskView[];
  asOf: number;
  currentAttempt: number;
  live: boolean;
}) {
  // null until the first tick: the server and the first client render show the age as read, then it ticks.
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, []);

  const last = latestAsk(asks);
  if (!last) {
    return (
      <p className="mt-2 flex items-center gap-1.5 text-xs text-neutral-700" data-testid="gate-asks" data-state="never">
        <span aria-hidden="true">○</span>
        {live ? "The runtime has not asked the gate yet." : "The runtime never asked the gate."}
      </p>
    );
  }
  const age = last.seconds_since_last_ask + (now === null ? 0 : Math.max(0, now - asOf) / 1000);
  const quiet = live && age >= QUIET_AFTER_S;
  return (
    <p
      className={`mt-2 flex flex-wrap items-center gap-x-1.5 gap-y-0.5 text-xs ${quiet ? "text-amber-900" : "text-neutral-700"}`}
      data-testid="gate-asks"
      data-state={quiet ? "quiet" : "asking"}
      data-attempt={last.attempt}
      title={`Last asked at ${last.last_asked_at} (UTC); first ask of attempt ${last.attempt} at ${last.first_asked_at}`}
    >
      <span aria-hidden="true">{quiet ? "⚠" : "↻"}</span>
      <span>
        The runtime asked the gate{" "}
        <span className="font-medium tabular-nums" data-testid="gate-asks-age">
          {formatAge(age)}
        </span>{" "}
        ago
        {last.attempt > 0 ? ` (attempt ${last.attempt})` : " (before any sandbox was reported)"}; answer:{" "}
        {last.last_verdict}.
      </span>
      <span className="text-neutral-600">
        {last.asks} {last.asks === 1 ? "ask" : "asks"} {last.attempt > 0 ? "in this attempt" : "so far"}.
      </span>
      {last.attempt > 0 && currentAttempt > last.attempt ? (
        <span>Attempt {currentAttempt} has not asked yet.</span>
      ) : null}
      {quiet ? (
        <span className="font-medium">No ask for {formatAge(age)}: the runtime may have stopped polling.</span>
      ) : null}
    </p>
  );
}
