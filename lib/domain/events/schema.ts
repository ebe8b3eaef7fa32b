/**
 * Validation of one runtime event (DESIGN.md "Event", "Event types per plane").
 */
import { z } from "zod";
import { EVENT_TYPES, PLANES, type Plane } from "@/db/schema/enums";

/** Task ids travel in URL paths: letters, digits and `. _ : -`, 1–200 characters. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
export const taskIdSchema = z
  .string()
  .regex(TASK_ID_PATTERN, "task ids are 1–200 characters of letters, digits, '.', '_', ':' or '-'");

/** Largest serialized `attrs` object accepted per event, in bytes. */
export const MAX_ATTRS_BYTES = 64 * 1024;

export const eventInputSchema = z.strictObject({
  id: z.string().min(1, "id is required").max(200),
  task_id: taskIdSchema,
  plane: z.enum(PLANES, { error: `plane must be one of ${PLANES.join(", ")}` }),
  type: z.string().min(1).max(100),
  occurred_at: z.iso.datetime({ offset: true, message: "occurred_at must be an ISO 8601 time with a zone" }),
  environment_id: z.string().min(1).max(200).optional(),
  attempt: z.number().int().min(1).max(1_000_000).optional(),
  actor: z.string().min(1).max(200).optional(),
  attrs: z.record(z.string(), z.unknown()).optional(),
});

/** `side_effect.intent` / `side_effect.receipt` events must name the effect and its idempotency key. */
export const sideEffectEventAttrs = z.looseObject({
  name: z.string().min(1, "name of the side effect is required").max(200),
  idempotency_key: z.string().min(1, "idempotency_key is required").max(200),
  payload_digest: z.string().max(200).optional(),
  action: z.string().max(200).optional(),
  tool: z.string().max(200).optional(),
  external_operation_id: z.string().max(500).optional(),
  result_digest: z.string().max(200).optional(),
  completed_at: z.iso.datetime({ offset: true }).optional(),
});

export type ValidEvent = z.infer<typeof eventInputSchema>;

/** True when `type` is known for `plane`, or a sender extension (`x.` prefix). */
export function isKnownType(plane: Plane, type: string): boolean {
  if (/^x\.[a-z0-9][a-z0-9_.-]*$/i.test(type)) return true;
  return EVENT_TYPES[plane].includes(type);
}

export type EventValidation =
  | { ok: true; event: ValidEvent }
  | { ok: false; id: string; error: { code: string; message: string } };

/**
 * Validates one raw event: shape, known type for its plane, attrs size.
 * @returns the parsed event, or a rejection with a code (`invalid_event`, `unknown_type`, `attrs_too_large`).
 */
export function validateEvent(raw: unknown): EventValidation {
  const id =
    raw && typeof raw === "object" && typeof (raw as { id?: unknown }).id === "string"
      ? (raw as { id: string }).id
      : "";
  const parsed = eventInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "event";
    return { ok: false, id, error: { code: "invalid_event", message: `${path}: ${issue.message}` } };
  }
  const event = parsed.data;
  if (!isKnownType(event.plane, event.type)) {
    return {
      ok: false,
      id,
      error: {
        code: "unknown_type",
        message: `type "${event.type}" is not a ${event.plane} event; known: ${EVENT_TYPES[event.plane].join(", ")}, or an "x."-prefixed extension`,
      },
    };
  }
  if (event.type === "side_effect.intent" || event.type === "side_effect.receipt") {
    const attrs = sideEffectEventAttrs.safeParse(event.attrs ?? {});
    if (!attrs.success) {
      const issue = attrs.error.issues[0]!;
      return {
        ok: false,
        id,
        error: { code: "invalid_event", message: `attrs.${issue.path.map(String).join(".")}: ${issue.message}` },
      };
    }
  }
  if (event.attrs && Buffer.byteLength(JSON.stringify(event.attrs)) > MAX_ATTRS_BYTES) {
    return {
      ok: false,
      id,
      error: { code: "attrs_too_large", message: `attrs is larger than ${MAX_ATTRS_BYTES} bytes` },
    };
  }
  return { ok: true, event };
}
