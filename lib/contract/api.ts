/**
 * The wire contract of API v1: the JSON shapes the domain verbs return and the browser, the runtime SDK
 * (lib/sdk) and the tests read. Types only, importable from any layer (docs/api.md).
 */
import type { Plane, SideEffectStatus } from "@/db/schema/enums";
import type { StaleReason } from "@/lib/domain/approvals/freshness";

export type { Plane, SideEffectStatus };

export type ApiErrorBody = { error: { code: string; message: string; details?: unknown } };

/** An event as a runtime sends it (`POST /api/v1/events`). Times are ISO 8601 with offset. */
export type EventInput = {
  id: string;
  task_id: string;
  plane: Plane;
  type: string;
  occurred_at: string;
  environment_id?: string;
  attempt?: number;
  actor?: string;
  attrs?: Record<string, unknown>;
};

export type EventResult = {
  id: string;
  /** duplicate: the id was received before with the same content; conflict: with other content (nothing stored). */
  status: "stored" | "duplicate" | "conflict" | "rejected";
  /** rejected: why, with the path of the field it names (`attrs.call_id`) when one field is at fault. */
  error?: { code: string; message: string; path?: string };
  /** conflict: sha256 hex of the RFC 8785 JSON of the event stored under this id. */
  stored_digest?: string;
  /** For an event that moves a side effect: whether the move was applied, and if not, why (`code`, `message`). */
  effect?: { name: string; applied: boolean; code?: string; message?: string };
};

/** An event as stored (timeline). `attrs` are already redacted; `redaction_count` says how many values. */
export type StoredEvent = {
  id: string;
  task_id: string;
  plane: Plane;
  type: string;
  occurred_at: string;
  received_at: string;
  environment_id: string | null;
  attempt: number | null;
  actor: string | null;
  attrs: Record<string, unknown>;
  redaction_count: number;
  /** What was redacted (`api_key`, `secret_field`, `credential_value`, `vault_placeholder` …); empty when nothing was. */
  redaction_kinds?: string[];
  /**
   * A vault-plane event that carried a credential value or a placeholder (docs/concepts.md#redaction: the vault lane is
   * metadata only). It was redacted before storage; the timeline and the Egress and vault tab warn about it.
   */
  credential_flagged?: boolean;
  /**
   * `attrs` are a summary or were cut (decision 0034): pages ship large bodies as summaries, and one event's detail
   * (`GET /api/v1/tasks/{id}/events/{event_id}`) is capped; absent when `attrs` are whole.
   */
  attrs_truncated?: boolean;
};

export type TimelinePage = { events: StoredEvent[]; next_cursor: string | null };

/** One lane's events in one time bucket of the overview, counted on the server. */
export type TimelineBin = {
  plane: Plane;
  /** Times of the earliest and latest event in the bucket (ISO UTC). */
  first: string;
  last: string;
  count: number;
  /** `tool.failed` events among them. */
  failed: number;
  /** `egress.denied` and `credential.denied` events among them. */
  denied: number;
};

/**
 * `GET /api/v1/tasks/{id}/timeline/overview`: what a timeline shows first, whatever the run's length.
 * `events` holds every event when `complete`; otherwise every marker (interruptions, restarts, resumes, stops,
 * sandbox lifecycle) and the newest events (all of them from `newest_from` on), and `bins` count every event per
 * lane and time bucket, so the timeline can show what is not loaded and fetch its detail on zoom.
 */
export type TimelineOverview = {
  total: number;
  counts: Record<Plane, number>;
  range: { first: string; last: string } | null;
  complete: boolean;
  events: StoredEvent[];
  newest_from: string | null;
  bins: TimelineBin[];
  /** Arrival-feed cursor taken before this overview was read: `?since=` it yields what arrived afterwards. */
  since: string;
  /**
   * The latest `compaction.performed` no `constraint.checked` followed (receive order; the gate's rule, answered as
   * `replay` / `constraints_unchecked`), or null. Its event is among `events` however long the run.
   */
  compaction_unchecked?: { event_id: string; occurred_at: string } | null;
};

/** `GET /api/v1/tasks/{id}/timeline?since=`: events in the server's receive order. */
export type ArrivalPage = { events: StoredEvent[]; next_since: string; has_more: boolean };

export type Receipt = { external_operation_id: string; result_digest?: string | null; completed_at: string };

/** docs/concepts.md#task-record: data only, never a container handle, shell state or credential value. */
export type TaskRecord = {
  task_id: string;
  principal: string;
  policy_version: string;
  phase: string;
  /** The sandbox attempt that writes this checkpoint (fencing: older attempts are refused). */
  attempt: number;
  /** Input files; `classification` (public, internal, confidential, restricted) is bound by approvals (decision 0033). */
  inputs: Array<{
    ref: string;
    sha256: string;
    classification?: "public" | "internal" | "confidential" | "restricted";
  }>;
  decisions: Array<{ id: string; summary: string; at?: string; by?: string }>;
  artifacts: Array<{ ref: string; sha256: string; size?: number; media_type?: string }>;
  side_effects: Record<
    string,
    {
      idempotency_key: string;
      status: SideEffectStatus;
      receipt?: Receipt | null;
      action?: string;
      tool?: string;
      mutation?: boolean;
      /** The digest of what it sends: an approval binds to it, and a write of the same payload under another name is a duplicate. */
      payload_digest?: string;
    }
  >;
  approval?: Record<string, unknown> | null;
  /** Tool name → sha256 of its definition at this checkpoint (feeds `tool_definition_changed`). */
  tool_definitions?: Record<string, string>;
  /** The snapshot this checkpoint's state is in; a restore after it must bring back this one (`snapshot_stale`). */
  snapshot?: { digest: string; snapshot_id?: string };
  /** The task's constraints, kept outside any model summary and re-checked after a compaction (`constraint.checked`). */
  constraints?: string[];
};

export type CheckpointResult = {
  task_id: string;
  version: number;
  digest: string;
  /** Ed25519 signature (base64url) over the RFC 8785 JSON of the record; verify with the key `key_id` names. */
  signature: string;
  key_id: string;
  attempt: number;
};

export type TaskListItem = {
  task_id: string;
  principal: string | null;
  phase: string;
  policy_version: string | null;
  /** The workflow the run belongs to (its first `task.created` naming one, decision 0049); null when none did. */
  workflow: string | null;
  version: number;
  event_count: number;
  last_event_at: string | null;
  created_at: string;
  unknown_side_effects: number;
  /** Side effects waiting for an approver's decision. */
  awaiting_approval_side_effects: number;
  /** The task's principal is revoked (the gate stops the run until it is restored). */
  principal_revoked: boolean;
  /**
   * The run's status (lib/domain/tasks/status.ts, decision 0043): from its phase once it has ended, else from the resume
   * gate's verdict now.
   */
  status: "running" | "stopped" | "waiting_for_approval" | "replay" | "stale" | "done" | "failed" | "terminated";
  /** The newest event's time, else the task's creation: what the default sort orders by. */
  last_activity_at: string;
};

export type TaskList = { tasks: TaskListItem[]; next_cursor: string | null };

/** A receipt (or tool outcome) the runtime reported that did not complete or settle the effect, kept as evidence. */
export type UnappliedReceiptView = {
  /** `applied`: it says the write was made; `not_applied`: the tool owner says nothing of it was applied. */
  outcome: "applied" | "not_applied";
  /** A `not_applied` receipt's tool message (credentials redacted, at most 1000 characters); null otherwise. */
  error: string | null;
  source: "route" | "event";
  event_id: string | null;
  attempt: number | null;
  external_operation_id: string | null;
  result_digest: string | null;
  completed_at: string | null;
  /** reconcile_required | lease_expired | stale_attempt | no_intent | receipt_conflict | late_outcome */
  reason: string;
  message: string;
  received_at: string;
  /** When a `no_intent` receipt completed the effect as its intent arrived. */
  applied_at: string | null;
};

/**
 * The approval state of a write, from its live request's standing (lib/domain/approvals/write-state.ts): the same
 * reading the gate's reasons, the intent route and the attention queue use. `used`: an intent went under it;
 * `unsealed`: its stored decision is not what the server sealed (decision 0036).
 */
export type WriteApproval = {
  id: string;
  state: "pending" | "approved" | "stale" | "rejected" | "used" | "unsealed";
  stale_reasons: StaleReason[];
  reason: string | null;
  decided_by: string | null;
};

export type SideEffectView = {
  idempotency_key: string;
  status: SideEffectStatus;
  /** Its live approval request's state (null when none is live): the status pages show comes from it. */
  approval: WriteApproval | null;
  receipt?: Receipt & { warnings?: string[] };
  /**
   * How the server learned of it: `intent` (the intent route), `event` (a side_effect.intent event), `checkpoint`
   * (declared by a record) or `tool_call` (a mutating tool call whose attempt ended without an outcome; then `call_id`
   * names it and the idempotency key is the server's own, as the runtime gave none).
   */
  origin: "intent" | "event" | "checkpoint" | "tool_call" | "import";
  call_id: string | null;
  /** The attempt whose intent put it in flight. */
  intent_attempt: number | null;
  /** Receipts reported that did not complete it (late, stale, conflicting), oldest first. */
  unapplied_receipts: UnappliedReceiptView[];
  tool: string | null;
  action: string | null;
  mutation: boolean;
  payload_digest: string | null;
  status_reason: string | null;
  intent_at: string | null;
  lease_expires_at: string | null;
  last_reconcile: {
    outcome: "completed" | "not_applied";
    evidence: string;
    external_operation_id?: string | null;
    by: string;
    at: string;
  } | null;
  /** The last `not_applied` receipt that settled an in-flight write of it: the tool's message and who reported it. */
  last_not_applied: {
    error: string;
    attempt: number | null;
    source: "route" | "event";
    event_id?: string | null;
    by: string;
    at: string;
  } | null;
  /** The earlier effect of the task this one deliberately repeats (its intent's `repeats`), or null. */
  repeats: string | null;
  updated_at: string;
};

export type TaskView = {
  task_id: string;
  record: TaskRecord | null;
  version: number;
  digest: string | null;
  /** Ed25519 signature (base64url) of the latest checkpoint and the id of the key that made it (offline verification). */
  signature: string | null;
  key_id: string | null;
  signature_valid: boolean | null;
  /**
   * How the latest checkpoint verifies where it is stored, by the resume gate's rules (decision 0035): `valid`,
   * `record_invalid` (altered or signed elsewhere) or `misplaced` (signed, but for another tenant, task, version or
   * attempt, or not the newest version the server wrote); null before the first checkpoint.
   */
  signature_check: "valid" | "record_invalid" | "misplaced" | null;
  principal: string | null;
  phase: string;
  policy_version: string | null;
  current_attempt: number;
  /** The largest difference detected between the runtime's clock and the server's (positive: runtime ahead). */
  clock_skew: { ms: number; detected_at: string; note: string } | null;
  /** A person ended the task (`POST …/terminate`, decision 0043): when, who, why; null while not. */
  terminated: { at: string; by: string; reason: string } | null;
  created_at: string;
  /** Events stored for the task (the timeline refetches when this changes). */
  event_count: number;
  side_effects: Record<string, SideEffectView>;
  /** The runtime's asks of the resume gate, one entry per sandbox attempt (people's page views are not counted). */
  gate_asks: GateAskView[];
};

/** How often, and when last, a runtime API key asked the task's resume gate during one sandbox attempt. */
export type GateAskView = {
  attempt: number;
  asks: number;
  first_asked_at: string;
  last_asked_at: string;
  last_verdict: "resume" | "replay" | "stop";
  /** Seconds from the last ask to when this view was read, on the server's clock. */
  seconds_since_last_ask: number;
};

export type CheckpointSummary = {
  version: number;
  digest: string;
  /** Ed25519 signature (base64url) over the RFC 8785 JSON of the record; `key_id` names the key in /api/v1/signing-keys. */
  signature: string;
  key_id: string;
  /** The sandbox attempt that wrote it (null for records from before fencing). */
  attempt: number | null;
  signature_valid: boolean;
  /** How it verifies where it is stored, by the resume gate's rules (see {@link TaskView.signature_check}). */
  signature_check: "valid" | "record_invalid" | "misplaced";
  phase: string;
  created_at: string;
};

export type CheckpointPage = {
  checkpoints: Array<CheckpointSummary & { record: TaskRecord }>;
  next_cursor: string | null;
};

export type ArtifactView = {
  ref: string;
  sha256: string;
  size: number | null;
  media_type: string | null;
  first_version: number;
  created_at: string;
  /**
   * The artifact's bytes (decision 0045): `stored` (uploaded, and they still hash to `sha256`), `missing` (never
   * uploaded), `mismatch` (the stored bytes no longer hash to `sha256`: a stop).
   */
  content: "stored" | "missing" | "mismatch";
};

/**
 * One artifact with a bounded preview of its uploaded bytes (`GET /api/v1/tasks/{id}/artifacts/{sha256}`, decision
 * 0045): `kind` says how the pages show `text` (Markdown without raw HTML, pretty JSON, plain text; binary: not at
 * all); `text` is null when the bytes are missing or do not hash to the digest.
 */
export type ArtifactPreview = {
  ref: string;
  sha256: string;
  media_type: string | null;
  size: number | null;
  content: ArtifactView["content"];
  kind: "markdown" | "json" | "text" | "binary";
  text: string | null;
  truncated: boolean;
  download_url: string;
};

export type IntentResult = { decision: "go"; lease_expires_at: string } | { decision: "replay"; receipt: Receipt };

/**
 * `details` of a `409 duplicate_payload` intent refusal: the latest other effect of the task with the same action and
 * payload digest that is in flight, completed or unknown (a completed one's receipt, to replay instead of writing
 * again), and every such effect.
 */
export type DuplicatePayloadDetails = {
  side_effect: string;
  idempotency_key: string;
  status: "in_flight" | "completed" | "unknown";
  receipt?: Receipt;
  /** The `repeats` the intent named, when it named an older one. */
  repeats_named?: string;
  same_writes: Array<{ side_effect: string; idempotency_key: string; status: "in_flight" | "completed" | "unknown" }>;
};

/**
 * The resume gate's reason codes: the wire vocabulary a runtime may branch on. Each code's kind (blocking or replay),
 * reporting order, title, fixer and weight once a run has ended are in the catalogue lib/domain/gate/reasons.ts,
 * which is keyed by this union: a code added here without an entry there does not compile
 * (docs/decisions/0023-typed-catalogues.md).
 */
export type GateReasonCode =
  | "task_terminated"
  | "record_signature_invalid"
  | "checkpoint_misplaced"
  | "evidence_mismatch"
  | "principal_revoked"
  | "policy_changed"
  | "approval_missing"
  | "approval_stale"
  | "approval_rejected"
  | "side_effect_unknown"
  | "sandbox_not_fresh"
  | "snapshot_unverified"
  | "snapshot_stale"
  | "credential_revoked"
  | "credential_expired"
  | "egress_policy_inconsistent"
  | "tool_definition_changed"
  | "no_checkpoint"
  | "side_effect_in_flight"
  | "constraints_unchecked";

export type GateReason = { code: GateReasonCode; message: string; target: string };

export type GateVerdict = {
  verdict: "resume" | "replay" | "stop";
  reasons: GateReason[];
  next_phase: string;
  permitted_side_effects: string[];
};
