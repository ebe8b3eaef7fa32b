/**
 * The side-effect state machine as data (docs/architecture.md#side-effects-and-the-gate, decision 0024): every move
 * a row of `side_effects` can make, named, with the statuses it may leave (`from`; `absent` = the row is created),
 * the statuses it may reach (`to`), and — per cause — who writes its audit entry. The statements in `statements.ts`
 * and `lease.ts` take their guards (`WHERE status IN …`) and target statuses from this table, and are typed by it: a
 * statement cannot name a status its transition does not allow. `tests/unit/side-effect-lifecycle.test.ts` pins the
 * edges and the audit rule.
 *
 * Causes:
 * - `request`: a call to the API (a runtime's intent, receipt or checkpoint, a person's reconcile or approval decision,
 *   an import); the actor is the caller.
 * - `event`: a runtime event the server stored (`side_effect.intent`, `side_effect.receipt`, `run.interrupted`,
 *   `sandbox.created` of a new attempt, `tool.called` of an ended attempt …); the actor is the key that sent it.
 * - `clock`: the server's clock (a lease that ran out, noticed by whichever read or write came first); the actor is
 *   the system actor `clock`.
 *
 * Audit: `own` — the lifecycle writes one `side_effect.transitioned` entry per moved effect (set-based, through the
 * pending audit path of decision 0020); otherwise the name of the entry that the calling verb writes for the same
 * change (the move is one of the facts it records).
 */
import type { SideEffectStatus } from "@/db/schema/enums";
import type { AuditAction } from "../../audit/actions";

/** The pseudo-status of an effect the server has no row for yet: a transition from it creates the row. */
export const ABSENT = "absent" as const;
export type Origin = SideEffectStatus | typeof ABSENT;

export type Cause = "request" | "event" | "clock";

/** The audit action of the entries the lifecycle writes itself. */
export const TRANSITION_AUDIT_ACTION = "side_effect.transitioned" as const;

/** `own`, or the action of the verb's entry that records the move (an action of lib/domain/audit/actions.ts). */
type AuditOf = "own" | AuditAction;

export type TransitionSpec = {
  from: readonly Origin[];
  to: readonly SideEffectStatus[];
  /** Which causes may make the move, and who audits it under each. */
  audit: Partial<Record<Cause, AuditOf>>;
  /** One sentence: when the move happens. */
  when: string;
};

export const TRANSITIONS = {
  intent_go: {
    from: [ABSENT, "not_started", "approved", "failed"],
    to: ["in_flight"],
    audit: { request: "side_effect.intent_recorded" },
    when: "The intent route gives a runtime the go for a write (a new effect, or a retry of one not yet applied).",
  },
  intent_replays_pending_receipt: {
    from: [ABSENT, "not_started", "approved", "failed"],
    to: ["completed"],
    audit: { request: "side_effect.intent_recorded" },
    when: "An intent finds a receipt for its key that arrived before it: the write happened, the effect completes.",
  },
  receipt_completes: {
    from: ["in_flight"],
    to: ["completed"],
    audit: { request: "side_effect.receipt_recorded", event: "own" },
    when: "A receipt (route or side_effect.receipt event) completes an in-flight write.",
  },
  receipt_not_applied: {
    from: ["in_flight"],
    to: ["not_started", "approved"],
    audit: { request: "side_effect.receipt_recorded", event: "own" },
    when: "A not_applied receipt (route or side_effect.receipt event) says nothing of an in-flight write was applied: back to where a retry starts (same key; approved only when the workspace lets a retry reuse the approval).",
  },
  reported_intent: {
    from: [ABSENT, "not_started", "approved", "failed"],
    to: ["in_flight", "completed"],
    audit: { event: "own" },
    when: "A side_effect.intent event reports a write the intent route would have allowed (completed at once when its receipt came first).",
  },
  reported_write_refused: {
    from: [ABSENT, "not_started", "approved", "awaiting_approval", "failed"],
    to: ["unknown"],
    audit: { event: "own" },
    when: "A side_effect.intent event reports a write the intent route would have refused (stale attempt, stop, missing approval).",
  },
  attempt_ended: {
    from: ["in_flight"],
    to: ["unknown"],
    audit: { request: "own", event: "own" },
    when: "The attempt that holds an in-flight write ends (interrupted, stopped, sandbox destroyed, or a newer attempt seen).",
  },
  orphan_call_declared: {
    from: ["not_started", "approved", "awaiting_approval", "failed"],
    to: ["unknown"],
    audit: { request: "own", event: "own" },
    when: "A mutating tool call of an ended attempt, with no outcome, belongs to a declared effect that never had an intent.",
  },
  orphan_call_created: {
    from: [ABSENT],
    to: ["unknown"],
    audit: { request: "own", event: "own" },
    when: "A mutating tool call of an ended attempt, with no outcome and no declared effect, becomes an effect of its own.",
  },
  lease_expired: {
    from: ["in_flight"],
    to: ["unknown"],
    audit: { clock: "own" },
    when: "An in-flight write's lease runs out before its receipt: noticed by the next read or write of the task.",
  },
  reconciled_completed: {
    from: ["unknown"],
    to: ["completed"],
    audit: { request: "side_effect.reconciled" },
    when: "A person settles an unknown effect as completed, with the receipt found.",
  },
  reconciled_not_applied: {
    from: ["unknown"],
    to: ["not_started", "approved"],
    audit: { request: "side_effect.reconciled" },
    when: "A person settles an unknown effect as not applied: back to where a retry starts (same key; approved only when the workspace lets a retry reuse the approval).",
  },
  declared: {
    from: [ABSENT],
    to: ["not_started", "awaiting_approval", "failed", "completed", "unknown"],
    audit: { request: "task.checkpointed" },
    when: "A checkpoint declares an effect the server did not know (the server's view of a known one never changes).",
  },
  approval_requested: {
    from: [ABSENT, "not_started"],
    to: ["awaiting_approval"],
    audit: { request: "approval.requested" },
    when: "An approval request is created for the effect: it waits for an approver.",
  },
  approval_granted: {
    from: ["awaiting_approval", "not_started"],
    to: ["approved"],
    audit: { request: "approval.decided" },
    when: "An approver approves the effect's request.",
  },
  approval_rejected: {
    from: ["awaiting_approval", "approved", "not_started"],
    to: ["awaiting_approval"],
    audit: { request: "approval.decided" },
    when: "An approver rejects the effect's request: it keeps waiting.",
  },
} as const satisfies Record<string, TransitionSpec>;

export type TransitionName = keyof typeof TRANSITIONS;
/** The statuses transition `T` may leave (including {@link ABSENT} when it creates rows). */
export type FromOf<T extends TransitionName> = (typeof TRANSITIONS)[T]["from"][number];
/** The statuses transition `T` may reach. */
export type ToOf<T extends TransitionName> = (typeof TRANSITIONS)[T]["to"][number];
/** The causes that may make transition `T`. */
export type CauseOf<T extends TransitionName> = keyof (typeof TRANSITIONS)[T]["audit"] & Cause;
/** Who audits transition `t` when `cause` makes it: `own` (the lifecycle) or the verb's action. */
export function auditOf<T extends TransitionName>(t: T, cause: CauseOf<T>): AuditOf {
  return (TRANSITIONS[t].audit as Partial<Record<Cause, AuditOf>>)[cause]!;
}

/** True when `status` is one transition `t` may leave. */
export function mayLeave<T extends TransitionName>(t: T, status: Origin): status is FromOf<T> {
  return (TRANSITIONS[t].from as readonly Origin[]).includes(status);
}

/** The existing-row statuses transition `t` may leave (its `from` without {@link ABSENT}). */
export function existingFrom<T extends TransitionName>(t: T): Array<Exclude<FromOf<T>, typeof ABSENT>> {
  return (TRANSITIONS[t].from as readonly Origin[]).filter((s) => s !== ABSENT) as Array<
    Exclude<FromOf<T>, typeof ABSENT>
  >;
}

/**
 * Every status the table lets an effect reach from `status`, over all transitions (the graph of the state machine).
 * @internal The lifecycle unit test walks the graph with it (terminal states reach nothing).
 */
export function reachableFrom(status: Origin): SideEffectStatus[] {
  const out = new Set<SideEffectStatus>();
  for (const spec of Object.values(TRANSITIONS) as TransitionSpec[])
    if (spec.from.includes(status)) for (const to of spec.to) out.add(to);
  return [...out].sort();
}
