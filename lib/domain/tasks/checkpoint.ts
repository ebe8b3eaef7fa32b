/**
 * `PUT /api/v1/tasks/{task_id}`: checkpoint the task record (DESIGN.md "Task record").
 * authorize → validate (zod, data-only, no credential values) → one transaction: bump the version under
 * the task's row lock, keep the signed checkpoint, declare side effects and artifacts, audit row.
 */
import { sql } from "drizzle-orm";
import { queryRows, type Db } from "@/db";
import type { SideEffectStatus } from "@/db/schema/enums";
import type { CheckpointResult } from "@/lib/client/types";
import { appendAudit } from "../audit/append";
import { authorize, type Actor } from "../authz";
import { signCanonical, type SigningKey } from "../crypto/signing";
import { DomainError } from "../errors";
import { withRetry } from "../tx";
import { parseTaskRecord, type ParsedTaskRecord } from "./record";

/**
 * Status a side effect gets when a checkpoint declares it for the first time. The server never saw an
 * intent for it, so a claimed in-flight write is recorded as `unknown`, and a claimed completion needs a receipt.
 */
export function initialStatusFromRecord(declared: ParsedTaskRecord["side_effects"][string]): SideEffectStatus {
  switch (declared.status) {
    case "not_started":
    case "awaiting_approval":
    case "approved":
    case "failed":
      return declared.status;
    case "completed":
      return declared.receipt ? "completed" : "unknown";
    case "in_flight":
    case "unknown":
      return "unknown";
  }
}

/**
 * Stores a new checkpoint version of the record.
 * @param body the task record JSON.
 * @returns `{task_id, version, digest (sha256 hex of RFC 8785 JSON), signature (Ed25519, base64url)}`.
 * @throws DomainError forbidden, validation_failed (field named), conflict (the record names another principal
 *   than the task's first checkpoint did; a declared side effect is bound to another idempotency key, or the key
 *   belongs to another effect of the tenant).
 */
export async function checkpointTask(
  db: Db,
  actor: Actor,
  taskId: string,
  body: unknown,
  key: SigningKey,
): Promise<CheckpointResult> {
  authorize(actor, "tasks.checkpoint");
  const record = parseTaskRecord(taskId, body);
  const signed = signCanonical(record, key);
  const tenantId = actor.tenantId;

  return withRetry(() =>
    db.transaction(async (tx) => {
      await tx.execute(sql`insert into tasks (tenant_id, task_id) values (${tenantId}, ${taskId}) on conflict do nothing`);
      const [task] = await queryRows<{ latest_version: number }>(
        tx,
        sql`update tasks
            set latest_version = latest_version + 1, principal = ${record.principal},
                policy_version = ${record.policy_version}, phase = ${record.phase}, updated_at = now()
            where tenant_id = ${tenantId} and task_id = ${taskId}
              and (principal is null or principal = ${record.principal})
            returning latest_version`,
      );
      if (!task) {
        // The principal is whose authority the run uses: changing it would slip past a revocation.
        const [current] = await queryRows<{ principal: string }>(
          tx,
          sql`select principal from tasks where tenant_id = ${tenantId} and task_id = ${taskId}`,
        );
        throw new DomainError(
          "conflict",
          `Task ${taskId} acts for principal "${current?.principal}"; a checkpoint cannot change it to "${record.principal}". Start a new task to act for another principal.`,
          { field: "principal", current: current?.principal ?? null },
        );
      }
      const version = task.latest_version;
      await tx.execute(sql`
        insert into task_checkpoints (tenant_id, task_id, version, record, digest, signature, key_id)
        values (${tenantId}, ${taskId}, ${version}, ${signed.canonical}::jsonb, ${signed.digest}, ${signed.signature}, ${signed.kid})`);

      for (const [name, declared] of Object.entries(record.side_effects)) {
        const status = initialStatusFromRecord(declared);
        await tx.execute(sql`
          insert into side_effects (tenant_id, task_id, name, idempotency_key, status, tool, action, mutation, receipt, status_reason)
          values (${tenantId}, ${taskId}, ${name}, ${declared.idempotency_key}, ${status}::side_effect_status,
                  ${declared.tool ?? name}, ${declared.action ?? null}, ${declared.mutation ?? true},
                  ${status === "completed" && declared.receipt ? JSON.stringify(declared.receipt) : null}::jsonb,
                  ${status === "unknown" ? "Declared by a checkpoint without a receipt; no intent was recorded here." : null})
          on conflict do nothing`);
        const [row] = await queryRows<{ idempotency_key: string }>(
          tx,
          sql`select idempotency_key from side_effects where tenant_id = ${tenantId} and task_id = ${taskId} and name = ${name}`,
        );
        if (!row) {
          throw new DomainError(
            "conflict",
            `side_effects.${name}.idempotency_key is already used by another side effect of this tenant; use a key unique to this effect.`,
          );
        }
        if (row.idempotency_key !== declared.idempotency_key) {
          throw new DomainError(
            "conflict",
            `side_effects.${name} is bound to idempotency key "${row.idempotency_key}"; a checkpoint cannot change it.`,
          );
        }
      }

      for (const a of record.artifacts) {
        await tx.execute(sql`
          insert into artifacts (tenant_id, task_id, object_ref, sha256, size_bytes, media_type, first_version)
          values (${tenantId}, ${taskId}, ${a.ref}, ${a.sha256}, ${a.size ?? null}, ${a.media_type ?? null}, ${version})
          on conflict do nothing`);
      }

      await appendAudit(tx, actor, {
        action: "task.checkpoint",
        target: `task:${taskId}`,
        details: { version, digest: signed.digest, phase: record.phase },
      });
      return { task_id: taskId, version, digest: signed.digest, signature: signed.signature };
    }),
  );
}
