/**
 * The task record (DESIGN.md "Task record"): the durable, data-only record of one logical run.
 * Strict: unknown fields are rejected, so a container handle or shell state cannot ride along, and any
 * value that looks like a credential is rejected (not redacted: the runtime must not send it at all).
 */
import { z } from "zod";
import { SIDE_EFFECT_STATUSES } from "@/db/schema/enums";
import { DomainError, validationError } from "../errors";
import { findSecrets, unstorableJson } from "../events/redact";
import { taskIdSchema } from "../events/schema";
import { isoTimeText } from "../time";
import { unsafeTextReason } from "../typed-text";

const sha256 = z.string().regex(/^[a-f0-9]{64}$/, "must be a lower-case hex sha256");
const shortText = z.string().min(1).max(500);
const isoTime = isoTimeText;

/**
 * A name people read and match against (principal, phase, policy version): 1–`max` characters, no surrounding
 * whitespace, no control or bidirectional override characters. A principal a person cannot type exactly could
 * never be revoked, and one that displays unlike its bytes could be revoked by mistake.
 */
function plainName(field: string, max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((v) => v === v.trim(), `${field} must not start or end with whitespace`)
    .refine((v) => unsafeTextReason(v) === null, { error: (iss) => `${field} ${unsafeTextReason(String(iss.input))}` });
}

export const receiptSchema = z.strictObject({
  external_operation_id: z.string().trim().min(1, "external_operation_id must not be blank").max(500),
  result_digest: z.string().max(200).nullable().optional(),
  completed_at: isoTime("completed_at"),
});

export const recordSideEffectSchema = z.strictObject({
  idempotency_key: z.string().min(8, "idempotency_key must be at least 8 characters").max(200),
  status: z.enum(SIDE_EFFECT_STATUSES),
  receipt: receiptSchema.nullable().optional(),
  action: shortText.optional(),
  tool: shortText.optional(),
  mutation: z.boolean().optional(),
});

export const SIDE_EFFECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const taskRecordSchema = z.strictObject({
  task_id: taskIdSchema,
  principal: plainName("principal", 500),
  policy_version: plainName("policy_version", 100),
  phase: plainName("phase", 100),
  inputs: z.array(z.strictObject({ ref: shortText, sha256 })).max(1000).default([]),
  decisions: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(200),
        summary: z.string().min(1).max(2000),
        at: isoTime("at").optional(),
        by: shortText.optional(),
      }),
    )
    .max(1000)
    .default([]),
  artifacts: z
    .array(
      z.strictObject({
        ref: shortText,
        sha256,
        size: z.number().int().min(0).optional(),
        media_type: z.string().max(200).optional(),
      }),
    )
    .max(1000)
    .default([]),
  side_effects: z
    .record(z.string().regex(SIDE_EFFECT_NAME, "side-effect names are letters, digits, '.', '_' or '-'"), recordSideEffectSchema)
    .default({}),
  approval: z.record(z.string(), z.unknown()).nullable().optional(),
  tool_definitions: z.record(z.string().min(1).max(200), sha256).optional(),
});

export type ParsedTaskRecord = z.infer<typeof taskRecordSchema>;

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
