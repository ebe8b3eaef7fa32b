/**
 * The catalogue of the resume gate's reasons: one entry per {@link GateReasonCode}, from which the reporting order, the
 * task page's titles, who fixes a reason in the dashboard and the reasons that matter once a run has ended are all
 * derived (docs/decisions/0023-typed-catalogues.md). Pure and free of server imports: the task page's client part
 * reads it too.
 */
import type { GateReasonCode } from "@/lib/contract/api";
import type { Action } from "../authz";

/** What the gate and the dashboard know about one reason code. */
export type GateReasonEntry = {
  /**
   * `blocking`: the verdict is `stop` while the reason holds. `replay`: nothing blocks, but no mutation may start yet
   * (safe reads may repeat), so the verdict is `replay`. `notice`: said with every verdict and changes none (a rejected
   * write: the run must not make it, and the intent route refuses it, but nothing else is held back).
   */
  kind: "blocking" | "replay" | "notice";
  /** The reason's title on the task page. */
  title: string;
  /**
   * The permission (lib/domain/authz.ts PERMISSIONS) a person needs to fix the reason in the dashboard; null when no
   * person fixes it there (the runtime writes a new checkpoint, the vault issues a fresh credential, a snapshot is
   * restored again), so the reason's link only shows the evidence. Approval reasons are fixed by deciding (or
   * re-approving under the current policy) the approval they link to.
   */
  fix: Action | null;
  /**
   * Whether the reason still matters once the run has ended: it puts the run's outcome or its record in doubt. Reasons
   * that only bar going on (an expired or revoked credential, a revoked principal, a changed tool definition, a
   * missing approval) do not unsettle an ended run.
   */
  mattersAfterEnd: boolean;
};

/**
 * Every reason code, blocking codes first, each kind in its reporting order: a verdict lists its reasons in this order
 * (then by target), so the answer is stable. A unit test pins the order with a literal list.
 */
export const GATE_REASONS = {
  task_terminated: { kind: "blocking", title: "Task ended by a person", fix: null, mattersAfterEnd: false },
  record_signature_invalid: {
    kind: "blocking",
    title: "Task record signature does not verify",
    fix: null,
    mattersAfterEnd: true,
  },
  checkpoint_misplaced: {
    kind: "blocking",
    title: "Checkpoint signed for another place",
    fix: null,
    mattersAfterEnd: true,
  },
  evidence_mismatch: {
    kind: "blocking",
    title: "Stored state differs from its seal",
    fix: null,
    mattersAfterEnd: true,
  },
  principal_revoked: { kind: "blocking", title: "Principal revoked", fix: "principals.manage", mattersAfterEnd: false },
  policy_changed: { kind: "blocking", title: "Policy changed", fix: "approvals.decide", mattersAfterEnd: false },
  approval_missing: { kind: "blocking", title: "Approval missing", fix: "approvals.decide", mattersAfterEnd: false },
  approval_stale: { kind: "blocking", title: "Approval stale", fix: "approvals.decide", mattersAfterEnd: false },
  side_effect_unknown: {
    kind: "blocking",
    title: "Side effect outcome unknown",
    fix: "side_effects.reconcile",
    mattersAfterEnd: true,
  },
  sandbox_not_fresh: { kind: "blocking", title: "Sandbox of an earlier attempt", fix: null, mattersAfterEnd: false },
  snapshot_unverified: { kind: "blocking", title: "Snapshot not verified", fix: null, mattersAfterEnd: true },
  snapshot_stale: { kind: "blocking", title: "Snapshot older than the checkpoint", fix: null, mattersAfterEnd: true },
  credential_revoked: { kind: "blocking", title: "Credential revoked", fix: null, mattersAfterEnd: false },
  credential_expired: { kind: "blocking", title: "Credential expired", fix: null, mattersAfterEnd: false },
  egress_policy_inconsistent: {
    kind: "blocking",
    title: "Egress policy inconsistent",
    fix: "policies.manage",
    mattersAfterEnd: false,
  },
  tool_definition_changed: {
    kind: "blocking",
    title: "Tool definition changed",
    fix: "tools.accept",
    mattersAfterEnd: false,
  },
  no_checkpoint: { kind: "replay", title: "No checkpoint yet", fix: null, mattersAfterEnd: false },
  side_effect_in_flight: { kind: "replay", title: "Write in flight elsewhere", fix: null, mattersAfterEnd: false },
  constraints_unchecked: {
    kind: "replay",
    title: "Constraints not re-checked after a compaction",
    fix: null,
    mattersAfterEnd: false,
  },
  approval_rejected: { kind: "notice", title: "Approval rejected", fix: null, mattersAfterEnd: false },
} as const satisfies Record<GateReasonCode, GateReasonEntry>;

type CodeOfKind<K extends GateReasonEntry["kind"]> = {
  [C in GateReasonCode]: (typeof GATE_REASONS)[C]["kind"] extends K ? C : never;
}[GateReasonCode];

/** Codes that make the verdict `stop`. */
type BlockingCode = CodeOfKind<"blocking">;
/** Codes that, with nothing blocking, make the verdict `replay`. */
type ReplayCode = CodeOfKind<"replay">;

const CODES = Object.keys(GATE_REASONS) as GateReasonCode[];

/** Blocking codes in reporting order. */
export const BLOCKING_CODES: readonly BlockingCode[] = CODES.filter(
  (c): c is BlockingCode => GATE_REASONS[c].kind === "blocking",
);

/** Replay codes in reporting order. */
export const REPLAY_CODES: readonly ReplayCode[] = CODES.filter(
  (c): c is ReplayCode => GATE_REASONS[c].kind === "replay",
);

/** Codes said with any verdict, changing none. */
type NoticeCode = CodeOfKind<"notice">;

/** Notice codes in reporting order. */
export const NOTICE_CODES: readonly NoticeCode[] = CODES.filter(
  (c): c is NoticeCode => GATE_REASONS[c].kind === "notice",
);

const RANK = new Map<GateReasonCode, number>(
  [...BLOCKING_CODES, ...REPLAY_CODES, ...NOTICE_CODES].map((c, i) => [c, i]),
);

/** A code's place in reporting order: every blocking code before every replay code, notices last. */
export function reportingRank(code: GateReasonCode): number {
  return RANK.get(code) ?? RANK.size;
}
