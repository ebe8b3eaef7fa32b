/**
 * `PUT /api/v1/tasks/{task_id}`: checkpoint the task record (docs/concepts.md#task-record).
 * authorize → validate (zod, data-only, no credential values) → one transaction: one guarded UPDATE of the task row
 * (principal unchanged, attempt not older than the current one, based on the current version when the writer says
 * which) that bumps the version; the signed checkpoint; the declared side effects and artifacts, each set-based in one
 * statement; the audit row.
 */
import { sql } from "drizzle-orm";
import { canonicalName } from "../names";
import { queryRows, type Db } from "@/db";
import { isoUtc } from "@/db/queries/sql-helpers";
import type { SideEffectStatus } from "@/db/schema/enums";
import type { CheckpointResult } from "@/lib/contract/api";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { signCanonical } from "../crypto/signing";
import { DomainError } from "../errors";
import { ATTEMPT_STEP } from "../limits";
import { attemptTooFarAhead, endAttempts } from "../side-effects/attempts";
import { flushMoves, mover } from "../side-effects/lifecycle/moves";
import { declaredEffectsInsert } from "../side-effects/lifecycle/statements";
import { sealMovedEffects } from "../side-effects/lifecycle/seal";
import type { ToOf } from "../side-effects/lifecycle/transitions";
import { withRetry } from "../tx";
import { approvalContext } from "../approvals/read";
import { requestApproval } from "../approvals/requests";
import { normalizePrincipal } from "./principal";
import { checkpointBinding } from "./signatures";
import { parseTaskRecord, splitCheckpointBody, type ParsedTaskRecord } from "./record";
import type { SigningContext } from "../context";
import { effectsUnknown } from "../notifications/facts";
import { enqueueNotifications } from "../notifications/outbox";

/**
 * Status a side effect gets when a checkpoint declares it for the first time. The server never saw an intent for it,
 * so a claimed in-flight write is recorded as `unknown`, a claimed completion needs a receipt, and a claimed approval
 * is `awaiting_approval`: only an approver's recorded decision approves (docs/concepts.md#task-record).
 */
export function initialStatusFromRecord(declared: ParsedTaskRecord["side_effects"][string]): ToOf<"declared"> {
  switch (declared.status) {
    case "not_started":
    case "awaiting_approval":
    case "failed":
      return declared.status;
    case "approved":
      return "awaiting_approval";
    case "completed":
      return declared.receipt ? "completed" : "unknown";
    case "in_flight":
    case "unknown":
      return "unknown";
  }
}

function statusReasonFor(declared: ParsedTaskRecord["side_effects"][string], status: SideEffectStatus): string | null {
  if (status === "unknown") return "Declared by a checkpoint without a receipt; no intent was recorded here.";
  if (declared.status === "approved")
    return "A checkpoint declared it approved; only an approver's recorded decision approves, so it waits for one.";
  return null;
}

/**
 * Reads `If-Match` (RFC 9110 §13.1.1) as a checkpoint version: `"3"`, `3` or `W/"3"`.
 * @throws DomainError validation_failed when it names no version.
 */
export function versionFromIfMatch(header: string | null | undefined): number | null {
  if (header === null || header === undefined || header.trim() === "") return null;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!m) {
    throw new DomainError(
      "validation_failed",
      'If-Match must name the checkpoint version this write is based on, e.g. If-Match: "3".',
      {
        fields: [{ path: "If-Match", message: "a version number" }],
      },
    );
  }
  return Number(m[1]);
}

/**
 * Stores a new checkpoint version of the record.
 * @param body the task record JSON, optionally with `base_version` (the version it is based on).
 * @param opts.ifMatch the `If-Match` header: the same as base_version (both may be sent when they agree).
 * @returns `{task_id, version, digest (sha256 hex of RFC 8785 JSON), signature (Ed25519, base64url), key_id, attempt}`.
 * @throws DomainError forbidden; validation_failed (field named); stale_attempt (409: the record's attempt is older
 *   than the task's current one; details `{attempt, current_attempt}`); attempt_too_far_ahead (422: more than
 *   ATTEMPT_STEP ahead of the current one); version_conflict (409: based on another version
 *   than the latest; details `{base_version, current_version}`); conflict (409: the record names another principal than
 *   the task acts for, a declared side effect is bound to another idempotency key, or the key belongs to another effect).
 */
export async function checkpointTask(
  { db, actor, signingKey: key }: SigningContext,
  { taskId, body, ...opts }: { taskId: string; body: unknown; ifMatch?: string | null },
): Promise<CheckpointResult> {
  authorize(actor, "tasks.checkpoint");
  const split = splitCheckpointBody(body);
  const headerVersion = versionFromIfMatch(opts.ifMatch);
  if (headerVersion !== null && split.baseVersion !== null && headerVersion !== split.baseVersion) {
    throw new DomainError(
      "validation_failed",
      `If-Match names version ${headerVersion} but base_version is ${split.baseVersion}; send one, or the same in both.`,
      { fields: [{ path: "base_version", message: "differs from If-Match" }] },
    );
  }
  const baseVersion = headerVersion ?? split.baseVersion;
  const record = parseTaskRecord(taskId, split.record);
  const principal = normalizePrincipal(record.principal);
  const signed = signCanonical(record, key);
  const tenantId = actor.tenantId;

  const declared = Object.entries(record.side_effects).map(([name, d]) => {
    const status = initialStatusFromRecord(d);
    return {
      name,
      idempotency_key: d.idempotency_key,
      status,
      tool: d.tool ?? name,
      action: d.action ?? null,
      mutation: d.mutation ?? true,
      receipt: status === "completed" && d.receipt ? d.receipt : null,
      status_reason: statusReasonFor(d, status),
      payload_digest: d.payload_digest ?? null,
    };
  });

  return withAuditSealed(db, tenantId, () =>
    withRetry(() =>
      db.transaction(async (tx) => {
        await tx.execute(
          sql`insert into tasks (tenant_id, task_id) values (${tenantId}, ${taskId}) on conflict do nothing`,
        );
        // One guarded statement decides: principal unchanged, attempt not stale, version as the writer expects.
        const [task] = await queryRows<{ latest_version: number; previous_attempt: number }>(
          tx,
          sql`with before as (
                select current_attempt from tasks where tenant_id = ${tenantId} and task_id = ${taskId} for update)
              update tasks
              set latest_version = latest_version + 1, principal = ${principal}, policy_version = ${record.policy_version},
                  phase = ${record.phase}, current_attempt = greatest(current_attempt, ${record.attempt}), updated_at = now()
              where tenant_id = ${tenantId} and task_id = ${taskId} and terminated_at is null
                and (principal is null or principal = ${principal})
                and current_attempt <= ${record.attempt} and ${record.attempt} <= current_attempt + ${ATTEMPT_STEP}
                and (${baseVersion}::integer is null or latest_version = ${baseVersion}::integer)
              returning latest_version, (select current_attempt from before) as previous_attempt`,
        );
        if (!task) await explainRefusal(tx, tenantId, taskId, principal, record.attempt, baseVersion);
        const version = task!.latest_version;
        if (task!.previous_attempt < record.attempt) {
          // The effects that end with the older attempts are audited as moved by this checkpoint's writer.
          const by = mover(actor, "request");
          await endAttempts(
            tx,
            by,
            taskId,
            { before: record.attempt },
            `A checkpoint from a new attempt (attempt ${record.attempt}) arrived before a receipt was recorded.`,
          );
          await flushMoves(tx, by);
        }
        // Format 2 (decision 0035): the record's digest is also signed in its place, so the row verifies nowhere else.
        const binding = signCanonical(
          checkpointBinding({ tenantId, taskId, version, attempt: record.attempt, digest: signed.digest }),
          key,
        );
        await tx.execute(sql`
          insert into task_checkpoints (tenant_id, task_id, version, record, digest, signature, key_id, attempt,
                                        signature_format, binding_signature)
          values (${tenantId}, ${taskId}, ${version}, ${signed.canonical}::jsonb, ${signed.digest}, ${signed.signature}, ${signed.kid}, ${record.attempt},
                  2, ${binding.signature})`);

        // The first checkpoint naming a tool sets its accepted definition; later ones only report (decision 0033).
        const tools = new Map<string, string>();
        for (const [tool, digest] of Object.entries(record.tool_definitions ?? {})) {
          if (!tools.has(canonicalName(tool))) tools.set(canonicalName(tool), digest);
        }
        if (tools.size) {
          await tx.execute(sql`
            insert into task_tool_definitions (tenant_id, task_id, tool, digest)
            select ${tenantId}::uuid, ${taskId}, d.tool, d.digest
            from json_to_recordset(${JSON.stringify([...tools].map(([tool, digest]) => ({ tool, digest })))}::json)
              as d(tool text, digest text)
            order by d.tool
            on conflict do nothing`);
        }
        if (declared.length) {
          const inserted = new Set(await declareSideEffects(tx, tenantId, taskId, declared));
          // An effect that starts out `unknown` (declared in flight, or completed without a receipt) is heard about
          // like one the lifecycle moved there (decision 0040), in this transaction.
          const unknown = declared.filter((d) => d.status === "unknown" && inserted.has(d.name));
          await enqueueNotifications(
            tx,
            tenantId,
            effectsUnknown(
              unknown.map((d) => ({
                taskId,
                name: d.name,
                idempotencyKey: d.idempotency_key,
                transition: "declared",
                eventId: `checkpoint-${version}`,
              })),
            ),
          );
        }
        // An effect declared awaiting approval (or claimed approved) becomes a request in the approvals queue: only an
        // approver's recorded decision approves it (docs/concepts.md#approvals).
        await requestDeclaredApprovals(tx, actor, taskId, record);
        if (record.artifacts.length) {
          await tx.execute(sql`
            insert into artifacts (tenant_id, task_id, object_ref, sha256, size_bytes, media_type, first_version)
            select ${tenantId}::uuid, ${taskId}, a.ref, a.sha256, a.size, a.media_type, ${version}
            from json_to_recordset(${JSON.stringify(record.artifacts)}::json) as a(ref text, sha256 text, size bigint, media_type text)
            order by a.ref, a.sha256
            on conflict do nothing`);
        }

        // The effects this checkpoint declared or ended carry the server's seal, committed with them (decision 0035).
        await sealMovedEffects(tx, key, tenantId, [taskId]);
        await appendAuditPending(tx, actor, {
          action: "task.checkpointed",
          target: `task:${taskId}`,
          details: { version, digest: signed.digest, phase: record.phase, attempt: record.attempt },
        });
        return {
          task_id: taskId,
          version,
          digest: signed.digest,
          signature: signed.signature,
          key_id: signed.kid,
          attempt: record.attempt,
        };
      }),
    ),
  );
}

/** Why the guarded update changed nothing, as the error to answer. Reads the locked row. */
async function explainRefusal(
  tx: Db,
  tenantId: string,
  taskId: string,
  principal: string,
  attempt: number,
  baseVersion: number | null,
): Promise<never> {
  const [current] = await queryRows<{
    principal: string | null;
    current_attempt: number;
    latest_version: number;
    terminated_at: string | null;
    terminated_by: string | null;
  }>(
    tx,
    sql`select principal, current_attempt, latest_version, ${isoUtc("terminated_at")} as terminated_at, terminated_by
        from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
  );
  if (current?.terminated_at) {
    // Ended by a person (lib/domain/tasks/terminate.ts): the runtime's state may not move on.
    throw new DomainError(
      "task_terminated",
      `Task ${taskId} was ended by ${current.terminated_by ?? "a person"} at ${current.terminated_at}; it takes no more checkpoints. Stop this run; start a new task to go on.`,
      { terminated_at: current.terminated_at, terminated_by: current.terminated_by },
    );
  }
  if (current && attempt > current.current_attempt + ATTEMPT_STEP)
    throw attemptTooFarAhead(attempt, current.current_attempt);
  if (current && current.current_attempt > attempt) {
    throw new DomainError(
      "stale_attempt",
      `This checkpoint comes from attempt ${attempt}, but attempt ${current.current_attempt} has started since: a stale sandbox may not overwrite the task's state. Stop this sandbox; the current attempt checkpoints.`,
      { attempt, current_attempt: current.current_attempt },
    );
  }
  if (current && baseVersion !== null && current.latest_version !== baseVersion) {
    throw new DomainError(
      "version_conflict",
      `This checkpoint is based on version ${baseVersion}, but the latest is version ${current.latest_version}. Read the task again and checkpoint from the latest version.`,
      { base_version: baseVersion, current_version: current.latest_version },
    );
  }
  // The principal is whose authority the run uses: changing it would slip past a revocation.
  throw new DomainError(
    "conflict",
    `Task ${taskId} acts for principal "${current?.principal}"; a checkpoint cannot change it to "${principal}". Start a new task to act for another principal.`,
    { field: "principal", current: current?.principal ?? null },
  );
}

/**
 * Creates the approval requests for the effects a checkpoint declares `awaiting_approval` or `approved` and that wait
 * for a decision on the server (the same request again for the same key and digest; none for one decided already).
 */
async function requestDeclaredApprovals(tx: Db, actor: Actor, taskId: string, record: ParsedTaskRecord): Promise<void> {
  const wanted = Object.entries(record.side_effects).filter(
    ([, d]) => d.status === "awaiting_approval" || d.status === "approved",
  );
  if (!wanted.length) return;
  const tenantId = actor.tenantId;
  const waiting = await queryRows<{
    name: string;
    idempotency_key: string;
    tool: string | null;
    action: string | null;
    has_request: boolean;
  }>(
    tx,
    sql`select s.name, s.idempotency_key, s.tool, s.action,
               exists (select 1 from approval_requests a where a.tenant_id = s.tenant_id and a.task_id = s.task_id
                         and a.idempotency_key = s.idempotency_key and a.superseded_by is null) as has_request
        from side_effects s
        where s.tenant_id = ${tenantId} and s.task_id = ${taskId} and s.status = 'awaiting_approval'
          and s.name in (${sql.join(
            wanted.map(([n]) => sql`${n}`),
            sql`, `,
          )})`,
  );
  const todo = waiting.filter((w) => !w.has_request);
  if (!todo.length) return;
  const ctx = await approvalContext(tx, tenantId, taskId);
  for (const w of todo) {
    const d = record.side_effects[w.name]!;
    await requestApproval(tx, {
      tenantId,
      taskId,
      sideEffect: w.name,
      idempotencyKey: w.idempotency_key,
      principal: ctx.principal,
      action: w.action ?? d.action ?? w.name,
      tool: w.tool ?? d.tool ?? w.name,
      payload: null,
      payloadDigest: d.payload_digest ?? null,
      inputDigest: ctx.input_digest,
      policyVersion: ctx.policy_version,
      agent: null,
      agentVersion: null,
      requestedBy: actor,
      origin: "checkpoint",
    });
  }
}

type Declared = {
  name: string;
  idempotency_key: string;
  status: ToOf<"declared">;
  tool: string;
  action: string | null;
  mutation: boolean;
  receipt: unknown;
  status_reason: string | null;
  payload_digest: string | null;
};

/**
 * Inserts the effects a checkpoint declares for the first time (one statement, in name order) and checks that every
 * declared one is bound to its key: the server's view of an existing effect is never changed by a checkpoint.
 * @throws DomainError conflict when a declared key differs from the stored one, or belongs to another effect.
 */
/** Stores the effects a checkpoint declares for the first time; returns the names it inserted. */
async function declareSideEffects(tx: Db, tenantId: string, taskId: string, declared: Declared[]): Promise<string[]> {
  const rows = await queryRows<{ name: string; idempotency_key: string; stored_key: string | null; inserted: boolean }>(
    tx,
    sql`with d as (
          select * from json_to_recordset(${JSON.stringify(declared)}::json) as x(
            name text, idempotency_key text, status side_effect_status, tool text, action text, mutation boolean,
            receipt jsonb, status_reason text, payload_digest text)),
        ins as (${declaredEffectsInsert(tenantId, taskId, sql`d`)})
        select d.name, d.idempotency_key, s.idempotency_key as stored_key, (i.name is not null) as inserted
        from d
        left join ins i on i.name = d.name
        left join side_effects s on s.tenant_id = ${tenantId} and s.task_id = ${taskId} and s.name = d.name
        order by d.name`,
  );
  for (const r of rows) {
    if (r.inserted) continue;
    if (r.stored_key === null) {
      throw new DomainError(
        "conflict",
        `side_effects.${r.name}.idempotency_key is already used by another side effect of this tenant; use a key unique to this effect.`,
      );
    }
    if (r.stored_key !== r.idempotency_key) {
      throw new DomainError(
        "conflict",
        `side_effects.${r.name} is bound to idempotency key "${r.stored_key}"; a checkpoint cannot change it.`,
      );
    }
  }
  return rows.filter((r) => r.inserted).map((r) => r.name);
}
