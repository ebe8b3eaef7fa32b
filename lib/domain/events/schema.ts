/**
 * Validation of one runtime event (docs/concepts.md#events; the limits of lib/domain/limits.ts, decision 0028).
 * Every value of an event that reaches an index or a key — the id, task id, type, sandbox id, and the attributes the
 * server indexes or pairs by ({@link ATTR_RULES}) — is held to its boundary limit and to the typed-text rule here, so an
 * event the server stores can never make a later write fail; a rejection names the field path.
 */
import { z } from "zod";
import { PLANES, type Plane } from "@/db/schema/enums";
import { ATTEMPT_MAX, LIMITS, type BoundaryLimit } from "../limits";
import {
  credentialKindsInName,
  IDEMPOTENCY_KEY,
  IDEMPOTENCY_KEY_RULE,
  identifierName,
  identifierProblem,
  isPlainAscii,
  nameProblem,
  plainName,
  plainTextCheck,
  SIDE_EFFECT_NAME,
  SIDE_EFFECT_NAME_RULE,
} from "../names";
import { ISO_TIME_PATTERN, isoTimeField, plausibleTime, withinMicroseconds } from "../time";
import { ATTEMPT_REQUIRED_TYPES, RUNTIME_EVENT_TYPES } from "./catalogue";
import { normalDigest, toolCallDigest } from "../crypto/canonical";

/** Task ids travel in URL paths: letters, digits and `. _ : -`, 1–200 characters. */
export const TASK_ID_PATTERN = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${LIMITS.taskId.max - 1}}$`);
export const taskIdSchema = z
  .string()
  .regex(TASK_ID_PATTERN, `task ids are 1–${LIMITS.taskId.max} characters of letters, digits, '.', '_', ':' or '-'`);

/**
 * A sandbox id or an actor: the rule of names without the credential check — a credential pasted there is redacted
 * (they label events, they key nothing the server deduplicates by).
 */
function labelField(field: string, limit: BoundaryLimit) {
  return z.string({ error: `${field} must be a string (1–${limit.max} characters)` }).check((ctx) => {
    const problem = nameProblem(ctx.value, limit, { credentials: "allow" });
    if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${problem}` });
  });
}

/** Largest serialized `attrs` object accepted per event, in bytes. */
export const MAX_ATTRS_BYTES = 64 * 1024;

export { plausibleTime };

export const eventInputSchema = z.strictObject({
  id: plainName("id", LIMITS.eventId),
  task_id: taskIdSchema,
  plane: z.enum(PLANES, { error: `plane must be one of ${PLANES.join(", ")}` }),
  type: z.string().min(1).max(LIMITS.eventType.max),
  occurred_at: isoTimeField("occurred_at", { plausible: true }),
  environment_id: labelField("environment_id", LIMITS.environmentId).optional(),
  attempt: z.number().int().min(1).max(ATTEMPT_MAX).optional(),
  actor: labelField("actor", LIMITS.eventActor).optional(),
  attrs: z.record(z.string(), z.unknown()).optional(),
});

/**
 * `side_effect.intent` / `side_effect.receipt` events must name the effect and its idempotency key, under the same
 * rules as the intent and receipt routes (a name or key those refuse could never be reconciled).
 */
export const sideEffectEventAttrs = z.looseObject({
  name: z.string({ error: "name of the side effect is required" }).regex(SIDE_EFFECT_NAME, SIDE_EFFECT_NAME_RULE),
  idempotency_key: z.string({ error: "idempotency_key is required" }).regex(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_RULE),
  payload_digest: plainName("payload_digest", LIMITS.digest).optional(),
  action: identifierName("action", LIMITS.actionName).optional(),
  tool: identifierName("tool", LIMITS.toolName).optional(),
  mutation: z.boolean({ error: "mutation must be true or false" }).optional(),
  external_operation_id: z
    .string()
    .max(LIMITS.externalOperationId.max)
    .check(plainTextCheck("external_operation_id"))
    .optional(),
  result_digest: plainName("result_digest", LIMITS.digest).optional(),
  completed_at: isoTimeField("completed_at").optional(),
  /** `side_effect.intent`: the earlier effect of the task this write deliberately repeats (decision 0029). */
  repeats: z.string().regex(SIDE_EFFECT_NAME, `repeats: ${SIDE_EFFECT_NAME_RULE}`).optional(),
});

/** A receipt event names the operation the external system gave the write: no receipt is made up. */
export const sideEffectReceiptEventAttrs = sideEffectEventAttrs.extend({
  outcome: z.literal("applied", { error: 'outcome is "applied" (the default) or "not_applied"' }).optional(),
  external_operation_id: z
    .string({ error: "external_operation_id is required: the id the external system gave the write" })
    .max(LIMITS.externalOperationId.max)
    .check(plainTextCheck("external_operation_id"))
    .refine(
      (v) => v.trim().length > 0,
      "external_operation_id is required (not blank): the id the external system gave the write",
    ),
  completed_at: isoTimeField("completed_at", { plausible: true }).optional(),
});

/**
 * A receipt event saying nothing of the write was applied (`outcome: "not_applied"`) names the tool's message, not an
 * operation (decision 0029). The message is kept cleaned (lib/domain/side-effects/receipts.ts `toolErrorText`).
 */
export const sideEffectNotAppliedEventAttrs = sideEffectEventAttrs.extend({
  outcome: z.literal("not_applied"),
  external_operation_id: z
    .undefined({
      error: "a not_applied receipt names no operation: nothing was applied; leave external_operation_id out",
    })
    .optional(),
  error: z
    .string({ error: "error is required: the tool's message saying why nothing was applied" })
    .max(65_536, "error is at most 65536 characters")
    .refine((v) => v.trim().length > 0, "error is required: the tool's message saying why nothing was applied"),
});

function sideEffectAttrsFor(type: "side_effect.intent" | "side_effect.receipt", attrs: Record<string, unknown>) {
  if (type === "side_effect.intent") return sideEffectEventAttrs;
  return attrs.outcome === "not_applied" ? sideEffectNotAppliedEventAttrs : sideEffectReceiptEventAttrs;
}

/**
 * A `task.created` event may name the principal the task acts for (used until its first checkpoint) and the workflow the
 * run belongs to (kept on the task: the task list's Workflow column and filter, decision 0049; the same limit as a
 * custody map's workflow, whose maps it links to).
 */
export const taskCreatedEventAttrs = z.looseObject({
  principal: identifierName("principal", LIMITS.principal).optional(),
  workflow: plainName("workflow", LIMITS.workflow).optional(),
});

/** Event types that must name their attempt (the catalogue's `attemptRequired`). */
const NAMES_ATTEMPT: ReadonlySet<string> = new Set(ATTEMPT_REQUIRED_TYPES);

/** A broken rule of one event: the field path (`attrs.call_id`) and the message, which starts with it. */
export type EventViolation = { path: string; message: string };

/** Extra rules per type, beyond the envelope: the first rule broken, or null. */
function typeRuleViolation(
  type: string,
  attrs: Record<string, unknown> | undefined,
  attempt: unknown,
): EventViolation | null {
  if (NAMES_ATTEMPT.has(type) && attempt === undefined) {
    return {
      path: "attempt",
      message: `attempt: a ${type} event must name the sandbox attempt (1, 2, …) it comes from`,
    };
  }
  const schema =
    type === "side_effect.intent" || type === "side_effect.receipt"
      ? sideEffectAttrsFor(type, attrs ?? {})
      : type === "task.created"
        ? taskCreatedEventAttrs
        : null;
  if (!schema) return null;
  const parsed = schema.safeParse(attrs ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = ["attrs", ...issue.path.map(String)].join(".");
    return { path, message: `${path}: ${issue.message}` };
  }
  return type === "side_effect.intent" ? payloadDigestViolation(attrs ?? {}) : null;
}

/**
 * A reported intent that carries its `payload` must carry that payload's digest, as the intent route requires
 * (lib/domain/crypto/canonical.ts `toolCallDigest` over `{tool, arguments: payload}`, `tool` defaulting to the effect's
 * name): the violation naming both digests, or null.
 */
function payloadDigestViolation(attrs: Record<string, unknown>): EventViolation | null {
  if (attrs.payload === undefined || typeof attrs.payload_digest !== "string") return null;
  const tool = typeof attrs.tool === "string" ? attrs.tool : String(attrs.name);
  let computed: string;
  try {
    computed = toolCallDigest(tool, attrs.payload);
  } catch {
    return { path: "attrs.payload", message: "attrs.payload: has no canonical JSON form" };
  }
  return normalDigest(attrs.payload_digest) === computed
    ? null
    : {
        path: "attrs.payload_digest",
        message: `attrs.payload_digest: ${attrs.payload_digest} is not the digest of attrs.payload (${computed}: sha256 of the RFC 8785 JSON of {"tool", "arguments"}) — payload_digest_mismatch`,
      };
}

const TOOL_CALL_TYPES: ReadonlySet<string> = new Set(["tool.called", "tool.completed", "tool.failed"]);
const SNAPSHOT_TYPES: ReadonlySet<string> = new Set(["snapshot.saved", "snapshot.restored"]);
const DIGEST_TYPES: ReadonlySet<string> = new Set([...SNAPSHOT_TYPES, "tool.definition_changed"]);

/**
 * Attributes the server indexes, keys or pairs by, the boundary limit each is held to, and the event types it is
 * checked on (null: every type). A value may be absent or null; otherwise it is a name ({@link nameProblem}):
 * - `host` and `credential_ref` are indexed on every event (`events_tenant_host_idx`,
 *   `events_tenant_credential_ref_idx`: task search, egress and vault custody);
 * - a tool call's `call_id` keys the side effect it may become (`side_effects_tool_call_idx`), pairs it with its
 *   outcome, and names it together with its `tool`;
 * - `snapshot_id` and the digests are what the gate compares a restore or a tool definition with.
 * Credentials are refused in all of them: they are keys, so a redacted copy would merge distinct values.
 */
export const ATTR_RULES: ReadonlyArray<{
  field: string;
  limit: BoundaryLimit;
  types: ReadonlySet<string> | null;
  /** An action, tool or principal name: the restricted alphabet of decision 0033 too. */
  identifier?: true;
}> = [
  { field: "host", limit: LIMITS.host, types: null },
  { field: "credential_ref", limit: LIMITS.credentialRef, types: null },
  { field: "call_id", limit: LIMITS.callId, types: TOOL_CALL_TYPES },
  { field: "tool", limit: LIMITS.toolName, types: TOOL_CALL_TYPES, identifier: true },
  { field: "snapshot_id", limit: LIMITS.snapshotId, types: SNAPSHOT_TYPES },
  { field: "digest", limit: LIMITS.digest, types: DIGEST_TYPES },
  { field: "definition_digest", limit: LIMITS.digest, types: DIGEST_TYPES },
];

/** The first attribute of {@link ATTR_RULES} an event breaks, or null. */
export function attrsRuleViolation(type: string, attrs: Record<string, unknown> | undefined): EventViolation | null {
  if (!attrs) return null;
  for (const rule of ATTR_RULES) {
    if (rule.types && !rule.types.has(type)) continue;
    const v = Object.prototype.hasOwnProperty.call(attrs, rule.field) ? attrs[rule.field] : undefined;
    if (v === undefined || v === null) continue;
    const problem = rule.identifier ? identifierProblem(v, rule.limit) : nameProblem(v, rule.limit);
    if (problem) {
      const path = `attrs.${rule.field}`;
      return { path, message: `${path} ${problem}` };
    }
  }
  return null;
}

export type ValidEvent = z.infer<typeof eventInputSchema>;

/** The plane of each type a runtime may report (lib/domain/events/catalogue.ts). */
const REPORTABLE_PLANE: ReadonlyMap<string, Plane> = new Map(
  PLANES.flatMap((plane) => RUNTIME_EVENT_TYPES[plane].map((type) => [type, plane] as const)),
);

/** True when a runtime may report `type` under `plane` (the event catalogue), or a sender extension (`x.` prefix). */
export function isKnownType(plane: Plane, type: string): boolean {
  if (/^x\.[a-z0-9][a-z0-9_.-]*$/i.test(type)) return true;
  return REPORTABLE_PLANE.get(type) === plane;
}

/** Why an event was refused: a code, a message that names the field first, and the field's path. */
export type EventError = { code: string; message: string; path?: string };

export type EventValidation = { ok: true; event: ValidEvent } | { ok: false; id: string; error: EventError };

const PLANE_SET: ReadonlySet<string> = new Set(PLANES);
const EVENT_KEYS: ReadonlySet<string> = new Set([
  "id",
  "task_id",
  "plane",
  "type",
  "occurred_at",
  "environment_id",
  "attempt",
  "actor",
  "attrs",
]);
/** The same ISO 8601 pattern `z.iso.datetime({ offset: true })` applies (a unit test keeps them equal). */
export const OCCURRED_AT_PATTERN: RegExp = ISO_TIME_PATTERN;
const isText = (v: unknown, max: number): v is string => typeof v === "string" && v.length >= 1 && v.length <= max;
/** Printable ASCII without surrounding spaces, within `max`: a name the hot path takes without the full rule. */
const isPlainText = (v: unknown, max: number): v is string => isText(v, max) && isPlainAscii(v);
/** Types with rules of their own ({@link typeRuleViolation}). */
const TYPE_RULES: ReadonlySet<string> = new Set([...ATTEMPT_REQUIRED_TYPES, "task.created"]);

/**
 * The hot path of {@link validateEvent}: plain checks that accept only events the zod schema accepts too, so a
 * well-formed batch never pays for zod's error machinery. Returns null when anything is off; the caller then
 * runs the zod schema, which produces the precise message. Does not check the attrs size (the caller measures
 * the JSON it stores).
 */
export function fastValidEvent(raw: unknown): ValidEvent | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const e = raw as Record<string, unknown>;
  for (const k in e) if (!EVENT_KEYS.has(k)) return null;
  if (!isPlainText(e.id, LIMITS.eventId.max) || typeof e.task_id !== "string" || !TASK_ID_PATTERN.test(e.task_id))
    return null;
  if (typeof e.plane !== "string" || !PLANE_SET.has(e.plane) || !isText(e.type, LIMITS.eventType.max)) return null;
  if (!isKnownType(e.plane as Plane, e.type)) return null;
  if (typeof e.occurred_at !== "string" || !OCCURRED_AT_PATTERN.test(e.occurred_at) || !plausibleTime(e.occurred_at))
    return null;
  if (!withinMicroseconds(e.occurred_at)) return null;
  if (e.environment_id !== undefined && !isPlainText(e.environment_id, LIMITS.environmentId.max)) return null;
  if (e.actor !== undefined && !isPlainText(e.actor, LIMITS.eventActor.max)) return null;
  if (
    e.attempt !== undefined &&
    !(Number.isInteger(e.attempt) && (e.attempt as number) >= 1 && (e.attempt as number) <= ATTEMPT_MAX)
  )
    return null;
  if (e.attrs !== undefined && (!e.attrs || typeof e.attrs !== "object" || Array.isArray(e.attrs))) return null;
  if (attrsRuleViolation(e.type, e.attrs as Record<string, unknown> | undefined) !== null) return null;
  if (
    TYPE_RULES.has(e.type) &&
    typeRuleViolation(e.type, e.attrs as Record<string, unknown> | undefined, e.attempt) !== null
  )
    return null;
  return e as ValidEvent;
}

/**
 * Validates one raw event: shape, known type for its plane, attrs size, the attributes of {@link ATTR_RULES}, the
 * rules of its type.
 * @returns the parsed event, or a rejection with a code (`invalid_event`, `unknown_type`, `attrs_too_large`), the
 *   path of the field it names, and the event's id — empty when the id itself breaks the id rule (it is not echoed).
 */
export function validateEvent(raw: unknown): EventValidation {
  const rawId = raw && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined;
  const id = typeof rawId === "string" && nameProblem(rawId, LIMITS.eventId) === null ? rawId : "";
  const parsed = eventInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "event";
    const message = issue.message.startsWith(`${path} `) ? issue.message : `${path}: ${issue.message}`;
    return { ok: false, id, error: { code: "invalid_event", message, path } };
  }
  const event = parsed.data;
  if (!isKnownType(event.plane, event.type)) {
    return {
      ok: false,
      id,
      error: {
        code: "unknown_type",
        message: `type "${event.type}" is not a ${event.plane} event; known: ${RUNTIME_EVENT_TYPES[event.plane].join(", ")}, or an "x."-prefixed extension`,
        path: "type",
      },
    };
  }
  const tooLarge = attrsTooLarge(event);
  if (tooLarge) return { ok: false, id, error: tooLarge };
  const violation =
    attrsRuleViolation(event.type, event.attrs) ?? typeRuleViolation(event.type, event.attrs, event.attempt);
  if (violation) return { ok: false, id, error: { code: "invalid_event", ...violation } };
  return { ok: true, event };
}

/** `attrs_too_large` when the serialized attrs exceed {@link MAX_ATTRS_BYTES}: checked before any scan of them. */
export function attrsTooLarge(event: Pick<ValidEvent, "attrs">): EventError | null {
  if (!event.attrs) return null;
  const json = JSON.stringify(event.attrs);
  if (json.length <= MAX_ATTRS_BYTES / 3 || Buffer.byteLength(json) <= MAX_ATTRS_BYTES) return null;
  return { code: "attrs_too_large", message: `attrs is larger than ${MAX_ATTRS_BYTES} bytes`, path: "attrs" };
}

/**
 * An event whose id, task id or type looks like a credential is refused rather than redacted: these are keys
 * (deduplication, URLs, filters), so a redacted copy would merge distinct events or tasks.
 */
export function secretInIdentity(event: Pick<ValidEvent, "id" | "task_id" | "type">): EventError | null {
  for (const field of ["id", "task_id", "type"] as const) {
    const found = credentialKindsInName(event[field]);
    if (found.length) {
      return {
        code: "invalid_event",
        message: `${field} looks like a credential value (${found[0]}); ids and types are shown and kept for good: send a reference, never a secret`,
        path: field,
      };
    }
  }
  return null;
}
