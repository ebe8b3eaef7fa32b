/**
 * The points of the demo runtime's first attempt (scripts/demo-runtime) where a run can be cut short
 * (`DEMO_CRASH_AT` for a hard crash, `--interrupt-at` / `DEMO_INTERRUPT_AT` for a lost sandbox), with what the
 * server knows at each. Pure data with no imports: the runtime and the interruption-exercise page (which shows the
 * command for a point) share it; it lives under lib/ because the dashboard's build includes it.
 */

export const CRASH_POINTS = [
  "after_intent",
  "after_external_write",
  "after_receipt",
  "during_report",
  "after_checkpoint",
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Each point as a transition of the run, in order, and what the server can know when the run stops there. */
export const POINT_GUIDE: Record<CrashPoint, { transition: string; knows: string }> = {
  after_intent: {
    transition: "document_read → record_updated: the intent for update_record answered go, no write made yet",
    knows: "The write is in flight, then unknown once the next sandbox starts; the records service never saw it.",
  },
  after_external_write: {
    transition: "document_read → record_updated: the records service applied the update, no receipt reported",
    knows: "The write is unknown although it happened; its lookup finds it.",
  },
  after_receipt: {
    transition: "record_updated: the receipt is recorded, the checkpoint after it not taken",
    knows: "The write is completed with its receipt; the next attempt replays it.",
  },
  during_report: {
    transition: "record_updated → report_drafted: report.md half written, never checkpointed",
    knows: "The write is completed; the torn draft is not in any snapshot.",
  },
  after_checkpoint: {
    transition: "report_drafted: the draft is snapshotted and checkpointed",
    knows: "The write is completed and the draft is restorable with its digest.",
  },
};

/** True when `value` names one of the points. */
export function isCrashPoint(value: string): value is CrashPoint {
  return (CRASH_POINTS as readonly string[]).includes(value);
}

/** A disposable task id for an exercise run at `point` (unique per exercise, valid as a task id). */
export function drillTaskId(point: CrashPoint, exerciseId: string): string {
  return `drill-${point.replace(/_/g, "-")}-${exerciseId
    .replace(/[^a-z0-9]/gi, "")
    .slice(0, 8)
    .toLowerCase()}`;
}
