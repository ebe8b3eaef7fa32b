/**
 * The signatures of a stored checkpoint (docs/concepts.md#checkpoints-and-signatures, decision 0035): the record's own
 * Ed25519 signature, and, from signature format 2, the binding that signs the record's digest in its place.
 */
import { verifyCanonical, type SigningKey } from "../crypto/signing";

/** A stored checkpoint as far as its signatures go. */
export type StoredCheckpoint = {
  record: unknown;
  digest: string;
  signature: string;
  key_id: string;
  version: number;
  attempt: number | null;
  signature_format: number;
  binding_signature: string | null;
};

/**
 * What a format-2 checkpoint's `binding_signature` signs (decision 0035): the record's digest in its place — tenant,
 * task, version and attempt — so a signed record copied to another version, task or tenant no longer verifies there.
 */
export function checkpointBinding(at: {
  tenantId: string;
  taskId: string;
  version: number;
  attempt: number | null;
  digest: string;
}): Record<string, unknown> {
  return {
    format: 2,
    tenant_id: at.tenantId,
    task_id: at.taskId,
    version: at.version,
    attempt: at.attempt,
    record_digest: at.digest,
  };
}

/** The public half of a signing key: what checking a signature needs. */
export type VerificationKey = Pick<SigningKey, "kid" | "publicKey">;

/** How a stored checkpoint verifies: in its place, not at all, or signed for another place. */
export type CheckpointCheck = "valid" | "record_invalid" | "misplaced";

/**
 * Where a stored row sits among its task's rows, as the placement rules read it (decision 0035): whether it is a
 * format-1 row above a format-2 row of its task (`downgraded`, db/queries/tasks.ts `downgradedSql`), and, for the task's newest
 * stored row, the version the task row names as its latest.
 */
export type CheckpointPlace = { version: number; downgraded: boolean; newest: boolean; taskLatestVersion: number };

/**
 * The placement rules over a row's own check (decision 0035), the gate's and the checkpoint views' alike: a row that
 * verifies is still `misplaced` when it is a format-1 row above a format-2 one, or when it is the task's newest stored
 * row but not the version the task row names as its latest (newer rows were removed, or a row was put above them).
 */
export function placedCheck(check: CheckpointCheck, place: CheckpointPlace): CheckpointCheck {
  if (check !== "valid") return check;
  return place.downgraded || (place.newest && place.version !== place.taskLatestVersion) ? "misplaced" : "valid";
}

/**
 * How a stored checkpoint verifies where it is stored (decision 0035): `valid`; `record_invalid` (the record's digest
 * or Ed25519 signature does not match it under the server key); `misplaced` (the record verifies but not in this
 * place: its binding names another tenant, task, version or attempt, the record names another task or attempt, or its
 * signature format is unknown). A format-1 row (written before bindings) has only its record and task to check.
 */
export function checkCheckpoint(
  c: StoredCheckpoint,
  key: VerificationKey,
  at: { tenantId: string; taskId: string },
): CheckpointCheck {
  if (c.key_id !== key.kid) return "record_invalid";
  if (!verifyCanonical(c.record, c.signature, key.publicKey, c.digest)) return "record_invalid";
  const record = (c.record ?? {}) as { task_id?: unknown; attempt?: unknown };
  if (record.task_id !== at.taskId) return "misplaced";
  if (c.attempt !== null && record.attempt !== undefined && record.attempt !== c.attempt) return "misplaced";
  if (Number(c.signature_format) === 1) return "valid";
  if (Number(c.signature_format) !== 2 || !c.binding_signature) return "misplaced";
  const binding = checkpointBinding({ ...at, version: c.version, attempt: c.attempt, digest: c.digest });
  return verifyCanonical(binding, c.binding_signature, key.publicKey) ? "valid" : "misplaced";
}
