/**
 * The resume gate (docs/concepts.md#resume-gate): a pure function from stored facts to a verdict.
 *
 * - `stop` when any blocking reason exists; every blocking reason is listed, in the fixed reporting order of the
 *   catalogue lib/domain/gate/reasons.ts (then by target), so the answer is stable;
 * - `replay` when nothing blocks but a mutation may not start yet (an older attempt's intent is still live, or there
 *   is no checkpoint to resume from): safe reads may repeat;
 * - `resume` otherwise.
 * It is enforced, not advisory: {@link writePermission} turns the same verdict into the intent route's answer, so the
 * gate and the intent route cannot disagree (decision 0006). A checkpoint that does not verify never feeds
 * the answer: `next_phase` and the tool definitions come from the latest checkpoint that verifies.
 * Credentials are judged from the vault lane (revoked, expired, past their `expires_at`) and, while a policy is active,
 * against it ({@link GateFacts.credential_policy}): one the current version no longer declares is revoked, one held
 * longer than its `ttl` (counted from the server's receive time) is expired.
 * Approval and policy facts come through {@link GateFacts.approvals} and {@link GateFacts.policy}: gathered by
 * lib/domain/approvals/gate.ts (`approval_missing`, `approval_stale`, `policy_changed`) from the same standing the
 * intent route answers for its own effect. Without them (pure tests), an effect awaiting approval is `approval_missing`.
 */
import type { SideEffectStatus } from "@/db/schema/enums";
import type { GateReason, GateVerdict } from "@/lib/contract/api";
import { assertNever } from "../assert-never";
import { GATE_REASONS, reportingRank } from "./reasons";
import { toolDefinitionChanges, type AcceptedToolDefinition, type ToolDefinitionReport } from "./tools";
import { policyVersionName } from "../policies/version-name";

/** Who reported a changed tool definition, in a reason's words. */
const TOOL_SOURCE: Record<ToolDefinitionReport["source"], string> = {
  event: "reported by a tool.definition_changed event",
  checkpoint: "named by the latest checkpoint",
  request: "named by this request",
};

export type GateFacts = {
  now: Date;
  task: {
    task_id: string;
    phase: string;
    principal: string | null;
    current_attempt: number;
    /** A person ended the task (lib/domain/tasks/terminate.ts): the gate answers stop for good. Absent: not ended. */
    terminated?: { at: string; by: string; reason: string } | null;
  };
  /** Latest checkpoint; null before the first one. */
  checkpoint: GateCheckpoint | null;
  /**
   * The latest checkpoint whose signature verifies (the one to resume from); null when none does. When absent, the
   * latest checkpoint stands for it if it verifies.
   */
  verified_checkpoint?: GateCheckpoint | null;
  /**
   * The attempt asking (a runtime's own attempt, from the request); defaults to the task's current attempt. An intent
   * still live from an attempt older than this holds new writes back.
   */
  asking_attempt?: number | null;
  principal_revocation: { principal: string; reason: string; revoked_at: string } | null;
  side_effects: Array<{
    name: string;
    status: SideEffectStatus;
    status_reason: string | null;
    lease_expires_at: string | null;
    /** The attempt whose intent put it in flight (null when unknown). */
    intent_attempt?: number | null;
  }>;
  /**
   * Effects whose stored state (status, receipt) is not what the server sealed when it moved them (decision 0035):
   * changed outside the server. Absent in pure tests without seals.
   */
  unsealed_effects?: string[];
  /** Digests of `snapshot.saved` events of this task. */
  snapshots_saved: string[];
  /**
   * `snapshot.restored` events that count for the current attempt. `after_checkpoint`: the server received it after the
   * checkpoint to resume from (absent: yes); only those are held to the snapshot that checkpoint names.
   */
  snapshots_restored: Array<{
    event_id: string;
    digest: string | null;
    snapshot_id: string | null;
    after_checkpoint?: boolean;
  }>;
  /**
   * Sandboxes the current attempt reports (its `sandbox.created` / `sandbox.replaced`) under the sandbox id of an earlier
   * attempt, with no `sandbox.verified` of this attempt for that id (docs/concepts.md#attempts-and-fencing). Absent or
   * empty when none.
   */
  sandboxes_reused?: Array<{ event_id: string; sandbox_id: string; attempt: number; earlier_attempt: number }>;
  /** Latest instance of each credential the run holds (by credential_ref). */
  credentials: Array<{
    credential_ref: string;
    credential_id: string | null;
    revoked_at: string | null;
    expired_at: string | null;
    expires_at: string | null;
    /**
     * When the server received the `credential.issued` of this instance (or, without one, its first
     * `credential.attached`): the server's clock, from which a policy `ttl` counts. Null or absent when unknown.
     */
    held_since?: string | null;
  }>;
  /**
   * The current policy's credentials (docs/concepts.md#gate-reason-codes): a credential the run holds that the current
   * version does not declare counts as revoked, one held longer than its `ttl` as expired. Null or absent while no
   * policy is active.
   */
  credential_policy?: {
    version: number;
    credentials: ReadonlyArray<{ name: string; ttl_seconds: number | null; ttl: string | null }>;
  } | null;
  /**
   * Tool name → definition digest the asking request says the runtime has now (a resume body): it can only add a
   * `tool_definition_changed`, never remove one (decision 0033).
   */
  tool_definitions_now: Record<string, string>;
  /**
   * The task's accepted tool definitions (lib/domain/gate/tools.ts); absent in pure tests, where the checkpoint resumed
   * from stands for them.
   */
  tool_definitions_accepted?: AcceptedToolDefinition[];
  /** Definitions the server received for the task's tools (events and the latest checkpoint), in receive order. */
  tool_definition_reports?: ToolDefinitionReport[];
  /** The latest context compaction no `constraint.checked` followed (receive order), or null / absent. */
  compaction_unchecked?: { event_id: string; occurred_at: string } | null;
  /**
   * Approval reasons from lib/domain/approvals/gate.ts (approval_missing / approval_stale); absent in pure tests
   * without approval facts.
   */
  approvals?: GateReason[];
  /**
   * Policy reasons: policy_changed from lib/domain/approvals/gate.ts, egress_policy_inconsistent from
   * lib/domain/policies/egress.ts; absent in pure tests without policy facts.
   */
  policy?: GateReason[];
};

export type GateCheckpoint = {
  version: number;
  phase: string;
  signature_valid: boolean;
  /**
   * The record's signature verifies, but not in this place: its binding names another tenant, task, version or
   * attempt, or it is not the newest version the server wrote (decision 0035). `signature_valid` is then false.
   */
  misplaced?: boolean;
  created_at: string;
  tool_definitions: Record<string, string> | null;
  /**
   * The snapshot the checkpoint names: its record's `snapshot`, or else the latest `snapshot.saved` the server received
   * before it (or one saved since). A restore after the checkpoint must bring back this one (`snapshot_stale`). Null or
   * absent: none.
   */
  snapshot?: {
    digest: string;
    snapshot_id: string | null;
    /**
     * When the record names no snapshot: digests saved since the one that stands for it (a runtime that snapshots
     * right after checkpointing restores one of these), which count as the checkpoint's too.
     */
    also_current?: string[];
  } | null;
};

const enc = encodeURIComponent;

/** A stored reason as a clause: no final full stop, so it can sit inside a sentence without nesting brackets. */
const clause = (text: string) => text.trim().replace(/\.$/, "");

/**
 * The `evidence_mismatch` reason for an effect whose stored state is not what the server sealed (decision 0035): the
 * gate's, and the receipt route's and events path's when they refuse to replay or move such a row (decision 0036).
 */
export function unsealedEffectReason(taskId: string, name: string): GateReason {
  return {
    code: "evidence_mismatch",
    message: `${name}: its stored state is not what the server sealed when it last moved it (status or receipt changed outside the server, e.g. directly in the database). Do not trust its status or receipt: find what really happened with the tool's owner, and ask an administrator to restore the row from the audit log before resuming.`,
    target: `/tasks/${enc(taskId)}?tab=side-effects&effect=${enc(name)}`,
  };
}

/** Evaluates the gate. Pure: same facts, same verdict. */
export function evaluateGate(f: GateFacts): GateVerdict {
  // Every reason found; whether it stops or replays is the catalogue's word (lib/domain/gate/reasons.ts).
  const found: GateReason[] = [];
  const taskLink = `/tasks/${enc(f.task.task_id)}`;

  if (f.task.terminated) {
    found.push({
      code: "task_terminated",
      message: `${f.task.terminated.by} ended this task at ${f.task.terminated.at} (${f.task.terminated.reason.replace(/\.$/, "")}). It may not checkpoint or write again; start a new task to go on.`,
      target: taskLink,
    });
  }

  const verified =
    f.verified_checkpoint !== undefined ? f.verified_checkpoint : f.checkpoint?.signature_valid ? f.checkpoint : null;
  if (f.checkpoint && !f.checkpoint.signature_valid && f.checkpoint.misplaced) {
    found.push({
      code: "checkpoint_misplaced",
      message: `Checkpoint v${f.checkpoint.version} is signed, but not for this place: its signature binds it to another tenant, task, version or attempt, or it is not the newest version the server wrote. A signed record was copied over this one or newer ones were removed. Do not resume from it; ${verified ? `the latest checkpoint that verifies in its place is v${verified.version}. ` : "no checkpoint of this task verifies in its place. "}Write a new checkpoint from verified facts.`,
      target: `${taskLink}?tab=checkpoints`,
    });
  } else if (f.checkpoint && !f.checkpoint.signature_valid) {
    found.push({
      code: "record_signature_invalid",
      message: `Checkpoint v${f.checkpoint.version} does not verify against the server's signing key: the stored record was altered or signed elsewhere. Do not resume from it; ${verified ? `the latest checkpoint that verifies is v${verified.version}. ` : "no checkpoint of this task verifies. "}Write a new checkpoint from verified facts.`,
      target: `${taskLink}?tab=checkpoints`,
    });
  }

  for (const name of f.unsealed_effects ?? []) found.push(unsealedEffectReason(f.task.task_id, name));

  if (f.principal_revocation) {
    found.push({
      code: "principal_revoked",
      message: `The principal ${f.principal_revocation.principal} was revoked (${f.principal_revocation.reason}); the run no longer has anyone's authority to act.`,
      target: "/settings/members#principals",
    });
  }

  for (const r of [...(f.policy ?? []), ...(f.approvals ?? [])]) found.push(r);
  // Without approval facts (pure tests), an effect waiting for an approval is missing it: the intent route refuses
  // it with approval_required, and the gate says the same.
  if (f.approvals === undefined) {
    for (const e of f.side_effects) {
      if (e.status !== "awaiting_approval") continue;
      found.push({
        code: "approval_missing",
        message: `${e.name} waits for an approver's decision and none is recorded; the write may not start until an approver approves it.`,
        target: `${taskLink}?tab=side-effects&effect=${enc(e.name)}`,
      });
    }
  }

  const nowMs = f.now.getTime();
  const asking = Math.max(f.asking_attempt ?? 0, f.task.current_attempt);
  for (const e of f.side_effects) {
    const leaseExpired =
      e.status === "in_flight" && e.lease_expires_at !== null && Date.parse(e.lease_expires_at) < nowMs;
    if (e.status === "unknown" || leaseExpired) {
      const why = e.status_reason ? clause(e.status_reason) : leaseExpired ? "its lease ran out" : "";
      found.push({
        code: "side_effect_unknown",
        message: `${e.name}: the request may have been sent but no receipt was recorded${why ? `. Why: ${why}` : ""}. Reconcile it before any retry.`,
        target: `${taskLink}?tab=side-effects&effect=${enc(e.name)}`,
      });
    } else if (
      e.status === "in_flight" &&
      (e.intent_attempt === null || e.intent_attempt === undefined || e.intent_attempt < asking)
    ) {
      // Writes of the asking attempt may run side by side; a live lease of an older attempt holds new writes back.
      found.push({
        code: "side_effect_in_flight",
        message: `${e.name}: an intent of ${e.intent_attempt ? `attempt ${e.intent_attempt}` : "an earlier attempt"} is live${e.lease_expires_at ? ` until ${e.lease_expires_at}` : ""}; wait for its receipt, or for its lease to run out, before new writes.`,
        target: `${taskLink}?tab=side-effects&effect=${enc(e.name)}`,
      });
    }
  }

  for (const r of f.sandboxes_reused ?? []) {
    found.push({
      code: "sandbox_not_fresh",
      message: `Attempt ${r.attempt} reports sandbox ${r.sandbox_id}, the sandbox of attempt ${r.earlier_attempt}: a live container re-attached instead of a fresh one may still hold what the earlier attempt left (processes, files, grants). Start a fresh sandbox, or report sandbox.verified for attempt ${r.attempt} once its identity and grants were verified again.`,
      target: `${taskLink}?event=${enc(r.event_id)}`,
    });
  }

  const saved = new Set(f.snapshots_saved);
  const named = verified?.snapshot ?? null;
  for (const s of f.snapshots_restored) {
    if (!s.digest || !saved.has(s.digest)) {
      found.push({
        code: "snapshot_unverified",
        message: `Snapshot ${s.snapshot_id ?? ""}${s.snapshot_id ? " " : ""}was restored with digest ${s.digest ?? "(none)"}, which matches no snapshot this task saved. Treat its contents as untrusted; restore a verified snapshot or rebuild.`,
        target: `${taskLink}?event=${enc(s.event_id)}`,
      });
    } else if (
      named &&
      s.after_checkpoint !== false &&
      s.digest !== named.digest &&
      !(named.also_current ?? []).includes(s.digest)
    ) {
      // A verified snapshot, but not the one the checkpoint to resume from names: resuming at that checkpoint's phase
      // from another state would repeat or skip work.
      found.push({
        code: "snapshot_stale",
        message: `Snapshot ${s.snapshot_id ?? ""}${s.snapshot_id ? " " : ""}(digest ${s.digest.slice(0, 19)}…) was restored, but checkpoint v${verified!.version} resumes at phase ${verified!.phase} from snapshot ${named.snapshot_id ?? ""}${named.snapshot_id ? " " : ""}(digest ${named.digest.slice(0, 19)}…). Restore the snapshot the checkpoint names, or checkpoint again from the state restored.`,
        target: `${taskLink}?event=${enc(s.event_id)}`,
      });
    }
  }

  for (const c of f.credentials) {
    const label = `${c.credential_ref}${c.credential_id ? ` (${c.credential_id})` : ""}`;
    if (c.revoked_at) {
      found.push({
        code: "credential_revoked",
        message: `Credential ${label} was revoked at ${c.revoked_at}; issue a fresh credential through the vault before resuming.`,
        target: `${taskLink}?plane=vault`,
      });
    } else if (c.expired_at || (c.expires_at && Date.parse(c.expires_at) <= nowMs)) {
      found.push({
        code: "credential_expired",
        message: `Credential ${label} expired at ${c.expired_at ?? c.expires_at}; issue a fresh credential before resuming.`,
        target: `${taskLink}?plane=vault`,
      });
    } else if (f.credential_policy) {
      // The policy's word on the credential, judged on the server's clock (never the runtime's).
      const policy = f.credential_policy;
      const declared = policy.credentials.find((d) => d.name === c.credential_ref);
      if (!declared) {
        found.push({
          code: "credential_revoked",
          message: `Credential ${label} was removed from policy ${policyVersionName(policy.version)}: the current policy no longer declares it, so the run holds authority nobody grants any more. Revoke it in the vault and issue a credential the current policy declares (or declare it again in a new version) before resuming.`,
          target: `/policies?v=${policy.version}`,
        });
      } else if (declared.ttl_seconds !== null && c.held_since) {
        const until = Date.parse(c.held_since) + declared.ttl_seconds * 1000;
        if (Number.isFinite(until) && until <= nowMs) {
          found.push({
            code: "credential_expired",
            message: `Credential ${label} outlived its ttl of ${declared.ttl} in policy ${policyVersionName(policy.version)}: the server received its issue at ${c.held_since}, so it expired at ${new Date(until).toISOString()}. Issue a fresh credential before resuming.`,
            target: `${taskLink}?plane=vault`,
          });
        }
      }
    }
  }

  // Tool definitions (decision 0033): the server's reports and the request's own claim against the accepted ones; the
  // request can only add a change. Without stored acceptances (pure tests), the checkpoint resumed from stands for them.
  const accepted =
    f.tool_definitions_accepted ??
    Object.entries(verified?.tool_definitions ?? {}).map(([tool, digest]) => ({ tool, digest, since: null }));
  const changes = toolDefinitionChanges(accepted, [
    ...(f.tool_definition_reports ?? []),
    ...Object.entries(f.tool_definitions_now).map(([tool, digest]) => ({
      tool,
      digest,
      source: "request" as const,
      received_at: null,
    })),
  ]);
  for (const c of changes) {
    found.push({
      code: "tool_definition_changed",
      message: `Tool ${c.tool} changed (${TOOL_SOURCE[c.source]}): the accepted definition digest was ${c.accepted}, now ${c.reported}. A person must review and accept the new definition before the run resumes; a checkpoint carrying it does not end this stop, and approvals given under the old definition are stale.`,
      target: `${taskLink}?tab=checkpoints&tool=${enc(c.tool)}&definition_digest=${enc(c.reported)}`,
    });
  }

  if (f.compaction_unchecked) {
    found.push({
      code: "constraints_unchecked",
      message: `The run's context was compacted (${f.compaction_unchecked.occurred_at}) and its constraints were not re-checked since: a summary may have dropped them. Re-check the task's constraints (report constraint.checked) before the next mutation; reads may go on.`,
      target: `${taskLink}?event=${enc(f.compaction_unchecked.event_id)}`,
    });
  }

  if (!f.checkpoint) {
    found.push({
      code: "no_checkpoint",
      message:
        "No task record has been checkpointed yet: there is no verified state to resume from; start from the inputs (reads only) and checkpoint.",
      target: taskLink,
    });
  }

  const blocking: GateReason[] = [];
  const replay: GateReason[] = [];
  const notices: GateReason[] = [];
  for (const r of found) {
    const kind = GATE_REASONS[r.code].kind;
    switch (kind) {
      case "blocking":
        blocking.push(r);
        break;
      case "replay":
        replay.push(r);
        break;
      case "notice":
        notices.push(r);
        break;
      default:
        assertNever(kind);
    }
  }
  const sortReasons = (rs: GateReason[]) =>
    [...rs].sort(
      (a, b) =>
        reportingRank(a.code) - reportingRank(b.code) || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0),
    );

  // Never a phase read from a record that does not verify.
  const next_phase = verified?.phase ?? "start";
  if (blocking.length) {
    return { verdict: "stop", reasons: sortReasons([...blocking, ...notices]), next_phase, permitted_side_effects: [] };
  }
  if (replay.length) {
    return { verdict: "replay", reasons: sortReasons([...replay, ...notices]), next_phase, permitted_side_effects: [] };
  }
  const permitted = f.side_effects
    .filter((e) => e.status === "not_started" || e.status === "approved" || e.status === "failed")
    .map((e) => e.name)
    .sort();
  return { verdict: "resume", reasons: sortReasons(notices), next_phase, permitted_side_effects: permitted };
}

/** The intent route's answer for a new write, from the gate's verdict. */
export type WritePermission =
  | { allowed: true }
  | { allowed: false; code: "principal_revoked" | "gate_stop" | "gate_replay"; reasons: GateReason[]; message: string };

/**
 * Whether a new write may start, decided from the same verdict the gate gives (docs/concepts.md#resume-gate: enforced,
 * not advisory). A revoked principal stops every intent, reads included; otherwise a read (`mutation: false`) may go,
 * and a mutation may go only when the verdict is `resume`.
 */
export function writePermission(verdict: GateVerdict, mutation: boolean): WritePermission {
  const revoked = verdict.reasons.filter((r) => r.code === "principal_revoked");
  if (revoked.length) {
    return { allowed: false, code: "principal_revoked", reasons: revoked, message: revoked[0]!.message };
  }
  if (!mutation || verdict.verdict === "resume") return { allowed: true };
  const codes = verdict.reasons.map((r) => r.code).join(", ");
  if (verdict.verdict === "stop") {
    return {
      allowed: false,
      code: "gate_stop",
      reasons: verdict.reasons,
      message: `The resume gate says stop (${codes}): no new write may start until every reason is resolved. Ask POST /resume for the details.`,
    };
  }
  return {
    allowed: false,
    code: "gate_replay",
    reasons: verdict.reasons,
    message: `The resume gate says replay (${codes}): safe reads may repeat, but no new write is permitted yet.`,
  };
}
