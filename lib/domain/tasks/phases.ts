/** The phase the server sets when a person ends a task (lib/domain/tasks/terminate.ts). */
export const TERMINATED_PHASE = "terminated";

/**
 * Phases are the runtime's own words (docs/concepts.md#task-record: `phase` is free text). These are the ones that mean
 * the run has ended; the task page stops polling at them and the attention queue leaves such runs out.
 * Compared case-insensitively.
 */
export const TERMINAL_PHASES = [
  "done",
  "completed",
  "stopped",
  "failed",
  "cancelled",
  "canceled",
  TERMINATED_PHASE,
] as const;

/** True when `phase` says the run has ended (see {@link TERMINAL_PHASES}). */
export function isTerminalPhase(phase: string): boolean {
  return (TERMINAL_PHASES as readonly string[]).includes(phase.toLowerCase());
}

/**
 * The phase as people read it: before the first checkpoint the stored phase is a placeholder (`unknown`, see
 * db/schema/tasks.ts), which next to side effects reads like an unknown write; then it says "No checkpoint yet".
 * @param version the task's latest checkpoint version (0 = none).
 */
export function phaseLabel(phase: string, version: number): string {
  return version > 0 ? phase : "No checkpoint yet";
}
