/**
 * A task's status in the task list (issue 24, decision 0043), derived from the same rules as the task page: the
 * phase the run reports (lib/domain/tasks/phases.ts, the task page's "Run ended") and, for a run that has not ended,
 * the resume gate's verdict (lib/domain/gate/evaluate.ts, the task page's gate panel) — never a second rule.
 * - ended by a person (`terminated`, lib/domain/tasks/terminate.ts); ended as `done` / `completed` (`done`); ended in
 *   any other terminal phase (`failed`: failed, stopped, cancelled);
 * - not ended: the gate stops only for approvals (`approval_missing`, `approval_stale`, `policy_changed`) →
 *   `waiting_for_approval`; stops for anything else → `stopped`; `replay` → `replay`; `resume` with no event for
 *   {@link STALE_AFTER_MS} → `stale` (a run that went quiet: the way out is fencing or ending it), else `running`.
 * Pure: the verdict is asked by the caller.
 */
import type { GateReasonCode, GateVerdict } from "@/lib/contract/api";
import { TERMINATED_PHASE, isTerminalPhase } from "./phases";

export const TASK_STATUSES = [
  "running",
  "stopped",
  "waiting_for_approval",
  "replay",
  "stale",
  "done",
  "failed",
  "terminated",
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** The words the list shows for each status (docs UX: a word with every colour). */
export const TASK_STATUS_WORD: Record<TaskStatus, string> = {
  running: "running",
  stopped: "stopped at the gate",
  waiting_for_approval: "waiting for approval",
  replay: "replay",
  stale: "stale",
  done: "done",
  failed: "failed",
  terminated: "ended by a person",
};

/** Statuses decided by the phase alone (the run has ended); the others need the gate's verdict. */
export const ENDED_STATUSES: readonly TaskStatus[] = ["done", "failed", "terminated"];

/** A run that has not ended and has had no event for this long is `stale`. */
export const STALE_AFTER_MS = 60 * 60 * 1000;

const APPROVAL_CODES: ReadonlySet<GateReasonCode> = new Set(["approval_missing", "approval_stale", "policy_changed"]);
const DONE_PHASES = new Set(["done", "completed"]);

/** The status of a run that has ended, from its phase; null while it has not ended. */
export function endedStatus(phase: string, terminated: boolean): TaskStatus | null {
  if (terminated || phase.toLowerCase() === TERMINATED_PHASE) return "terminated";
  if (!isTerminalPhase(phase)) return null;
  return DONE_PHASES.has(phase.toLowerCase()) ? "done" : "failed";
}

/**
 * The status of a task.
 * @param task phase, whether a person ended it, and its last activity (the newest event's time; else its creation).
 * @param verdict the gate's verdict now (needed only while the run has not ended).
 */
export function taskStatus(
  task: { phase: string; terminated: boolean; last_activity_at: string },
  verdict: GateVerdict | null,
  now: Date,
): TaskStatus {
  const ended = endedStatus(task.phase, task.terminated);
  if (ended) return ended;
  if (verdict?.verdict === "stop") {
    return verdict.reasons.every((r) => APPROVAL_CODES.has(r.code)) ? "waiting_for_approval" : "stopped";
  }
  if (verdict?.verdict === "replay") return "replay";
  return now.getTime() - Date.parse(task.last_activity_at) > STALE_AFTER_MS ? "stale" : "running";
}
