/**
 * Status words of custody maps and exercises (UX.md "Status language": a word and an icon, never colour alone):
 * verification, decision, map status, recommendation, exercise outcome, step status.
 */
import type { ReactNode } from "react";
import { HourglassIcon } from "@/components/ui/HourglassIcon";
import type {
  Decision,
  ExerciseOutcome,
  MapStatus,
  Recommendation,
  StepStatus,
  Verification,
} from "@/lib/contract/maps";
import { OUTCOME_GUIDE, STEP_STATUS_WORD } from "@/lib/domain/exercises/guide";

const pill = "inline-flex items-center gap-1 whitespace-nowrap rounded-full border px-2 py-0.5 text-xs font-medium";

const VERIFICATION: Record<Verification, { word: string; icon: string; cls: string; hint: string }> = {
  unknown: {
    word: "unknown",
    icon: "?",
    cls: "border-amber-300 bg-amber-50 text-amber-900",
    hint: "No evidence linked yet.",
  },
  verified: {
    word: "verified",
    icon: "✔",
    cls: "border-emerald-300 bg-emerald-50 text-emerald-800",
    hint: "Evidence shows the answer is yes.",
  },
  failed: {
    word: "failed",
    icon: "✕",
    cls: "border-red-300 bg-red-50 text-red-800",
    hint: "Evidence shows the answer is no.",
  },
};

export function VerificationBadge({ value }: { value: Verification }) {
  const v = VERIFICATION[value];
  return (
    <span className={`${pill} ${v.cls}`} title={v.hint} data-testid="verification" data-verification={value}>
      <span aria-hidden="true">{v.icon}</span>
      {v.word}
    </span>
  );
}

const DECISION: Record<Decision | "none", { word: string; icon: ReactNode; cls: string }> = {
  none: { word: "undecided", icon: "○", cls: "border-neutral-300 bg-neutral-50 text-neutral-700" },
  accept: { word: "accept", icon: "✔", cls: "border-emerald-300 bg-emerald-50 text-emerald-800" },
  constrain: { word: "constrain", icon: "◐", cls: "border-sky-300 bg-sky-50 text-sky-900" },
  request_evidence: {
    word: "evidence requested",
    icon: <HourglassIcon />,
    cls: "border-amber-300 bg-amber-50 text-amber-900",
  },
};

export function DecisionBadge({ value }: { value: Decision | null }) {
  const d = DECISION[value ?? "none"];
  return (
    <span className={`${pill} ${d.cls}`} data-testid="decision" data-decision={value ?? "none"}>
      <span aria-hidden="true">{d.icon}</span>
      {d.word}
    </span>
  );
}

export function MapStatusBadge({ status, version }: { status: MapStatus; version: number }) {
  return status === "published" ? (
    <span
      className={`${pill} border-emerald-300 bg-emerald-50 text-emerald-800`}
      data-testid="map-status"
      data-status={status}
    >
      <span aria-hidden="true">■</span>v{version} published
    </span>
  ) : (
    <span
      className={`${pill} border-neutral-300 bg-white text-neutral-800`}
      data-testid="map-status"
      data-status={status}
    >
      <span aria-hidden="true">✎</span>v{version} draft
    </span>
  );
}

const RECOMMENDATION: Record<Recommendation, { word: string; icon: string; cls: string }> = {
  not_ready: { word: "not ready", icon: "○", cls: "border-neutral-300 bg-neutral-50 text-neutral-800" },
  hold: { word: "hold", icon: "■", cls: "border-red-300 bg-red-50 text-red-800" },
  adopt_with_constraints: { word: "adopt with constraints", icon: "◐", cls: "border-sky-300 bg-sky-50 text-sky-900" },
  adopt: { word: "adopt", icon: "▶", cls: "border-emerald-300 bg-emerald-50 text-emerald-800" },
};

export function RecommendationBadge({ value, large = false }: { value: Recommendation; large?: boolean }) {
  const r = RECOMMENDATION[value];
  return (
    <span
      className={`${pill} ${r.cls} ${large ? "px-2.5 py-1 text-sm font-semibold" : ""}`}
      data-testid="recommendation"
      data-recommendation={value}
    >
      <span aria-hidden="true">{r.icon}</span>
      {r.word}
    </span>
  );
}

const OUTCOME_CLS: Record<ExerciseOutcome, string> = {
  safe_resume: "border-emerald-300 bg-emerald-50 text-emerald-800",
  safe_replay: "border-emerald-300 bg-emerald-50 text-emerald-800",
  visible_stop: "border-sky-300 bg-sky-50 text-sky-900",
  unsafe: "border-red-300 bg-red-50 text-red-800",
};

export function OutcomeBadge({ value }: { value: ExerciseOutcome | null }) {
  if (!value)
    return (
      <span className={`${pill} border-neutral-300 bg-white text-neutral-700`} data-testid="outcome">
        in progress
      </span>
    );
  const o = OUTCOME_GUIDE[value];
  return (
    <span className={`${pill} ${OUTCOME_CLS[value]}`} title={o.meaning} data-testid="outcome" data-outcome={value}>
      <span aria-hidden="true">{o.icon}</span>
      {o.word}
    </span>
  );
}

const STEP_CLS: Record<StepStatus, string> = {
  pending: "border-neutral-300 bg-white text-neutral-700",
  passed: "border-emerald-300 bg-emerald-50 text-emerald-800",
  failed: "border-red-300 bg-red-50 text-red-800",
  blocked: "border-amber-300 bg-amber-50 text-amber-900",
};

export function StepStatusBadge({ value }: { value: StepStatus }) {
  const s = STEP_STATUS_WORD[value];
  return (
    <span className={`${pill} ${STEP_CLS[value]}`} data-testid="step-status" data-status={value}>
      <span aria-hidden="true">{s.icon}</span>
      {s.word}
    </span>
  );
}

/** "3 of 8" with a small bar; the bar is decoration, the words carry the figure. */
export function ProgressFigure({ label, n, total }: { label: string; n: number; total: number }) {
  const pct = total ? Math.round((n / total) * 100) : 0;
  return (
    <div className="min-w-24">
      <div className="flex items-baseline justify-between gap-2 text-xs text-neutral-700">
        <span>{label}</span>
        <span className="tabular-nums font-medium text-neutral-900">
          {n}/{total}
        </span>
      </div>
      <div className="mt-0.5 h-1.5 rounded bg-neutral-200" aria-hidden="true">
        <div className="h-1.5 rounded bg-neutral-700" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}
