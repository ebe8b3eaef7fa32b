"use client";

import Link from "next/link";
import type { GateVerdict } from "@/lib/client/types";
import { VerdictBadge } from "@/components/ui/status";

const CODE_TITLES: Record<string, string> = {
  record_signature_invalid: "Task record signature does not verify",
  principal_revoked: "Principal revoked",
  policy_changed: "Policy changed",
  approval_missing: "Approval missing",
  approval_stale: "Approval stale",
  side_effect_unknown: "Side effect outcome unknown",
  snapshot_unverified: "Snapshot not verified",
  credential_revoked: "Credential revoked",
  credential_expired: "Credential expired",
  egress_policy_inconsistent: "Egress policy inconsistent",
  tool_definition_changed: "Tool definition changed",
  side_effect_in_flight: "Write in flight elsewhere",
  no_checkpoint: "No checkpoint yet",
};

const SUMMARY = {
  resume: "The runtime may continue from its last checkpoint.",
  replay: "Safe reads may repeat; no new external write is permitted yet.",
  stop: "The runtime must not continue until every reason below is resolved.",
} as const;

/**
 * The resume gate's verdict with each reason in plain words and a link to the thing to fix. Once the run has ended
 * nothing waits on the gate: the panel then says so in neutral colours, and the verdict the record would get is
 * shown only as information (never as a green "Resume" that reads like an invitation to continue).
 */
export function GatePanel({
  gate,
  finishedPhase,
  error,
  onRetry,
}: {
  gate: GateVerdict;
  /** The terminal phase when the run has ended (done, stopped …), else null. */
  finishedPhase: string | null;
  error: Error | null;
  onRetry: () => void;
}) {
  const ended = finishedPhase !== null;
  return (
    <section
      aria-labelledby="gate-heading"
      className="rounded-lg border border-neutral-200 bg-white p-4"
      data-testid="gate-panel"
      data-state={ended ? "ended" : "live"}
    >
      <div className="flex flex-wrap items-center gap-3">
        <h2 id="gate-heading" className="text-sm font-semibold">Resume gate</h2>
        {ended ? (
          <>
            <span
              className="inline-flex items-center gap-1.5 rounded-md border border-neutral-300 bg-neutral-100 px-2.5 py-1 text-sm font-semibold text-neutral-800"
              data-testid="gate-run-ended"
            >
              <span aria-hidden="true">■</span> Run ended
            </span>
            <p className="text-sm text-neutral-700">
              The run has ended (phase <span className="font-mono">{finishedPhase}</span>); nothing is waiting on the gate.
            </p>
          </>
        ) : (
          <>
            <VerdictBadge verdict={gate.verdict} reasons={gate.reasons.length} />
            <p className="text-sm text-neutral-700">{SUMMARY[gate.verdict]}</p>
          </>
        )}
        {error ? (
          <p className="text-sm text-red-700">
            Could not refresh the verdict ({error.message}).{" "}
            <button type="button" className="underline" onClick={onRetry}>Retry</button>
          </p>
        ) : null}
      </div>
      {ended ? (
        <p className="mt-2 flex flex-wrap items-center gap-2 text-xs text-neutral-600">
          <span>For information, the gate would answer</span>
          <VerdictBadge verdict={gate.verdict} reasons={gate.reasons.length} muted />
          <span>
            {gate.verdict === "resume"
              ? "if a run asked to continue from the last checkpoint."
              : "if the run were resumed now, for the reasons below (for example, credentials that have since expired)."}
          </span>
        </p>
      ) : null}
      {gate.reasons.length ? (
        <ol className="mt-3 space-y-2">
          {gate.reasons.map((r, i) => (
            <li key={`${r.code}-${r.target}-${i}`} className="flex flex-wrap items-baseline gap-x-3 gap-y-1 rounded border border-neutral-200 px-3 py-2 text-sm" data-testid="gate-reason" data-code={r.code}>
              <span className="font-medium">{CODE_TITLES[r.code] ?? r.code}</span>
              <code className="font-mono text-xs text-neutral-500">{r.code}</code>
              <span className="basis-full text-neutral-700">{r.message}</span>
              <Link href={r.target} className="text-xs text-sky-800 underline">Go to the thing to fix</Link>
            </li>
          ))}
        </ol>
      ) : null}
      {!ended && gate.verdict === "resume" && gate.permitted_side_effects.length ? (
        <p className="mt-2 text-xs text-neutral-600">
          Writes it may start: {gate.permitted_side_effects.map((n) => <code key={n} className="mr-1 font-mono">{n}</code>)}
        </p>
      ) : null}
    </section>
  );
}
