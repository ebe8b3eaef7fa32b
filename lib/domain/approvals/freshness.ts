/**
 * Approval freshness (docs/concepts.md#freshness): one pure function decides whether an approval
 * still stands, and lists every reason it does not. The gate, the intent route, the API and the pages all read it.
 *
 * An approval is fresh only while: it has not expired; the principal, action, payload digest, tool definition digest
 * (decision 0033), input digest, policy version and agent (name and version) it is bound to are unchanged; the principal is not revoked; and the approver
 * still holds `approver` or `admin` in the tenant. Separation of duties (the approver is not the requester) is checked
 * when the decision is made (lib/domain/approvals/decide.ts), since it cannot change afterwards.
 */
import { canonicalDigest } from "../crypto/canonical";

/** Every reason an approval can be stale, in reporting order. */
export const STALE_REASONS = [
  "expired",
  "policy_changed",
  "payload_changed",
  "tool_definition_changed",
  "destination_changed",
  "amount_exceeded",
  "inputs_changed",
  "classification_changed",
  "agent_changed",
  "approver_revoked",
  "principal_revoked",
] as const;
export type StaleReason = (typeof STALE_REASONS)[number];

/**
 * Roles whose decisions approve (and whose holding keeps an approval fresh): approver and admin; the owner counts as
 * an admin, as everywhere in lib/domain/authz.ts. Kept equal to PERMISSIONS["approvals.decide"].roles.
 */
export const DECIDING_ROLES = ["approver", "admin", "owner"] as const;

/** Statuses of an approval as the API and pages show them. */
export const APPROVAL_STATUSES = ["pending", "stale", "approved", "rejected"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** What an approval is bound to (the stored request and its decision). */
export type BoundApproval = {
  principal: string | null;
  action: string;
  payload_digest: string | null;
  /** The tool's definition digest when asked (decision 0033); null or absent when none was on record. */
  tool_definition_digest?: string | null;
  /** The hosts the write reaches, as declared when asked (lower case, sorted); null or absent when not said. */
  destination_hosts?: readonly string[] | null;
  /** The highest classification of the task's inputs when asked; null or absent when none was classified. */
  input_classification?: string | null;
  /** The destination a later intent declared instead, if any. */
  offered_destination_hosts?: readonly string[] | null;
  /** The amount the write spends and its currency, when declared (decision 0033). */
  amount?: number | null;
  currency?: string | null;
  /** The larger amount (or other currency) a later intent declared instead, if any. */
  offered_amount?: number | null;
  offered_currency?: string | null;
  input_digest: string;
  policy_version: string;
  agent: string | null;
  agent_version: string | null;
  decision: "approve" | "reject" | null;
  expires_at: string | null;
  /** What a later intent offered that differed (payload digest, agent), if any. */
  offered_payload_digest?: string | null;
  offered_agent?: string | null;
  offered_agent_version?: string | null;
  /** Reasons recorded when the server made it stale (a policy change). */
  invalidated_reasons?: readonly string[];
};

/** The facts now, against which the binding is checked. */
export type CurrentApprovalFacts = {
  now: Date;
  /** The tenant's current policy version. */
  policy_version: string;
  /** Digest of the task's current input set ({@link inputDigestOf}). */
  input_digest: string;
  /** The principal the task acts for now (null: unknown, not checked). */
  principal: string | null;
  principal_revoked: boolean;
  /**
   * The tool's definition now: the latest one the server received when it differs from the accepted one, else the
   * accepted one; null or absent when none is on record (not checked).
   */
  tool_definition_digest?: string | null;
  /** Whether the approver still holds a deciding role (null when undecided: not checked). */
  approver_holds_role: boolean | null;
  /** The highest classification of the task's inputs now (null: none classified; absent: not checked). */
  input_classification?: string | null;
  /** What the asking runtime offers now (an intent), if anything: overrides the recorded offer. */
  offered?: {
    action?: string;
    payload_digest?: string;
    agent?: string | null;
    agent_version?: string | null;
    /** The hosts the write reaches, normalized ({@link destinationOf}); an intent always offers (empty: none said). */
    destination_hosts?: readonly string[];
    /** The amount and currency the write declares (absent: none). */
    amount?: number;
    currency?: string;
  };
};

const differs = (bound: string | null | undefined, now: string | null | undefined) =>
  now !== undefined && now !== null && (bound ?? null) !== now;

/**
 * Every reason the approval is not fresh, in {@link STALE_REASONS} order; empty when it is fresh.
 * A pending request goes stale by the same bound-field rules (deciding it then re-binds to the current values);
 * `expired` and `approver_revoked` apply only to a recorded approval. A rejection never goes stale.
 */
export function staleReasons(bound: BoundApproval, now: CurrentApprovalFacts): StaleReason[] {
  if (bound.decision === "reject") return [];
  const found = new Set<StaleReason>();
  for (const r of bound.invalidated_reasons ?? [])
    if ((STALE_REASONS as readonly string[]).includes(r)) found.add(r as StaleReason);
  const approved = bound.decision === "approve";
  if (approved && bound.expires_at !== null && Date.parse(bound.expires_at) <= now.now.getTime()) found.add("expired");
  // A recorded invalidation stands even if the version is later set back: the approval was made stale at once.
  if (bound.policy_version !== now.policy_version) found.add("policy_changed");
  const offeredDigest = now.offered?.payload_digest ?? bound.offered_payload_digest ?? null;
  const offeredAction = now.offered?.action ?? null;
  if (
    (bound.payload_digest !== null && differs(bound.payload_digest, offeredDigest)) ||
    differs(bound.action, offeredAction)
  ) {
    found.add("payload_changed");
  }
  if (differs(bound.tool_definition_digest ?? null, now.tool_definition_digest) && bound.tool_definition_digest)
    found.add("tool_definition_changed");
  const destination = offeredDestination(bound, now);
  if (destination !== null && destination !== hostsText(bound.destination_hosts)) found.add("destination_changed");
  if (amountExceeded(bound, now) !== null) found.add("amount_exceeded");
  if (bound.input_digest !== now.input_digest) found.add("inputs_changed");
  if (now.input_classification !== undefined && (bound.input_classification ?? null) !== now.input_classification)
    found.add("classification_changed");
  const offeredAgent = now.offered && "agent" in now.offered ? now.offered.agent : bound.offered_agent;
  const offeredVersion =
    now.offered && "agent_version" in now.offered ? now.offered.agent_version : bound.offered_agent_version;
  if (differs(bound.agent, offeredAgent) || differs(bound.agent_version, offeredVersion)) found.add("agent_changed");
  if (approved && now.approver_holds_role === false) found.add("approver_revoked");
  if (
    now.principal_revoked ||
    (bound.principal !== null && now.principal !== null && bound.principal !== now.principal)
  ) {
    found.add("principal_revoked");
  }
  return STALE_REASONS.filter((r) => found.has(r));
}

/** The status shown for an approval: rejected, stale (any reason), approved, or pending. */
export function approvalStatus(
  bound: BoundApproval,
  now: CurrentApprovalFacts,
): { status: ApprovalStatus; stale_reasons: StaleReason[] } {
  if (bound.decision === "reject") return { status: "rejected", stale_reasons: [] };
  const reasons = staleReasons(bound, now);
  if (reasons.length) return { status: "stale", stale_reasons: reasons };
  return { status: bound.decision === "approve" ? "approved" : "pending", stale_reasons: [] };
}

/** One bound field whose value changed: the approved value and the current one. */
export type ApprovalChange = { field: string; approved: string | null; current: string | null };

/**
 * The amount offered when it is more than the approved one or in another currency, as text ("150 EUR"); null when
 * the approval bound no amount, nothing was offered, or the offer is within it. An approval for an amount never
 * covers a larger one.
 */
function amountExceeded(bound: BoundApproval, now: CurrentApprovalFacts): string | null {
  if (bound.amount === null || bound.amount === undefined) return null;
  const offered = now.offered?.amount !== undefined ? now.offered : null;
  const amount = offered ? offered.amount! : (bound.offered_amount ?? null);
  const currency = offered ? (offered.currency ?? null) : (bound.offered_currency ?? null);
  if (amount === null) return null;
  return amount > bound.amount || currency !== bound.currency ? `${amount} ${currency ?? ""}`.trim() : null;
}

/** A destination as one text ("a.example.com, b.example.com"); null when none was said. */
function hostsText(hosts: readonly string[] | null | undefined): string | null {
  return hosts && hosts.length ? hosts.join(", ") : null;
}

/**
 * The destination an intent offers now (or a refused one recorded), as text; null when nothing was offered. An
 * approval that bound a destination is compared with every offer, an offer of none included.
 */
function offeredDestination(bound: BoundApproval, now: CurrentApprovalFacts): string | null {
  const offered = now.offered?.destination_hosts ?? bound.offered_destination_hosts ?? null;
  if (offered === null) return null;
  const text = hostsText(offered);
  return text === null && !bound.destination_hosts?.length ? null : (text ?? "(none declared)");
}

/**
 * The hosts a write reaches in the one form approvals bind: lower case, without a trailing dot, deduplicated and
 * sorted.
 */
export function destinationOf(hosts: readonly string[] | undefined): string[] {
  return [...new Set((hosts ?? []).map((h) => h.toLowerCase().replace(/\.$/, "")))].sort();
}

/** Data classifications of inputs, least sensitive first (decision 0033). */
export const CLASSIFICATIONS = ["public", "internal", "confidential", "restricted"] as const;

/** The highest classification among inputs, or null when none is classified. */
export function highestClassification(inputs: ReadonlyArray<{ classification?: unknown }>): string | null {
  let best = -1;
  for (const i of inputs) best = Math.max(best, CLASSIFICATIONS.indexOf(i.classification as never));
  return best < 0 ? null : CLASSIFICATIONS[best]!;
}

/** The bound fields that changed, for the side-by-side view (`changes` in `GET /approvals/{id}`). */
export function approvalChanges(bound: BoundApproval, now: CurrentApprovalFacts): ApprovalChange[] {
  const out: ApprovalChange[] = [];
  const push = (field: string, approved: string | null, current: string | null | undefined) => {
    if (current !== undefined && (approved ?? null) !== (current ?? null))
      out.push({ field, approved, current: current ?? null });
  };
  push("policy_version", bound.policy_version, now.policy_version);
  push("input_digest", bound.input_digest, now.input_digest);
  const over = amountExceeded(bound, now);
  if (over !== null) push("amount", `${bound.amount} ${bound.currency}`, over);
  const destination = offeredDestination(bound, now);
  if (destination !== null) push("destination_hosts", hostsText(bound.destination_hosts), destination);
  if (now.input_classification !== undefined)
    push("input_classification", bound.input_classification ?? null, now.input_classification);
  if (bound.tool_definition_digest && now.tool_definition_digest)
    push("tool_definition_digest", bound.tool_definition_digest, now.tool_definition_digest);
  const offeredDigest = now.offered?.payload_digest ?? bound.offered_payload_digest ?? null;
  if (offeredDigest !== null && bound.payload_digest !== null)
    push("payload_digest", bound.payload_digest, offeredDigest);
  const offeredAgent = now.offered && "agent" in now.offered ? now.offered.agent : bound.offered_agent;
  const offeredVersion =
    now.offered && "agent_version" in now.offered ? now.offered.agent_version : bound.offered_agent_version;
  if (offeredAgent !== null && offeredAgent !== undefined) push("agent", bound.agent, offeredAgent);
  if (offeredVersion !== null && offeredVersion !== undefined)
    push("agent_version", bound.agent_version, offeredVersion);
  if (bound.principal !== null && now.principal !== null) push("principal", bound.principal, now.principal);
  if (bound.decision === "approve" && bound.expires_at && Date.parse(bound.expires_at) <= now.now.getTime()) {
    out.push({ field: "expires_at", approved: bound.expires_at, current: now.now.toISOString() });
  }
  return out;
}

/**
 * Digest of a task's input set: sha256 of the RFC 8785 JSON of the inputs sorted by ref then sha256 (a set: order
 * does not matter). An empty set (no checkpoint yet) has a digest too.
 */
export function inputDigestOf(inputs: ReadonlyArray<{ ref: string; sha256: string }>): string {
  const sorted = [...inputs]
    .map((i) => ({ ref: i.ref, sha256: i.sha256 }))
    .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0));
  return canonicalDigest(sorted);
}

/** Plain words for a stale reason (pages and gate messages). */
export const STALE_REASON_TEXT: Record<StaleReason, string> = {
  expired: "the approval expired",
  policy_changed: "the policy version changed",
  payload_changed: "the payload changed",
  tool_definition_changed: "the tool's definition changed",
  destination_changed: "the hosts the write reaches changed",
  amount_exceeded: "the write spends more than the approved amount (or in another currency)",
  classification_changed: "the data classification of the task's inputs changed",
  inputs_changed: "the task's inputs changed",
  agent_changed: "the agent or its version changed",
  approver_revoked: "the approver no longer holds the approver or admin role",
  principal_revoked: "the principal was revoked or changed",
};
