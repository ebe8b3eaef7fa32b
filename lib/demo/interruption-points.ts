/**
 * The points of the demo runtime's first attempt (scripts/demo-runtime) where a run can be cut short
 * (`DEMO_CRASH_AT` for a hard crash, `--interrupt-at` / `DEMO_INTERRUPT_AT` for a lost sandbox), with what the
 * server knows at each, and the map layers each can test. Pure data (one type import): the runtime and the interruption-exercise page (which shows the
 * command for a point) share it; it lives under lib/ because the dashboard's build includes it.
 */
import type { MapLayer } from "@/db/schema/map-vocabulary";

const NO_COMPACTION = "the demo runtime never compacts its context, so nothing here tests what survives a compaction";
const RECEIPT_KNOWN =
  "the write's receipt is already recorded, so this point cannot tell a write that never happened from one whose answer was lost";

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

/**
 * The map layers an interruption at each point can test, and why the others cannot be: a new exercise at a point
 * covers these by default (lib/domain/exercises/create.ts) and its page says which. Only the two points before the
 * receipt can tell a write that never happened from one whose answer was lost (Tools); the demo runtime never
 * compacts its context, so no point tests Compaction.
 */
export const POINT_LAYERS: Record<CrashPoint, { tests: MapLayer[]; cannot: Partial<Record<MapLayer, string>> }> = {
  after_intent: {
    tests: ["session_state", "tools", "compute", "credentials", "artifacts", "recovery", "export"],
    cannot: { compaction: NO_COMPACTION },
  },
  after_external_write: {
    tests: ["session_state", "tools", "compute", "credentials", "artifacts", "recovery", "export"],
    cannot: { compaction: NO_COMPACTION },
  },
  after_receipt: {
    tests: ["session_state", "compute", "credentials", "artifacts", "recovery", "export"],
    cannot: { tools: RECEIPT_KNOWN, compaction: NO_COMPACTION },
  },
  during_report: {
    tests: ["session_state", "compute", "credentials", "artifacts", "recovery", "export"],
    cannot: { tools: RECEIPT_KNOWN, compaction: NO_COMPACTION },
  },
  after_checkpoint: {
    tests: ["session_state", "compute", "credentials", "artifacts", "recovery", "export"],
    cannot: { tools: RECEIPT_KNOWN, compaction: NO_COMPACTION },
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

/** The tool whose writes the demo runtime makes in its records service (and whose lookup a responder asks). */
export const RECORDS_TOOL = "update_record";

/**
 * The records service a workspace's lookup of {@link RECORDS_TOOL} asks (`<base>/lookup`, as the demo registers it):
 * its base URL, which the demo runtime must write to (`RECORDS_URL`) for "Look up by idempotency key" to see its
 * writes. Null when the lookup is not a records service's `/lookup` (then the command cannot point at it).
 */
export function recordsUrlOfLookup(lookupUrl: string): string | null {
  try {
    const u = new URL(lookupUrl);
    if (!u.pathname.endsWith("/lookup") || u.search || u.hash) return null;
    return `${u.origin}${u.pathname.slice(0, -"/lookup".length)}`;
  } catch {
    return null;
  }
}
