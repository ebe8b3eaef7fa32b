/**
 * One status vocabulary everywhere (UX.md "Status language"): every status has a word and an icon, never
 * colour alone.
 */
import type { SideEffectStatus } from "@/db/schema/enums";
import type { ShownWriteStatus } from "@/lib/domain/approvals/write-state";

/**
 * Each status a write shows (lib/domain/approvals/write-state.ts `shownWriteStatus`: the stored status, or its live
 * approval request's state while it waits for approval or was approved).
 */
const SIDE_EFFECT: Record<ShownWriteStatus, { label: string; icon: string; cls: string; hint: string }> = {
  not_started: {
    label: "not started",
    icon: "○",
    cls: "bg-neutral-100 text-neutral-700 border-neutral-200",
    hint: "No intent recorded yet.",
  },
  awaiting_approval: {
    label: "awaiting approval",
    icon: "◔",
    cls: "bg-sky-50 text-sky-800 border-sky-200",
    hint: "Needs a fresh approval before it may run.",
  },
  approved: { label: "approved", icon: "✓", cls: "bg-sky-50 text-sky-800 border-sky-200", hint: "Approved; may run." },
  in_flight: {
    label: "in flight",
    icon: "↻",
    cls: "bg-indigo-50 text-indigo-800 border-indigo-200",
    hint: "Intent recorded; waiting for the receipt.",
  },
  completed: {
    label: "completed",
    icon: "✔",
    cls: "bg-emerald-50 text-emerald-800 border-emerald-200",
    hint: "Receipt recorded.",
  },
  failed: {
    label: "failed",
    icon: "✕",
    cls: "bg-red-50 text-red-800 border-red-200",
    hint: "The write failed; it may be retried with the same key.",
  },
  unknown: {
    label: "unknown",
    icon: "?",
    cls: "bg-amber-50 text-amber-900 border-amber-300",
    hint: "Request sent, outcome not recorded.",
  },
  approval_stale: {
    label: "approval stale",
    icon: "!",
    cls: "bg-amber-50 text-amber-900 border-amber-300",
    hint: "Its approval no longer stands; an approver must re-approve it before it may run.",
  },
  approval_rejected: {
    label: "approval rejected",
    icon: "✕",
    cls: "bg-red-50 text-red-800 border-red-200",
    hint: "An approver rejected it; the run must not make this write.",
  },
  approval_unsealed: {
    label: "approval not sealed",
    icon: "✕",
    cls: "bg-red-50 text-red-800 border-red-200",
    hint: "Its recorded decision is not what the server sealed; nothing goes under it.",
  },
};

/** The word for each side-effect status: the one vocabulary the pills, the timeline and its drawer share. */
export const SIDE_EFFECT_STATUS_WORD = Object.fromEntries(
  Object.entries(SIDE_EFFECT).map(([status, s]) => [status, s.label]),
) as Record<ShownWriteStatus, string>;

/** A side-effect status pill: icon + word, with the meaning as a tooltip. */
export function SideEffectStatusBadge({ status }: { status: ShownWriteStatus | SideEffectStatus }) {
  const s = SIDE_EFFECT[status];
  return (
    <span
      className={`inline-flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs font-medium ${s.cls}`}
      title={s.hint}
      data-status={status}
    >
      <span aria-hidden="true">{s.icon}</span>
      {s.label}
    </span>
  );
}

const VERDICT = {
  resume: { label: "Resume", icon: "▶", cls: "bg-emerald-50 text-emerald-800 border-emerald-300" },
  replay: { label: "Replay", icon: "↺", cls: "bg-amber-50 text-amber-900 border-amber-300" },
  stop: { label: "Stop", icon: "■", cls: "bg-red-50 text-red-800 border-red-300" },
} as const;

/** The neutral look of a verdict shown for information only (a run that has ended: nobody acts on it). */
const MUTED_VERDICT_CLS = "bg-neutral-50 text-neutral-700 border-neutral-300 border-dashed";

/**
 * Resume-gate verdict pill with the count of reasons. `muted`: neutral colours instead of the verdict's own, for a
 * verdict shown as information rather than as a call to act (e.g. on a run that has ended).
 */
export function VerdictBadge({
  verdict,
  reasons,
  muted = false,
}: {
  verdict: keyof typeof VERDICT;
  reasons: number;
  muted?: boolean;
}) {
  const v = VERDICT[verdict];
  return (
    <span
      className={`inline-flex items-center gap-1.5 rounded-md border px-2.5 py-1 text-sm ${muted ? `font-medium ${MUTED_VERDICT_CLS}` : `font-semibold ${v.cls}`}`}
      data-testid="gate-verdict"
      data-verdict={verdict}
      data-tone={muted ? "neutral" : "status"}
    >
      <span aria-hidden="true">{v.icon}</span>
      {v.label}
      {reasons > 0 ? (
        <span className="font-normal">
          · {reasons} {reasons === 1 ? "reason" : "reasons"}
        </span>
      ) : null}
    </span>
  );
}

/** Signature status of the latest checkpoint. */
export function SignatureBadge({
  valid,
  check,
}: {
  valid: boolean | null;
  /** How it verifies in its place (the gate's rules, decision 0035); `misplaced` is told apart from not verifying. */
  check?: "valid" | "record_invalid" | "misplaced" | null;
}) {
  if (valid === null) {
    return <span className="text-xs text-neutral-600">no checkpoint yet</span>;
  }
  if (check === "misplaced") {
    return (
      <span
        className="inline-flex items-center gap-1 text-xs font-semibold text-red-800"
        data-testid="signature-status"
        title="Signed by the server, but for another tenant, task, version or attempt, or not the newest version the server wrote: a signed record was copied here or newer ones were removed."
      >
        <span aria-hidden="true">✕</span> signature misplaced
      </span>
    );
  }
  return valid ? (
    <span
      className="inline-flex items-center gap-1 text-xs font-medium text-emerald-800"
      data-testid="signature-status"
    >
      <span aria-hidden="true">✔</span> signature verified
    </span>
  ) : (
    <span className="inline-flex items-center gap-1 text-xs font-semibold text-red-800" data-testid="signature-status">
      <span aria-hidden="true">✕</span> signature does not verify
    </span>
  );
}
