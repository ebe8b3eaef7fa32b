/**
 * Boundary limits: the longest value of each kind the API accepts, for every value that reaches an index or a key of
 * the database (ids, names, keys, hosts, references, digests) and for the free text that is kept with them. A B-tree
 * entry holds at most 2,704 bytes, so a value past these limits could be stored once and then break every later
 * write that indexes it; each is checked where it enters (a `rejected` event naming the field, or a 422 naming it)
 * and never after. Lengths count UTF-16 code units (what `String.length` and zod count). The README's limits table
 * lists each entry under its `name`; `tests/unit/boundary-limits.test.ts` keeps the two equal, and
 * `tests/integration/index-limits.test.ts` maps every indexed text expression of the migrated schema to one of these.
 * Decision record: docs/decisions/0028-boundary-limits.md. The last entries bound counts (how many of a thing one
 * request or one task may hold), so that no request costs a thousand times the others: decision 0034.
 */

export type BoundaryLimit = {
  /** The first cell of the value's row in the README's limits table. */
  name: string;
  /** Most characters (UTF-16 code units), or most items for a count. */
  max: number;
  /** Fewest characters, when more than 1. */
  min?: number;
};

export const LIMITS = {
  taskId: { name: "task id", max: 200 },
  eventId: { name: "event id", max: 200 },
  eventType: { name: "event type", max: 100 },
  environmentId: { name: "sandbox id (`environment_id`)", max: 200 },
  eventActor: { name: "event `actor`", max: 200 },
  callId: { name: "tool call id", max: 200 },
  toolName: { name: "tool name", max: 200 },
  actionName: { name: "action name", max: 200 },
  agentName: { name: "agent name and version", max: 200 },
  host: { name: "`attrs.host`", max: 255 },
  credentialRef: { name: "credential reference", max: 200 },
  snapshotId: { name: "snapshot id", max: 200 },
  digest: { name: "digest", max: 200 },
  sideEffectName: { name: "side-effect name", max: 100 },
  idempotencyKey: { name: "idempotency key", min: 8, max: 200 },
  externalOperationId: { name: "`external_operation_id`", max: 500 },
  principal: { name: "principal", max: 500 },
  policyVersion: { name: "policy version in a record", max: 100 },
  phase: { name: "phase", max: 100 },
  artifactRef: { name: "artifact and input `ref`", max: 500 },
  decisionReason: { name: "approval decision `reason`", max: 2000 },
  revocationReason: { name: "revocation `reason`", min: 3, max: 1000 },
  workflow: { name: "map `workflow` and `title`", max: 200 },
  email: { name: "email", max: 254 },
  signInEmail: { name: "email at sign-in", max: 320 },
  clientAddress: { name: "client address (sign-in throttle)", max: 45 },
  workspaceSlug: { name: "workspace slug", max: 63 },
  personName: { name: "API key, workspace and person names", max: 100 },
  webhookSourceName: { name: "webhook source name", max: 64 },
  webhookId: { name: "`webhook-id`", max: 200 },
  // Counts, not lengths: what one request may make the server do (decision 0034).
  runStateCalls: { name: "tool calls in one `RunState` import", max: 500 },
  pendingApprovals: { name: "pending approval requests per task", max: 100 },
} as const satisfies Record<string, BoundaryLimit>;

/**
 * The highest attempt number any request or event may name (docs/concepts.md#attempts-and-fencing). Far above what a
 * run reaches, since an attempt moves ahead by at most {@link ATTEMPT_STEP} and a fenced task moves on by one.
 */
export const ATTEMPT_MAX = 1_000_000_000;

/**
 * How far ahead of a task's current attempt a checkpoint, intent, receipt or event may name its attempt: an attempt
 * further ahead is refused (`attempt_too_far_ahead`), so no single report can fence a task out of reach (decision
 * 0032). An owner or responder moves a stuck task on with `POST /api/v1/tasks/{id}/fence`.
 */
export const ATTEMPT_STEP = 10;
