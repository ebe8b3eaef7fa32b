/**
 * The task list (`GET /api/v1/tasks`, the /tasks page): filters, sorts and each task's status (decision 0043).
 * Authorizes first and scopes by the actor's tenant.
 */
import { z } from "zod";
import { decodeCursor, encodeCursor } from "@/db/queries/sql-helpers";
import * as q from "@/db/queries/tasks";
import { SIDE_EFFECT_STATUSES } from "@/db/schema/enums";
import type { GateVerdict, TaskList } from "@/lib/contract/api";
import { withAuditSealed } from "../audit/append";
import { authorize } from "../authz";
import type { SigningContext, VerbContext } from "../context";
import { LIMITS } from "../limits";
import { DomainError } from "../errors";
import { gatherGateFacts } from "../gate/ask";
import { policyVersionFilter } from "../policies/version-name";
import { evaluateGate } from "../gate/evaluate";
import { TERMINAL_PHASES, TERMINATED_PHASE } from "./phases";
import { DEFAULT_PAGE, filterText, timeCursor } from "./read";
import { ENDED_STATUSES, TASK_STATUSES, endedStatus, taskStatus, type TaskStatus } from "./status";

/** How the task list is ordered: by last activity (the default, decision 0043) or by creation. */
export const TASK_SORTS = ["activity", "created"] as const;
export type TaskSort = (typeof TASK_SORTS)[number];

/** Rows a list request reads at most while looking for tasks of a gate-derived status (a short page then continues). */
export const STATUS_SCAN_MAX = 500;

/** The list's keyset position: `[time, task id, sort]` (a two-part cursor is the creation sort of earlier pages). */
function listCursor(cursor: string, sort: TaskSort): { at: string; id: string } {
  const three = decodeCursor(cursor, 3);
  if (three) {
    if (three[2] !== sort)
      throw new DomainError("bad_request", "cursor belongs to another sort; start again without it.");
    return timeCursor(encodeCursor([three[0]!, three[1]!]));
  }
  if (sort !== "created") throw new DomainError("bad_request", "cursor is not valid; start again without it.");
  return timeCursor(cursor);
}

/** The gate's verdict for each open task, a few at a time (the task page's verdict, asked without being counted). */
async function verdictsOf(
  { db, actor, signingKey }: SigningContext,
  taskIds: string[],
): Promise<Map<string, GateVerdict | null>> {
  const out = new Map<string, GateVerdict | null>();
  let next = 0;
  const worker = async () => {
    while (next < taskIds.length) {
      const id = taskIds[next++]!;
      try {
        const facts = await withAuditSealed(db, actor.tenantId, () =>
          gatherGateFacts(db, actor.tenantId, id, signingKey),
        );
        out.set(id, evaluateGate(facts));
      } catch (err) {
        if (err instanceof DomainError && err.code === "not_found") out.set(id, null);
        else throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, taskIds.length) }, worker));
  return out;
}

/**
 * Tenant's tasks, most recent activity first (or newest first with `sort: "created"`), each with its status.
 * @param opts.cursor opaque cursor from a previous page; `q` search text: part of a task id, or exactly an
 *   idempotency key, a sandbox id (`environment_id` of an event) or a host (`attrs.host` of an event, any case);
 *   `phase`; `status` = the task's status (lib/domain/tasks/status.ts TASK_STATUSES); `effectStatus` = a side
 *   effect's status; `host`, `credentialRef`, `policyVersion`: tasks that reached a host, used a credential reference,
 *   or checkpointed under a policy version (`1`, `v1` and `policy-v1` alike, lib/domain/policies/version-name.ts;
 *   another runtime string exactly; host in any case); `workflow`: the task's workflow exactly (decision 0049);
 *   `sort`: `activity` (default) or `created`.
 *   A status the gate decides (running, stopped, waiting_for_approval, replay, stale) is found by asking the gate of
 *   runs that have not ended, reading at most {@link STATUS_SCAN_MAX} of them per request: a page may then be short
 *   with a `next_cursor` to go on.
 * @throws DomainError bad_request on a malformed cursor, status, effect status, sort, policy_version or workflow (over
 *   the workflow limit).
 */
export async function listTasksForActor(
  ctx: SigningContext,
  opts: {
    cursor?: string | null;
    limit?: number;
    q?: string | null;
    phase?: string | null;
    status?: string | null;
    effectStatus?: string | null;
    host?: string | null;
    credentialRef?: string | null;
    policyVersion?: string | null;
    workflow?: string | null;
    sort?: string | null;
  },
): Promise<TaskList> {
  const { db, actor } = ctx;
  authorize(actor, "tasks.read");
  const limit = opts.limit ?? DEFAULT_PAGE;
  const sort = oneOf("sort", opts.sort || "activity", TASK_SORTS);
  const status = opts.status ? oneOf("status", opts.status, TASK_STATUSES) : null;
  if (opts.effectStatus && !(SIDE_EFFECT_STATUSES as readonly string[]).includes(opts.effectStatus)) {
    throw new DomainError("bad_request", `effect_status must be one of ${SIDE_EFFECT_STATUSES.join(", ")}.`, {
      fields: [{ path: "effect_status", message: SIDE_EFFECT_STATUSES.join(", ") }],
    });
  }
  let after: { createdAt: string; taskId: string } | undefined;
  if (opts.cursor) {
    const c = listCursor(opts.cursor, sort);
    after = { createdAt: c.at, taskId: c.id };
  }
  const base = {
    sort,
    q: opts.q?.trim() || undefined,
    phase: opts.phase || undefined,
    status: opts.effectStatus || undefined,
    host: filterText("host", opts.host),
    credentialRef: filterText("credential_ref", opts.credentialRef),
    policyVersion: policyVersionFilter(opts.policyVersion),
    workflow: workflowFilter(opts.workflow),
    phaseFilter: status ? phaseFilterFor(status) : undefined,
  };
  const byGate = status !== null && !ENDED_STATUSES.includes(status);
  const now = new Date();
  const matches: Array<{ row: q.TaskListRow; status: TaskStatus }> = [];
  let lastScanned: q.TaskListRow | undefined;
  let exhausted = false;
  let scanned = 0;
  while (matches.length <= limit && scanned < (byGate ? STATUS_SCAN_MAX : Infinity)) {
    const batchSize = byGate ? Math.min(Math.max(limit + 1, 50), STATUS_SCAN_MAX - scanned) : limit + 1;
    const rows = await q.listTasks(db, actor.tenantId, { ...base, limit: batchSize, after });
    // Without a status the gate decides, only the rows shown need a verdict.
    const shown = byGate ? rows : rows.slice(0, limit);
    const open = shown.filter((r) => !endedStatus(r.phase, r.terminated)).map((r) => r.task_id);
    const verdicts = await verdictsOf(ctx, open);
    for (const r of rows) {
      scanned += 1;
      lastScanned = r;
      const s = taskStatus(
        { phase: r.phase, terminated: r.terminated, last_activity_at: r.activity_at },
        verdicts.get(r.task_id) ?? null,
        now,
      );
      if (!status || s === status) matches.push({ row: r, status: s });
      if (matches.length > limit) break;
    }
    if (rows.length < batchSize) {
      exhausted = matches.length <= limit;
      break;
    }
    if (!byGate) break;
    after = lastScanned ? { createdAt: sortKey(lastScanned, sort), taskId: lastScanned.task_id } : after;
  }
  const page = matches.slice(0, limit);
  const last = matches.length > limit ? page[page.length - 1]?.row : exhausted ? undefined : lastScanned;
  return {
    tasks: page.map(({ row: r, status: s }) => ({
      task_id: r.task_id,
      principal: r.principal,
      phase: r.phase,
      policy_version: r.policy_version,
      workflow: r.workflow,
      version: r.latest_version,
      event_count: Number(r.event_count),
      last_event_at: r.last_event_at,
      created_at: r.created_at,
      unknown_side_effects: Number(r.unknown_side_effects),
      awaiting_approval_side_effects: Number(r.awaiting_approval_side_effects),
      principal_revoked: Boolean(r.principal_revoked),
      status: s,
      last_activity_at: r.activity_at,
    })),
    next_cursor: last ? encodeCursor([sortKey(last, sort), last.task_id, sort]) : null,
  };
}

/** The row's sort key (ISO 8601 UTC with microseconds). */
const sortKey = (r: q.TaskListRow, sort: TaskSort) => (sort === "activity" ? r.activity_at : r.created_cursor);

/** The phases a status can have (the SQL prefilter; the gate decides among runs that have not ended). */
function phaseFilterFor(status: TaskStatus): q.PhaseFilter {
  const notDoneFailed = TERMINAL_PHASES.filter((p) => p !== TERMINATED_PHASE);
  switch (status) {
    case "terminated":
      return { terminated: true };
    case "done":
      return { terminated: false, phasesIn: ["done", "completed"] };
    case "failed":
      return { terminated: false, phasesIn: notDoneFailed.filter((p) => p !== "done" && p !== "completed") };
    default:
      return { terminated: false, phasesNotIn: TERMINAL_PHASES };
  }
}

/**
 * The workflow filter: a workflow name as sent (trimmed; none when empty). A name past the workflow limit is no
 * workflow's, and is refused rather than searched for.
 * @throws DomainError bad_request naming `workflow`.
 */
function workflowFilter(raw: string | null | undefined): string | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  if (v.length > LIMITS.workflow.max) {
    throw new DomainError("bad_request", `workflow is at most ${LIMITS.workflow.max} characters.`, {
      fields: [{ path: "workflow", message: `at most ${LIMITS.workflow.max} characters` }],
    });
  }
  return v;
}

/**
 * The tenant's workflows that tasks name, in order, for the task list's workflow filter (at most `limit`).
 * @throws DomainError forbidden without `tasks.read`.
 */
export async function listTaskWorkflowsForActor({ db, actor }: VerbContext, limit = 200): Promise<string[]> {
  authorize(actor, "tasks.read");
  return q.listTaskWorkflows(db, actor.tenantId, limit);
}

/** `raw` when it is one of `allowed`. @throws DomainError bad_request naming the parameter and the values. */
function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  const parsed = z.enum(allowed as unknown as [T, ...T[]]).safeParse(raw);
  if (!parsed.success) {
    throw new DomainError("bad_request", `${name} must be one of ${allowed.join(", ")}.`, {
      fields: [{ path: name, message: allowed.join(", ") }],
    });
  }
  return parsed.data;
}
