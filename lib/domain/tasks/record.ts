/**
 * The task record (docs/concepts.md#task-record): the durable, data-only record of one logical run.
 * Strict: unknown fields are rejected, so a container handle or shell state cannot ride along, and any
 * value that looks like a credential is rejected (not redacted: the runtime must not send it at all).
 */
import { z } from "zod";
import { SIDE_EFFECT_STATUSES } from "@/db/schema/enums";
import { DomainError, validationError } from "../errors";
import { findSecrets, unstorableJson } from "../events/redact";
import { taskIdSchema } from "../events/schema";
import { CLASSIFICATIONS } from "../approvals/freshness";
import {
  IDEMPOTENCY_KEY,
  IDEMPOTENCY_KEY_RULE,
  identifierName,
  plainName,
  plainTextCheck,
  SIDE_EFFECT_NAME,
  SIDE_EFFECT_NAME_RULE,
} from "../names";
import { ATTEMPT_MAX, LIMITS } from "../limits";
import { isoTimeText } from "../time";

const sha256 = z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256");
const shortText = z.string().min(1).max(500);
const isoTime = isoTimeText;

export const receiptSchema = z.strictObject({
  external_operation_id: z
    .string()
    .trim()
    .min(1, "external_operation_id must not be blank")
    .max(LIMITS.externalOperationId.max)
    .check(plainTextCheck("external_operation_id")),
  result_digest: z.string().max(LIMITS.digest.max).check(plainTextCheck("result_digest")).nullable().optional(),
  completed_at: isoTime("completed_at"),
});

export { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE, SIDE_EFFECT_NAME, SIDE_EFFECT_NAME_RULE };

/**
 * Tool and action names on effects: printable ASCII, compared without case (decision 0033), no surrounding whitespace.
 */
export const effectLabel = (field: "action" | "tool") =>
  identifierName(field, field === "tool" ? LIMITS.toolName : LIMITS.actionName);

/** Most side effects one checkpoint may declare (each is a row the checkpoint writes). */
export const MAX_RECORD_SIDE_EFFECTS = 500;

export const recordSideEffectSchema = z.strictObject({
  idempotency_key: z.string().regex(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE),
  status: z.enum(SIDE_EFFECT_STATUSES),
  receipt: receiptSchema.nullable().optional(),
  action: effectLabel("action").optional(),
  tool: effectLabel("tool").optional(),
  mutation: z.boolean().optional(),
  /** The digest of what it sends: an approval binds to it, and a write of the same payload under another name is a duplicate. */
  payload_digest: plainName("payload_digest", LIMITS.digest).optional(),
});

export const taskRecordSchema = z.strictObject({
  task_id: taskIdSchema,
  principal: identifierName("principal", LIMITS.principal),
  policy_version: plainName("policy_version", LIMITS.policyVersion),
  phase: plainName("phase", LIMITS.phase),
  /** The sandbox attempt that writes this checkpoint (the fencing token; docs/concepts.md#attempts-and-fencing). */
  attempt: z
    .number({ error: "attempt is required: the sandbox attempt (1, 2, …) that writes this checkpoint" })
    .int("attempt must be a whole number")
    .min(1, "attempt starts at 1")
    .max(ATTEMPT_MAX, `attempt is at most ${ATTEMPT_MAX}`),
  inputs: z
    .array(
      z.strictObject({
        ref: plainName("ref", LIMITS.artifactRef),
        sha256,
        /** How sensitive the input is; an approval binds the highest (decision 0033). */
        classification: z
          .enum(CLASSIFICATIONS, { error: `classification must be one of ${CLASSIFICATIONS.join(", ")}` })
          .optional(),
      }),
    )
    .max(1000)
    .default([]),
  decisions: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(200).check(plainTextCheck("id")),
        summary: z.string().min(1).max(2000),
        at: isoTime("at").optional(),
        by: shortText.check(plainTextCheck("by")).optional(),
      }),
    )
    .max(1000)
    .default([]),
  artifacts: z
    .array(
      z.strictObject({
        ref: plainName("ref", LIMITS.artifactRef),
        sha256,
        size: z.number().int().min(0).optional(),
        media_type: z.string().max(200).optional(),
      }),
    )
    .max(1000)
    .default([]),
  side_effects: z
    .record(z.string().regex(SIDE_EFFECT_NAME, SIDE_EFFECT_NAME_RULE), recordSideEffectSchema)
    .refine((v) => Object.keys(v).length <= MAX_RECORD_SIDE_EFFECTS, {
      error: `a checkpoint declares at most ${MAX_RECORD_SIDE_EFFECTS} side effects; keep finished ones out of the record (their receipts stay on the server)`,
    })
    .default({}),
  approval: z.record(z.string(), z.unknown()).nullable().optional(),
  tool_definitions: z.record(identifierName("tool", LIMITS.toolName), sha256).optional(),
  /**
   * The snapshot this checkpoint's state is in (`snapshot.saved`'s digest and id): a restore after it must bring back
   * this one, else the gate stops (`snapshot_stale`, docs/concepts.md#resume-gate). Without it, the latest snapshot the
   * server received before the checkpoint counts.
   */
  snapshot: z
    .strictObject({
      digest: plainName("snapshot.digest", LIMITS.digest),
      snapshot_id: plainName("snapshot.snapshot_id", LIMITS.snapshotId).optional(),
    })
    .optional(),
  /**
   * The task's constraints (docs/concepts.md#compaction-and-constraints), e.g. "never update a record twice": kept in
   * the signed record, outside any model summary, so a compaction cannot drop them; after `compaction.performed` the
   * runtime re-checks them (`constraint.checked`) before its next mutation.
   */
  constraints: z
    .array(z.string().trim().min(1, "a constraint is not empty").max(500, "a constraint is at most 500 characters"))
    .max(50)
    .optional(),
});

export type ParsedTaskRecord = z.infer<typeof taskRecordSchema>;

/**
 * Splits a checkpoint request body into the record and `base_version` (the version the writer based it on; a request
 * field, never part of the signed record).
 * @throws DomainError validation_failed when base_version is not a whole number ≥ 0.
 */
export function splitCheckpointBody(body: unknown): { record: unknown; baseVersion: number | null } {
  if (
    !body ||
    typeof body !== "object" ||
    Array.isArray(body) ||
    !Object.prototype.hasOwnProperty.call(body, "base_version")
  ) {
    return { record: body, baseVersion: null };
  }
  const { base_version: base, ...record } = body as Record<string, unknown>;
  if (typeof base !== "number" || !Number.isInteger(base) || base < 0) {
    throw new DomainError(
      "validation_failed",
      "base_version must be the whole-number version this checkpoint is based on (0 before the first).",
      {
        fields: [{ path: "base_version", message: "a whole number ≥ 0" }],
      },
    );
  }
  return { record, baseVersion: base };
}

/**
 * Parses a task record body for `taskId`.
 * @throws DomainError validation_failed (field path named) when the shape is wrong, the task id differs
 *   from the URL, or a value looks like a credential.
 */
export function parseTaskRecord(taskId: string, body: unknown): ParsedTaskRecord {
  const unstorable = unstorableJson(body);
  if (unstorable) throw new DomainError("validation_failed", `The task record ${unstorable}.`);
  const parsed = taskRecordSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const record = parsed.data;
  if (record.task_id !== taskId) {
    throw new DomainError("validation_failed", `task_id: "${record.task_id}" does not match the URL's "${taskId}"`, {
      fields: [{ path: "task_id", message: "does not match the URL" }],
    });
  }
  const secrets = findSecrets(record);
  if (secrets.length) {
    throw new DomainError(
      "validation_failed",
      `${secrets[0]!.path}: looks like a credential value (${secrets[0]!.kind}). The task record is data only: keep secrets in your vault and record a reference.`,
      { fields: secrets.map((s) => ({ path: s.path, message: `looks like a credential value (${s.kind})` })) },
    );
  }
  return record;
}
