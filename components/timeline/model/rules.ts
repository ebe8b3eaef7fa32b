/**
 * Vertical rules across all lanes: interruptions, restarts, resumes, stops and finishes.
 * Pure (no React, no DOM); unit-tested in tests/unit/timeline/rules.test.ts.
 */
import type { TimedEvent } from "./events";

/** Kind of vertical rule drawn across all lanes. */
export type RuleKind = "interruption" | "restart" | "resume" | "stop" | "finish";

/** A vertical rule across all lanes at one instant. */
export type TimeRule = { eventId: string; kind: RuleKind; t: number; label: string; attempt: number | null };

/**
 * Rules from time-ordered events: `run.interrupted` → interruption; `sandbox.created` with attempt > 1 →
 * restart; `run.resumed` → resume; `run.stopped` → stop (a visible stop is as important as an interruption),
 * or finish when its `reason` says the work completed.
 */
export function deriveRules(sorted: readonly TimedEvent[]): TimeRule[] {
  const rules: TimeRule[] = [];
  for (const { event, t } of sorted) {
    const attempt = event.attempt;
    const suffix = attempt !== null ? ` · attempt ${attempt}` : "";
    if (event.type === "run.interrupted") {
      rules.push({ eventId: event.id, kind: "interruption", t, label: "interrupted", attempt });
    } else if (event.type === "sandbox.created" && attempt !== null && attempt > 1) {
      rules.push({ eventId: event.id, kind: "restart", t, label: `restart${suffix}`, attempt });
    } else if (event.type === "run.resumed") {
      rules.push({ eventId: event.id, kind: "resume", t, label: `resumed${suffix}`, attempt });
    } else if (event.type === "run.stopped") {
      // A run that stopped because it finished its work is not an error stop.
      const reason = typeof event.attrs.reason === "string" ? event.attrs.reason : "";
      const finished = ["completed", "done", "finished", "success"].includes(reason);
      rules.push({
        eventId: event.id,
        kind: finished ? "finish" : "stop",
        t,
        label: finished ? "finished" : "stopped",
        attempt,
      });
    }
  }
  return rules;
}
