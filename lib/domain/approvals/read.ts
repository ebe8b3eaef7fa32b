/**
 * Reading approvals (docs/api.md#peoples-routes): the stored request and decision, with the status and stale reasons
 * computed now by {@link approvalStatus} against the current facts (policy version, task inputs, principal, approver's
 * role).
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import { selectList, type SelectedRow } from "@/db/queries/rows";
import { decodeCursor, encodeCursor, isoUtc } from "@/db/queries/sql-helpers";
import { approvalRequests } from "@/db/schema";
import { authorize } from "../authz";
import { DomainError, notFound } from "../errors";
import { pageSize } from "../page-size";
import {
  APPROVAL_STATUSES,
  approvalChanges,
  approvalStatus,
  DECIDING_ROLES,
  highestClassification,
  inputDigestOf,
  type ApprovalChange,
  type ApprovalStatus,
  type BoundApproval,
  type CurrentApprovalFacts,
  type StaleReason,
} from "./freshness";
import { currentPolicyVersion } from "../policies/current";
import { canonicalName } from "../names";
import { toolDefinitionChanges, toolReportsOf, type AcceptedToolDefinition } from "../gate/tools";
import type { VerbContext } from "../context";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The columns of an {@link ApprovalRow}, in the order statements list them. */
const APPROVAL_FIELDS = [
  "id",
  "task_id",
  "side_effect",
  "idempotency_key",
  "principal",
  "action",
  "tool",
  "tool_definition_digest",
  "destination_hosts",
  "input_classification",
  "amount",
  "currency",
  "offered_amount",
  "offered_currency",
  "payload_digest",
  "payload",
  "input_digest",
  "policy_version",
  "agent",
  "agent_version",
  "requested_by_kind",
  "requested_by_id",
  "requested_by",
  "requested_at",
  "origin",
  "provider_request_id",
  "call_id",
  "runtime_decision",
  "decision",
  "reason",
  "decided_by_id",
  "decided_by",
  "decided_at",
  "expires_at",
  "self_approved",
  "consumed_at",
  "consumed_attempt",
  "offered_payload_digest",
  "offered_payload",
  "offered_agent",
  "offered_destination_hosts",
  "offered_agent_version",
  "offered_at",
  "invalidated_reasons",
  "invalidated_at",
  "superseded_by",
  "supersedes",
  "decision_seal",
] as const;

/** A stored request as read from the database (timestamps as exact ISO UTC text). */
export type ApprovalRow = SelectedRow<typeof approvalRequests, typeof APPROVAL_FIELDS>;

/** Columns of {@link ApprovalRow} (timestamps as exact ISO UTC text). */
export const APPROVAL_COLUMNS = selectList(approvalRequests, APPROVAL_FIELDS);

/** An approval as the API returns it. */
export type ApprovalView = {
  id: string;
  task_id: string;
  side_effect: string;
  idempotency_key: string;
  principal: string | null;
  action: string;
  tool: string;
  payload_digest: string | null;
  input_digest: string;
  policy_version: string;
  agent: string | null;
  agent_version: string | null;
  requested_by: string;
  requested_at: string;
  origin: string;
  provider_request_id: string | null;
  /**
   * What an imported run state recorded for the call itself (decision 0032): `approved` is the runtime's record only,
   * never an approval here; `rejected` was imported as this request's rejection. Null: the state recorded nothing.
   */
  runtime_decision: "approved" | "rejected" | null;
  status: ApprovalStatus;
  stale_reasons: StaleReason[];
  /** When an intent went under it (single use); null while unused. */
  used_at: string | null;
  superseded_by: string | null;
  supersedes: string | null;
  decision?: {
    decision: "approve" | "reject";
    reason: string | null;
    decided_by: string;
    decided_at: string;
    expires_at: string | null;
    self_approved: boolean;
  };
};

/** `GET /approvals/{id}`: the view plus the payload, and for a stale one what changed. */
export type ApprovalDetail = ApprovalView & {
  payload: unknown;
  /** The payload a later intent offered instead (payload_changed), for the JSON diff. */
  offered_payload: unknown;
  changes: ApprovalChange[];
  /** Current values the bound fields are compared with. */
  current: { policy_version: string; input_digest: string; principal: string | null };
  /** Whether the tenant lets a requester approve their own request. */
  self_approval_allowed: boolean;
  /** Who requested it (actor kind and id), for the separation-of-duties check on the page. */
  requested_by_kind: string;
  requested_by_id: string;
};

/** The stored binding of a row, for the freshness rules. */
export function boundOf(r: ApprovalRow): BoundApproval {
  return {
    principal: r.principal,
    action: r.action,
    payload_digest: r.payload_digest,
    tool_definition_digest: r.tool_definition_digest,
    destination_hosts: r.destination_hosts,
    input_classification: r.input_classification,
    offered_destination_hosts: r.offered_destination_hosts,
    amount: r.amount,
    currency: r.currency,
    offered_amount: r.offered_amount,
    offered_currency: r.offered_currency,
    input_digest: r.input_digest,
    policy_version: r.policy_version,
    agent: r.agent,
    agent_version: r.agent_version,
    decision: r.decision,
    expires_at: r.expires_at,
    offered_payload_digest: r.offered_payload_digest,
    offered_agent: r.offered_agent,
    offered_agent_version: r.offered_agent_version,
    invalidated_reasons: r.invalidated_reasons ?? [],
  };
}

/**
 * The current facts for a set of rows of one tenant: policy version, each task's input digest and principal (and
 * whether it is revoked), each approver's role.
 * @returns a function giving the facts for one row.
 */
export async function loadCurrentFacts(
  db: Db,
  tenantId: string,
  rows: ApprovalRow[],
  now = new Date(),
): Promise<(r: ApprovalRow) => CurrentApprovalFacts> {
  const policy = await currentPolicyVersion(db, tenantId);
  const taskIds = [...new Set(rows.map((r) => r.task_id))];
  const deciders = [...new Set(rows.map((r) => r.decided_by_id).filter((d): d is string => !!d && UUID.test(d)))];
  const tasks = new Map<
    string,
    {
      principal: string | null;
      revoked: boolean;
      input_digest: string;
      input_classification: string | null;
      tool: (name: string) => string | null;
    }
  >();
  if (taskIds.length) {
    const list = sql.join(
      taskIds.map((t) => sql`${t}`),
      sql`, `,
    );
    const trows = await queryRows<{
      task_id: string;
      principal: string | null;
      revoked: boolean;
      inputs: Array<{ ref: string; sha256: string; classification?: string }> | null;
      tools: string | { accepted: AcceptedToolDefinition[]; events: ToolEventRow[]; checkpoint: ToolCheckpoint | null };
    }>(
      db,
      sql`select t.task_id, t.principal,
                 exists (select 1 from principal_revocations p where p.tenant_id = t.tenant_id and lower(p.principal) = lower(t.principal)) as revoked,
                 (select c.record -> 'inputs' from task_checkpoints c
                   where c.tenant_id = t.tenant_id and c.task_id = t.task_id order by c.version desc limit 1) as inputs,
                 ${toolStateSql()} as tools
          from tasks t where t.tenant_id = ${tenantId} and t.task_id in (${list})`,
    );
    for (const t of trows) {
      tasks.set(t.task_id, {
        principal: t.principal,
        revoked: t.revoked,
        input_digest: inputDigestOf(Array.isArray(t.inputs) ? t.inputs : []),
        input_classification: highestClassification(Array.isArray(t.inputs) ? t.inputs : []),
        tool: currentToolDefinitions(typeof t.tools === "string" ? JSON.parse(t.tools) : t.tools),
      });
    }
  }
  const holding = new Set<string>();
  if (deciders.length) {
    const list = sql.join(
      deciders.map((d) => sql`${d}::uuid`),
      sql`, `,
    );
    const mrows = await queryRows<{ user_id: string }>(
      db,
      sql`select user_id from memberships where tenant_id = ${tenantId} and revoked_at is null and user_id in (${list})
            and role in (${sql.join(
              DECIDING_ROLES.map((r) => sql`${r}::membership_role`),
              sql`, `,
            )})`,
    );
    for (const m of mrows) holding.add(m.user_id);
  }
  return (r) => {
    const t = tasks.get(r.task_id);
    return {
      now,
      policy_version: policy,
      input_digest: t?.input_digest ?? inputDigestOf([]),
      input_classification: t?.input_classification ?? null,
      principal: t?.principal ?? null,
      principal_revoked: t?.revoked ?? false,
      // approvalContext asks with a task id alone (no tool): nothing to compare then.
      tool_definition_digest: t && typeof r.tool === "string" ? t.tool(r.tool) : null,
      approver_holds_role: r.decided_by_id ? holding.has(r.decided_by_id) : null,
    };
  };
}

type ToolEventRow = { type: string; seq: number; received_at: string; attrs: Record<string, unknown> };
type ToolCheckpoint = { tool_definitions: Record<string, string> | null; created_at: string };

/**
 * SQL (over a task row `t`): the task's accepted tool definitions, its `tool.definition_changed` events and its latest
 * checkpoint's tool definitions, as one JSON object for {@link currentToolDefinitions}.
 */
function toolStateSql() {
  return sql`json_build_object(
    'accepted', (select coalesce(json_agg(json_build_object('tool', d.tool, 'digest', d.digest, 'since', ${isoUtc("d.since")})), '[]'::json)
                 from task_tool_definitions d where d.tenant_id = t.tenant_id and d.task_id = t.task_id),
    'events', (select coalesce(json_agg(json_build_object('type', e.type, 'seq', e.seq, 'received_at', ${isoUtc("e.received_at")},
                 'attrs', e.attrs) order by e.seq), '[]'::json)
               from events e where e.tenant_id = t.tenant_id and e.task_id = t.task_id and e.retention_class = 'fact'
                 and e.type = 'tool.definition_changed'
                 and exists (select 1 from task_tool_definitions d where d.tenant_id = t.tenant_id and d.task_id = t.task_id)),
    'checkpoint', (select json_build_object('tool_definitions', c.record -> 'tool_definitions', 'created_at', ${isoUtc("c.created_at")})
                   from task_checkpoints c where c.tenant_id = t.tenant_id and c.task_id = t.task_id
                   order by c.version desc limit 1))`;
}

/**
 * A tool's definition now (decision 0033), by the gate's rule (lib/domain/gate/tools.ts): the latest one the server
 * received when it differs from the accepted one, else the accepted one; null for a tool with none on record.
 */
function currentToolDefinitions(state: {
  accepted: AcceptedToolDefinition[];
  events: ToolEventRow[];
  checkpoint: ToolCheckpoint | null;
}): (tool: string) => string | null {
  const changes = toolDefinitionChanges(state.accepted, toolReportsOf(state.events, state.checkpoint));
  return (tool) => {
    const name = canonicalName(tool);
    return (
      changes.find((c) => c.tool === name)?.reported ??
      state.accepted.find((a) => canonicalName(a.tool) === name)?.digest ??
      null
    );
  };
}

/** The API view of a row under the current facts. */
export function approvalView(r: ApprovalRow, facts: CurrentApprovalFacts): ApprovalView {
  const { status, stale_reasons } =
    r.consumed_at && r.decision === "approve"
      ? { status: "approved" as const, stale_reasons: [] as StaleReason[] }
      : approvalStatus(boundOf(r), facts);
  return {
    id: r.id,
    task_id: r.task_id,
    side_effect: r.side_effect,
    idempotency_key: r.idempotency_key,
    principal: r.principal,
    action: r.action,
    tool: r.tool,
    payload_digest: r.payload_digest,
    input_digest: r.input_digest,
    policy_version: r.policy_version,
    agent: r.agent,
    agent_version: r.agent_version,
    requested_by: r.requested_by,
    requested_at: r.requested_at,
    origin: r.origin,
    provider_request_id: r.provider_request_id,
    runtime_decision: r.runtime_decision ?? null,
    status,
    stale_reasons,
    used_at: r.consumed_at,
    superseded_by: r.superseded_by,
    supersedes: r.supersedes,
    ...(r.decision
      ? {
          decision: {
            decision: r.decision,
            reason: r.reason,
            decided_by: r.decided_by ?? "",
            decided_at: r.decided_at ?? "",
            expires_at: r.expires_at,
            self_approved: r.self_approved,
          },
        }
      : {}),
  };
}

/** One stored request by id (any tenant row the db can see), or undefined. */
export async function findApprovalRow(
  db: Db,
  tenantId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ApprovalRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = await queryRows<ApprovalRow>(
    db,
    sql`select ${APPROVAL_COLUMNS} from approval_requests where tenant_id = ${tenantId} and id = ${id}::uuid
        ${opts.forUpdate ? sql`for update` : sql``}`,
  );
  return row;
}

/**
 * `GET /api/v1/approvals/{id}`.
 * @returns the approval with its payload and, for a stale one, `changes` (field, approved value, current value).
 * @throws DomainError forbidden, not_found (no such approval in the caller's tenant).
 */
export async function getApproval(
  { db, actor }: VerbContext,
  { approvalId: id }: { approvalId: string },
): Promise<ApprovalDetail> {
  authorize(actor, "approvals.read");
  const row = await findApprovalRow(db, actor.tenantId, id);
  if (!row) throw notFound(`Approval ${id}`);
  const factsOf = await loadCurrentFacts(db, actor.tenantId, [row]);
  const facts = factsOf(row);
  const view = approvalView(row, facts);
  const [settings] = await queryRows<{ allow_self_approval: boolean }>(
    db,
    sql`select allow_self_approval from approval_settings where tenant_id = ${actor.tenantId}`,
  );
  return {
    ...view,
    payload: row.payload ?? null,
    offered_payload: row.offered_payload ?? null,
    changes: view.status === "stale" ? approvalChanges(boundOf(row), facts) : [],
    current: { policy_version: facts.policy_version, input_digest: facts.input_digest, principal: facts.principal },
    self_approval_allowed: settings?.allow_self_approval ?? false,
    requested_by_kind: row.requested_by_kind,
    requested_by_id: row.requested_by_id,
  };
}

export type ApprovalFilters = {
  status?: string | null;
  task_id?: string | null;
  action?: string | null;
  /** Only requests made before this time (the page's age filter). */
  older_than?: string | null;
  /** Only requests made more than this many seconds ago. */
  older_than_seconds?: number | null;
  cursor?: string | null;
  limit?: string | number | null;
  /** Include superseded requests (a task's history); default only the live ones. */
  include_superseded?: boolean;
};

/**
 * `GET /api/v1/approvals?status=&task_id=&action=&cursor=&limit=`: live requests, oldest first, keyset-paged on
 * (requested_at, id). `status` is computed now (pending, stale, approved, rejected).
 * @returns `{approvals, next_cursor}` (null on the last page).
 * @throws DomainError forbidden; validation_failed (unknown status, malformed cursor).
 */
export async function listApprovals(
  { db, actor }: VerbContext,
  f: ApprovalFilters = {},
): Promise<{ approvals: ApprovalView[]; next_cursor: string | null }> {
  authorize(actor, "approvals.read");
  const status = f.status ?? null;
  if (status !== null && !(APPROVAL_STATUSES as readonly string[]).includes(status)) {
    throw new DomainError("validation_failed", `status must be one of ${APPROVAL_STATUSES.join(", ")}.`, {
      fields: [{ path: "status", message: "unknown status" }],
    });
  }
  const limit = pageSize(f.limit ?? null, 200, 50);
  let after: [string, string] | null = null;
  if (f.cursor) {
    const parts = decodeCursor(f.cursor, 2);
    if (!parts || typeof parts[0] !== "string" || typeof parts[1] !== "string" || !UUID.test(parts[1])) {
      throw new DomainError("validation_failed", "cursor is malformed; pass next_cursor from the previous page.", {
        fields: [{ path: "cursor", message: "malformed" }],
      });
    }
    after = [parts[0], parts[1]];
  }
  const olderThan =
    f.older_than && !Number.isNaN(Date.parse(f.older_than)) ? new Date(f.older_than).toISOString() : null;
  // Stored narrowing; the computed status is checked after.
  const stored =
    status === "rejected"
      ? sql`and decision = 'reject'`
      : status === "approved"
        ? sql`and decision = 'approve'`
        : status === "pending"
          ? sql`and decision is null`
          : status === "stale"
            ? sql`and decision is distinct from 'reject' and consumed_at is null`
            : sql``;
  const out: ApprovalView[] = [];
  let next: string | null = null;
  const batch = Math.max(limit * 2, 50);
  for (let round = 0; round < 20; round++) {
    const rows = await queryRows<ApprovalRow>(
      db,
      sql`select ${APPROVAL_COLUMNS} from approval_requests
          where tenant_id = ${actor.tenantId}
            ${f.include_superseded ? sql`` : sql`and superseded_by is null`}
            ${f.task_id ? sql`and task_id = ${f.task_id}` : sql``}
            ${f.action ? sql`and action = ${f.action}` : sql``}
            ${olderThan ? sql`and requested_at < ${olderThan}::timestamptz` : sql``}
            ${f.older_than_seconds ? sql`and requested_at < now() - make_interval(secs => ${f.older_than_seconds})` : sql``}
            ${after ? sql`and (requested_at, id) > (${after[0]}::timestamptz, ${after[1]}::uuid)` : sql``}
            ${stored}
          order by requested_at, id limit ${batch}`,
    );
    if (!rows.length) break;
    const factsOf = await loadCurrentFacts(db, actor.tenantId, rows);
    let last: ApprovalRow | null = null;
    for (const r of rows) {
      last = r;
      const v = approvalView(r, factsOf(r));
      if (status && v.status !== status) continue;
      out.push(v);
      if (out.length === limit) break;
    }
    if (out.length === limit) {
      next = last ? encodeCursor([last.requested_at, last.id]) : null;
      break;
    }
    if (rows.length < batch) break;
    after = [last!.requested_at, last!.id];
  }
  return { approvals: out, next_cursor: next };
}

/** What a new request of a task binds to now: the task's principal, its input digest and the tenant's policy version. */
export async function approvalContext(
  db: Db,
  tenantId: string,
  taskId: string,
): Promise<{
  principal: string | null;
  input_digest: string;
  policy_version: string;
  input_classification: string | null;
}> {
  const probe = { task_id: taskId, decided_by_id: null } as ApprovalRow;
  const facts = (await loadCurrentFacts(db, tenantId, [probe]))(probe);
  return {
    principal: facts.principal,
    input_digest: facts.input_digest,
    policy_version: facts.policy_version,
    input_classification: facts.input_classification ?? null,
  };
}

/**
 * The approver's queue: live requests that wait for a decision (pending) or a re-approval (stale), oldest first.
 * Reads at most `scan` unused, unrejected live requests (the newest beyond it are not shown; the page says so).
 * @throws DomainError forbidden
 */
export async function approvalQueue(
  { db, actor }: VerbContext,
  opts: { limit?: number; scan?: number } = {},
): Promise<ApprovalView[]> {
  authorize(actor, "approvals.read");
  const rows = await queryRows<ApprovalRow>(
    db,
    sql`select ${APPROVAL_COLUMNS} from approval_requests
        where tenant_id = ${actor.tenantId} and superseded_by is null and consumed_at is null and decision is distinct from 'reject'
        order by requested_at, id limit ${opts.scan ?? 1000}`,
  );
  const factsOf = await loadCurrentFacts(db, actor.tenantId, rows);
  return rows
    .map((r) => approvalView(r, factsOf(r)))
    .filter((v) => v.status === "pending" || v.status === "stale")
    .slice(0, opts.limit ?? 1000);
}
