/**
 * `PUT /api/v1/tasks/{task_id}/artifacts/{sha256}/content`: a runtime uploads an artifact's bytes (decision 0045).
 * Content-addressed: the server hashes the bytes and stores them only under the sha256 they were sent for; the same
 * bytes again store nothing new. The task must exist in the caller's tenant; the bytes are the tenant's, shared by
 * every task and ref that names that digest.
 */
import { createHash } from "node:crypto";
import { appendAuditPending, withAuditSealed } from "../audit/append";
import { authorize } from "../authz";
import type { VerbContext } from "../context";
import { DomainError, notFound } from "../errors";
import { findLiveTask } from "../tasks/deleted";
import { checkTaskId } from "../tasks/read";
import { databaseArtifactStore } from "./artifact-store";

/** A lower-case hex sha256, as checkpoints list artifacts. */
export const SHA256_HEX = /^[a-f0-9]{64}$/;

/** What an upload answers: the digest, the size stored, and whether this upload stored them (false: already there). */
export type UploadResult = { sha256: string; size: number; created: boolean };

/**
 * Checks a digest named in an address.
 * @throws DomainError validation_failed (422) for anything but 64 lower-case hex digits.
 */
export function checkSha256(sha256: string): void {
  if (!SHA256_HEX.test(sha256)) {
    throw new DomainError("validation_failed", "sha256 must be 64 lower-case hex digits (the sha256 of the bytes).", {
      issues: [{ path: ["sha256"], message: "must be a lower-case hex sha256" }],
    });
  }
}

/**
 * Stores `bytes` as the content of `sha256` for the caller's tenant, audited `artifact.uploaded` when stored.
 * @param bytes the request body, already capped at the upload limit by the route.
 * @returns `created` true when stored now (the route answers 201; also when it replaces stored bytes that no longer
 *   hashed to the digest), false when the same bytes were already stored intact (200, nothing written).
 * @throws DomainError forbidden (a person: only a runtime key uploads), not_found (no such task in the tenant),
 *   validation_failed (the digest is not a sha256), content_digest_mismatch (422: the bytes hash to another digest;
 *   details {sha256, computed_sha256, size}; nothing stored).
 */
export async function uploadArtifactContent(
  { db, actor }: VerbContext,
  { taskId, sha256, bytes }: { taskId: string; sha256: string; bytes: Buffer },
): Promise<UploadResult> {
  authorize(actor, "artifacts.upload");
  checkTaskId(taskId);
  checkSha256(sha256);
  return withAuditSealed(db, actor.tenantId, () =>
    db.transaction(async (tx) => {
      // The task first: another workspace's caller learns nothing about the bytes, only that there is no such task.
      if (!(await findLiveTask(tx, actor.tenantId, taskId))) throw notFound(`Task ${taskId}`);
      const computed = createHash("sha256").update(bytes).digest("hex");
      if (computed !== sha256) {
        throw new DomainError(
          "content_digest_mismatch",
          `The ${bytes.length} bytes sent hash to ${computed}, not to ${sha256}: nothing was stored. Upload the bytes the digest was computed from.`,
          { sha256, computed_sha256: computed, size: bytes.length },
        );
      }
      const { created } = await databaseArtifactStore(tx).put(actor.tenantId, sha256, bytes);
      if (created) {
        await appendAuditPending(tx, actor, {
          action: "artifact.uploaded",
          target: `task:${taskId}`,
          details: { sha256, size: bytes.length },
        });
      }
      return { sha256, size: bytes.length, created };
    }),
  );
}
