/**
 * Approvals (docs/concepts.md#approvals): a request to approve one side effect, bound to exactly what would run,
 * and the one decision an approver records on it. Source of the binding and freshness rules:
 * lib/domain/approvals/freshness.ts; decision record docs/decisions/0012-approval-binding-and-freshness.md.
 *
 * - One row per request. A request is bound to tenant, task, side effect, idempotency key, principal, action, tool,
 *   payload digest (RFC 8785 of tool name + arguments), the redacted payload, input digest, policy version, agent and
 *   agent version, requester.
 * - Idempotent: at most one live (not superseded) request per (tenant, task, idempotency key, payload digest), held by
 *   a unique index, so asking again returns the same request.
 * - The decision columns are written once, by one guarded `UPDATE … WHERE decision IS NULL` (exactly one of many
 *   concurrent deciders wins). A re-approval of a stale request supersedes it with a new request carrying the current
 *   values and the new decision (`superseded_by`, guarded the same way).
 * - `consumed_at`: single use — the intent that went under the approval (one guarded UPDATE).
 * - `offered_*`: what a later intent offered that differed from the binding (payload digest or agent), kept for the
 *   approver's side-by-side view; `invalidated_*`: reasons recorded when the approval was made stale by a change the
 *   server knows of (policy change).
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { tasks } from "./tasks";
import { tenants } from "./tenancy";

/** Decisions an approver records. */
export const APPROVAL_DECISIONS = ["approve", "reject"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** Where a request came from. */
export const APPROVAL_ORIGINS = ["intent", "checkpoint", "import"] as const;
export type ApprovalOrigin = (typeof APPROVAL_ORIGINS)[number];

export const approvalRequests = pgTable(
  "approval_requests",
  {
    tenantId: uuid("tenant_id").notNull(),
    id: uuid("id").notNull().defaultRandom(),
    taskId: text("task_id").notNull(),
    sideEffect: text("side_effect").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    principal: text("principal"),
    action: text("action").notNull(),
    tool: text("tool").notNull(),
    /**
     * The tool's accepted definition digest when asked (task_tool_definitions); null when the task's tool had none. A
     * changed definition makes the approval stale (decision 0033).
     */
    toolDefinitionDigest: text("tool_definition_digest"),
    /**
     * The hosts the write reaches, as the intent declared them (lower case, sorted); null when the source did not say.
     * Another destination makes the approval stale (decision 0033).
     */
    destinationHosts: text("destination_hosts").array(),
    /**
     * The highest data classification of the task's inputs when asked (public < internal < confidential <
     * restricted); null when no input was classified. A reclassified input makes the approval stale (decision 0033).
     */
    inputClassification: text("input_classification"),
    /**
     * The amount the write spends and its currency, as the intent declared them; an approval for an amount never covers
     * a larger one (decision 0033).
     */
    amount: doublePrecision("amount"),
    currency: text("currency"),
    /** The larger amount (or other currency) a later intent declared instead. */
    offeredAmount: doublePrecision("offered_amount"),
    offeredCurrency: text("offered_currency"),
    /** sha256 hex of the RFC 8785 JSON of `{tool, arguments}`; null when the source did not say (a checkpoint). */
    payloadDigest: text("payload_digest"),
    /** The payload for the approver to read, secrets redacted; null when the source did not send it. */
    payload: jsonb("payload").$type<unknown>(),
    inputDigest: text("input_digest").notNull(),
    policyVersion: text("policy_version").notNull(),
    agent: text("agent"),
    agentVersion: text("agent_version"),
    /** Requester: actor kind, id and label (`key:<name>` or an email). */
    requestedByKind: text("requested_by_kind").notNull(),
    requestedById: text("requested_by_id").notNull(),
    requestedBy: text("requested_by").notNull(),
    requestedAt: timestamp("requested_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    origin: text("origin").$type<ApprovalOrigin>().notNull().default("intent"),
    /** A hosted or MCP approval request's own id (the provider's), kept for the runtime. */
    providerRequestId: text("provider_request_id"),
    /** The tool call id the request came from, when the source named one. */
    callId: text("call_id"),
    /**
     * What an imported run state's own `context.approvals` recorded for the call (decision 0032), shown beside the
     * request: `rejected` (the import rejected the request), `approved` (shown, and not an approval here). Null: none.
     */
    runtimeDecision: text("runtime_decision").$type<"approved" | "rejected">(),

    decision: text("decision").$type<ApprovalDecision>(),
    reason: text("reason"),
    decidedById: text("decided_by_id"),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true, precision: 6 }),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    /** The decider was the requester and the tenant allowed it (separation of duties relaxed). */
    selfApproved: boolean("self_approved").notNull().default(false),

    consumedAt: timestamp("consumed_at", { withTimezone: true, precision: 6 }),
    consumedAttempt: integer("consumed_attempt"),

    offeredPayloadDigest: text("offered_payload_digest"),
    offeredPayload: jsonb("offered_payload").$type<unknown>(),
    offeredAgent: text("offered_agent"),
    /** The destination a later intent declared instead (decision 0033). */
    offeredDestinationHosts: text("offered_destination_hosts").array(),
    offeredAgentVersion: text("offered_agent_version"),
    offeredAt: timestamp("offered_at", { withTimezone: true }),

    invalidatedReasons: text("invalidated_reasons")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    invalidatedAt: timestamp("invalidated_at", { withTimezone: true }),

    supersededBy: uuid("superseded_by"),
    supersedes: uuid("supersedes"),
    /**
     * The server's seal over a decided request's binding and decision (tenant, task, id, binding, decision, decider,
     * times; lib/domain/approvals/seal.ts, decision 0036); null while pending, `legacy` on rows decided before seals.
     */
    decisionSeal: text("decision_seal"),
  },
  (t) => [
    primaryKey({ name: "approval_requests_pkey", columns: [t.tenantId, t.id] }),
    // Idempotency: one live request per key and digest (a null digest counts as one value).
    uniqueIndex("approval_requests_live_key")
      .on(t.tenantId, t.taskId, t.idempotencyKey, sql`coalesce(${t.payloadDigest}, '')`)
      .where(sql`${t.supersededBy} is null`),
    // The queue: by tenant, oldest first, keyset on (requested_at, id).
    index("approval_requests_queue_idx").on(t.tenantId, t.requestedAt, t.id),
    index("approval_requests_task_idx").on(t.tenantId, t.taskId, t.sideEffect),
    // A task's live requests (what the gate reads, and the pending bound counts), never its used or replaced ones.
    index("approval_requests_live_idx")
      .on(t.tenantId, t.taskId, t.requestedAt)
      .where(sql`${t.supersededBy} is null and ${t.consumedAt} is null`),
    foreignKey({
      name: "approval_requests_task_fk",
      columns: [t.tenantId, t.taskId],
      foreignColumns: [tasks.tenantId, tasks.taskId],
    }),
  ],
);

/**
 * Per-tenant approval settings: the current policy version (until versioned policy documents exist; read only through
 * lib/domain/approvals/policy.ts `currentPolicyVersion`), the default approval TTL, whether a requester may approve their
 * own request (separation of duties, on by default), and whether a retry after "not applied" may reuse the
 * approval its first go used (off by default).
 */
export const approvalSettings = pgTable("approval_settings", {
  tenantId: uuid("tenant_id")
    .primaryKey()
    .references(() => tenants.id),
  policyVersion: text("policy_version").notNull().default("1"),
  defaultTtlSeconds: integer("default_ttl_seconds").notNull().default(86_400),
  allowSelfApproval: boolean("allow_self_approval").notNull().default(false),
  /**
   * Whether a retry after a write was found not applied (a person's reconcile or a `not_applied` receipt) may go
   * under the approval its first go used. Off by default: an approval authorizes one go, so the retry needs a fresh one.
   */
  retryAfterNotAppliedReusesApproval: boolean("retry_after_not_applied_reuses_approval").notNull().default(false),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  updatedBy: text("updated_by"),
});

/** Per-action approval rules: the tenant marks an action approval-required, and may give it its own TTL. */
export const approvalActionRules = pgTable(
  "approval_action_rules",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id),
    action: text("action").notNull(),
    requiresApproval: boolean("requires_approval").notNull().default(true),
    /** Seconds an approval of this action stays valid; null = the tenant default. */
    ttlSeconds: integer("ttl_seconds"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    updatedBy: text("updated_by"),
  },
  (t) => [primaryKey({ name: "approval_action_rules_pkey", columns: [t.tenantId, t.action] })],
);
