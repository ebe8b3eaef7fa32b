"use client";

import Link from "next/link";
import type { Role } from "@/db/schema/enums";
import type { GateAskView, GateReasonCode, GateVerdict } from "@/lib/contract/api";
import { VerdictBadge } from "@/components/ui/status";
import { reasonFix } from "@/lib/domain/gate/fixers";
import { FreshCredentialSteps } from "./FreshCredentialSteps";
import { GATE_REASONS } from "@/lib/domain/gate/reasons";
import { GateAsks } from "./GateAsks";
import { AcceptToolButton, toolOfTarget } from "./AcceptToolButton";

const SUMMARY = {
  resume: "The runtime may continue from its last checkpoint.",
  replay: "Safe reads may repeat; no new external write is permitted yet.",
  stop: "The runtime must not continue until every reason below is resolved.",
} as const;

/**
 * How an ended run stands ("a run cannot end quietly with a write unknown"):
 * - `quiet`: nothing waits on a person;
 * - `write_unknown`: a side effect's outcome is unknown: somebody must reconcile it whatever the phase says;
 * - `gate_stop`: the gate stops for a reason about what the run did or the record it left (the catalogue's
 *   `mattersAfterEnd`, lib/domain/gate/reasons.ts). Reasons that only bar going on do not unsettle a run that has
 *   ended: they stay shown as information.
 */
export type EndedState = "quiet" | "write_unknown" | "gate_stop";

/** Whether a reason still matters once a run has ended (false for a code this build does not know). */
const mattersAfterEnd = (code: GateReasonCode) =>
  Object.hasOwn(GATE_REASONS, code) && GATE_REASONS[code].mattersAfterEnd;

/** The title of a reason on the page (the code itself for a code this build does not know). */
const reasonTitle = (code: GateReasonCode): string =>
  Object.hasOwn(GATE_REASONS, code) ? GATE_REASONS[code].title : code;

/** The {@link EndedState} of an ended run from its unknown side effects and the gate's verdict. */
export function endedState(
  unknownEffects: readonly string[],
  gate: Pick<GateVerdict, "verdict" | "reasons">,
): EndedState {
  if (unknownEffects.length > 0) return "write_unknown";
  return gate.verdict === "stop" && gate.reasons.some((r) => mattersAfterEnd(r.code)) ? "gate_stop" : "quiet";
}

/** "a", "a and b", "a, b and c" (or with "or"). */
function list(names: readonly string[], conjunction: "and" | "or" = "and"): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} ${conjunction} ${names.at(-1)}`;
}

/**
 * The resume gate's verdict with each reason in plain words and a link to it: "Go to the thing to fix" only for a
 * role that may fix it (lib/domain/gate/fixers.ts), else a "View" link. Under the verdict, when the runtime last
 * asked the gate. Once the run has ended and nothing waits, the panel says so in neutral colours, and the verdict
 * the record would get is shown only as information (never as a green "Resume" that reads like an invitation to
 * continue). An ended run with an unknown write, or one the gate stops, says that instead: it did not end quietly.
 */
export function GatePanel({
  gate,
  finishedPhase,
  unknownEffects,
  role,
  asks,
  error,
  onRetry,
  taskId,
}: {
  gate: GateVerdict;
  /** The task's id (for the actions a reason offers, such as accepting a tool's new definition). */
  taskId?: string;
  /** The terminal phase when the run has ended (done, stopped …), else null. */
  finishedPhase: string | null;
  /** Names of the task's side effects whose outcome is unknown. */
  unknownEffects: readonly string[];
  /** The viewer's role: which reasons they may act on. */
  role: Role;
  /** The runtime's gate asks, with `asOf` (epoch ms, browser clock) when they were read and the current attempt. */
  asks: { list: readonly GateAskView[]; asOf: number; currentAttempt: number };
  error: Error | null;
  onRetry: () => void;
}) {
  const ended = finishedPhase !== null;
  const state = ended ? endedState(unknownEffects, gate) : null;
  const quiet = state === "quiet";
  return (
    <section
      aria-labelledby="gate-heading"
      className="rounded-lg border border-neutral-200 bg-white p-4"
      data-testid="gate-panel"
      data-state={!ended ? "live" : quiet ? "ended" : "ended-unresolved"}
    >
      <div className="flex flex-wrap items-center gap-3">
        <h2 id="gate-heading" className="text-sm font-semibold">
          Resume gate
        </h2>
        {quiet ? (
          <>
            <span
              className="inline-flex items-center gap-1.5 rounded-md border border-neutral-300 bg-neutral-100 px-2.5 py-1 text-sm font-semibold text-neutral-800"
              data-testid="gate-run-ended"
            >
              <span aria-hidden="true">■</span> Run ended
            </span>
            <p className="text-sm text-neutral-700">
              The run has ended (phase <span className="font-mono">{finishedPhase}</span>); nothing is waiting on the
              gate.
            </p>
          </>
        ) : ended ? (
          <>
            <span
              className="inline-flex items-center gap-1.5 rounded-md border border-amber-300 bg-amber-50 px-2.5 py-1 text-sm font-semibold text-amber-900"
              data-testid="gate-run-ended"
              data-unresolved={state}
            >
              <span aria-hidden="true">?</span> Run ended, not settled
            </span>
            <VerdictBadge verdict={gate.verdict} reasons={gate.reasons.length} />
            <p className="basis-full text-sm text-neutral-800" data-testid="gate-ended-unresolved">
              {state === "write_unknown" ? (
                <>
                  The run ended (phase <span className="font-mono">{finishedPhase}</span>) with{" "}
                  {unknownEffects.length === 1 ? "a write" : `${unknownEffects.length} writes`} whose outcome is
                  unknown: <span className="font-mono">{list(unknownEffects)}</span>. The request may have reached the
                  external system; reconcile {unknownEffects.length === 1 ? "it" : "them"} before anyone relies on the
                  result or runs the task again.
                </>
              ) : (
                <>
                  The run ended (phase <span className="font-mono">{finishedPhase}</span>), but the gate says stop for
                  reasons that put its outcome in doubt: check the reasons below before anyone relies on the result.
                </>
              )}
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
            <button type="button" className="underline" onClick={onRetry}>
              Retry
            </button>
          </p>
        ) : null}
      </div>
      {quiet ? (
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
      <GateAsks asks={asks.list} asOf={asks.asOf} currentAttempt={asks.currentAttempt} live={!ended} />
      {gate.reasons.length ? (
        <ol className="mt-3 space-y-2">
          {gate.reasons.map((r, i) => (
            <li
              key={`${r.code}-${r.target}-${i}`}
              id={gate.reasons.findIndex((x) => x.code === r.code) === i ? `gate-reason-${r.code}` : undefined}
              className="flex flex-wrap items-baseline gap-x-3 gap-y-1 rounded border border-neutral-200 px-3 py-2 text-sm"
              data-testid="gate-reason"
              data-code={r.code}
            >
              <span className="font-medium">{reasonTitle(r.code)}</span>
              <code className="font-mono text-xs text-neutral-600">{r.code}</code>
              <span className="basis-full text-neutral-700">{r.message}</span>
              <ReasonLink code={r.code} target={r.target} role={role} />
              {r.code === "tool_definition_changed" && taskId && reasonFix(r.code, role).kind === "can_fix"
                ? (() => {
                    const named = toolOfTarget(r.target);
                    return named ? <AcceptToolButton taskId={taskId} tool={named.tool} digest={named.digest} /> : null;
                  })()
                : null}
              {(r.code === "credential_revoked" || r.code === "credential_expired") && taskId ? (
                <FreshCredentialSteps message={r.message} taskId={taskId} />
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
      {!ended && gate.verdict === "resume" && gate.permitted_side_effects.length ? (
        <p className="mt-2 text-xs text-neutral-600">
          Writes it may start:{" "}
          {gate.permitted_side_effects.map((n) => (
            <code key={n} className="mr-1 font-mono">
              {n}
            </code>
          ))}
        </p>
      ) : null}
    </section>
  );
}

/** The link of one reason: to the place to act for a role that may, else a "View" link (and who may act). */
function ReasonLink({ code, target, role }: { code: GateReasonCode; target: string; role: Role }) {
  const fix = reasonFix(code, role);
  if (fix.kind === "can_fix") {
    return (
      <Link href={target} className="text-xs text-sky-800 underline" data-testid="gate-reason-link" data-fix="can_fix">
        Go to the thing to fix
      </Link>
    );
  }
  return (
    <span className="inline-flex flex-wrap items-baseline gap-x-2 text-xs text-neutral-700">
      <Link href={target} className="text-sky-800 underline" data-testid="gate-reason-link" data-fix={fix.kind}>
        View
      </Link>
      {fix.kind === "other_roles" ? (
        <span>
          (only{" "}
          {list(
            fix.roles.map((r) => `${r}s`),
            "or",
          )}{" "}
          can act on this)
        </span>
      ) : null}
    </span>
  );
}
