/**
 * Phases are the runtime's own words (DESIGN.md "Task record": `phase` is free text). These are the ones that mean
 * the run has ended; the task page stops polling at them and the attention queue leaves such runs out.
 * Compared case-insensitively.
 */
export const TERMINAL_PHASES = ["done", "completed", "stopped", "failed", "cancelled", "canceled"] as const;

/** True when `phase` says the run has ended (see {@link TERMINAL_PHASES}). */
export function isTerminalPhase(phase: string): boolean {
  return (TERMINAL_PHASES as readonly string[]).includes(phase.toLowerCase());
}
