/**
 * Interruption exercises (docs/concepts.md#interruption-exercises): a recorded test of one custody map at one
 * interruption point, in six fixed steps, each with a status and evidence (a task of this tenant, an artifact
 * digest, a note), and an outcome — `safe_resume`, `safe_replay`, `visible_stop` or `unsafe` — with the finding.
 * Completing one sets the verification of the layers it covered: `unsafe` marks them `failed` (and the worksheet
 * suggests constraining them), any other outcome `verified`. The wording of the steps is ours.
 */
import { z } from "zod";
import {
  EXERCISE_OUTCOMES,
  EXERCISE_STEPS,
  MAP_LAYERS,
  STEP_STATUSES,
  type ExerciseOutcome,
  type MapLayer,
} from "@/db/schema/map-vocabulary";
import type { ExerciseStepRow } from "@/lib/contract/maps";
import { defaultLayers, emptySteps, OUTCOME_GUIDE, STEP_GUIDE } from "./guide";
import { TASK_ID_PATTERN } from "../events/schema";
import { isPlaceholderName, normalizeDigest, SHA256_HEX, type RuleIssue } from "../maps/rules";
import { unsafeTextReason } from "../typed-text";

export { defaultLayers, emptySteps, EXERCISE_OUTCOMES, EXERCISE_STEPS, OUTCOME_GUIDE, STEP_GUIDE, STEP_STATUSES };

/**
 * What must hold before an exercise can be completed: an outcome, a finding, every step marked (none left
 * `pending`), at least one layer covered, and at least one step carrying evidence beyond a note (a task or an
 * artifact digest), since the exercise becomes the evidence of the layers it covers.
 */
export function completionIssues(e: {
  layers: readonly MapLayer[];
  steps: readonly ExerciseStepRow[];
  outcome: ExerciseOutcome | null;
  finding: string;
}): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (!e.outcome) issues.push({ path: ["outcome"], message: `choose the outcome: ${EXERCISE_OUTCOMES.join(", ")}` });
  const finding = e.finding.trim();
  if (!finding || isPlaceholderName(finding) || [...finding].length < 10) {
    issues.push({
      path: ["finding"],
      message:
        "write the finding (at least 10 characters): what happened at the interruption point and what it means for the layers covered",
    });
  }
  if (e.layers.length === 0)
    issues.push({
      path: ["layers"],
      message: "choose at least one layer the exercise covers; their verification is what it sets",
    });
  e.steps.forEach((s, i) => {
    if (s.status === "pending") {
      issues.push({
        path: ["steps", i, "status"],
        message: `${STEP_GUIDE[s.step].label} is not done yet: mark it as expected, not as expected, or could not be done`,
      });
    }
  });
  if (!e.steps.some((s) => s.task_id || s.artifact_digest)) {
    issues.push({
      path: ["steps"],
      message:
        "link the disposable run's task (or an artifact digest) to at least one step: the exercise becomes the evidence of the layers it covers",
    });
  }
  return issues;
}

// ------------------------------------------------------------------ zod schemas

function text(field: string, max: number, opts: { multiline?: boolean; min?: number } = {}) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `${field} is required (text)` : `${field} must be text`) })
    .trim()
    .check((ctx) => {
      const n = [...ctx.value].length;
      if (opts.min && n < opts.min)
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `${field} is required (${opts.min}–${max} characters)`,
        });
      if (n > max)
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `${field} is too long (${n} characters); at most ${max} are allowed`,
        });
      const unsafe = unsafeTextReason(ctx.value, opts);
      if (unsafe) ctx.issues.push({ code: "custom", input: ctx.value, message: `${field} ${unsafe}` });
    });
}

const layersSchema = z
  .array(z.enum(MAP_LAYERS, { error: `each layer must be one of ${MAP_LAYERS.join(", ")}` }), {
    error: "layers must be a list of layer names",
  })
  .max(MAP_LAYERS.length)
  .transform((ls) => MAP_LAYERS.filter((l) => ls.includes(l)));

const interruptionPoint = text("interruption_point", 200, { min: 1 }).refine((v) => !isPlaceholderName(v), {
  message: "interruption_point must name a phase or transition of the run, e.g. after_external_write",
});

const stepSchema = z.strictObject({
  step: z.enum(EXERCISE_STEPS, { error: `step must be one of ${EXERCISE_STEPS.join(", ")}` }),
  status: z.enum(STEP_STATUSES, { error: `status must be one of ${STEP_STATUSES.join(", ")}` }),
  task_id: z
    .string({ error: "task_id must be a task id or null" })
    .trim()
    .regex(TASK_ID_PATTERN, "task_id must be a task id: 1–200 letters, digits, '.', '_', ':' or '-'")
    .nullable(),
  artifact_digest: z
    .string({ error: "artifact_digest must be a sha256 or null" })
    .transform(normalizeDigest)
    .refine((v) => SHA256_HEX.test(v), "artifact_digest must be a sha256: 64 hex digits (optionally prefixed sha256:)")
    .nullable(),
  // An event of the step's task kept as evidence (e.g. a "Test revocation" check); optional, so clients that predate
  // it keep working (absent is null).
  event_id: z
    .string({ error: "event_id must be an event id of the step's task, or null" })
    .trim()
    .min(1, "event_id must be an event id of the step's task, or null")
    .max(500, "event_id is too long: at most 500 characters")
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  // Sent back as read; the server keeps its own (decision 0038: only the export route sets them).
  bundle_digest: z.string().nullable().optional(),
  bundle_verified: z.boolean().nullable().optional(),
  note: text("note", 2000, { multiline: true }),
});

/** `POST /api/v1/maps/{id}/exercises` body. `layers` defaults to every layer a step exercises. */
export const createExerciseSchema = z.strictObject({
  interruption_point: interruptionPoint,
  layers: layersSchema.optional(),
});

const revision = z
  .number({ error: "revision is required: the revision of the exercise your change is based on" })
  .int("revision must be a whole number")
  .min(1, "revision starts at 1");

/** `PATCH /api/v1/maps/{id}/exercises/{exerciseId}` body: any of these, with the `revision` they are based on. */
export const updateExerciseSchema = z
  .strictObject({
    interruption_point: interruptionPoint.optional(),
    layers: layersSchema.optional(),
    steps: z.array(stepSchema, { error: "steps must be the list of the six steps" }).optional(),
    outcome: z
      .enum(EXERCISE_OUTCOMES, { error: `outcome must be null or one of ${EXERCISE_OUTCOMES.join(", ")}` })
      .nullable()
      .optional(),
    finding: text("finding", 4000, { multiline: true }).optional(),
    revision,
  })
  .superRefine((b, ctx) => {
    if (!b.steps) return;
    if (b.steps.length !== EXERCISE_STEPS.length) {
      ctx.addIssue({
        code: "custom",
        path: ["steps"],
        message: `steps must hold the six steps in order (${EXERCISE_STEPS.join(", ")}), not ${b.steps.length}`,
      });
      return;
    }
    b.steps.forEach((s, i) => {
      if (s.step !== EXERCISE_STEPS[i]) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", i, "step"],
          message: `step ${i + 1} must be ${EXERCISE_STEPS[i]}, not ${s.step}`,
        });
      }
    });
  });

/** `POST /api/v1/maps/{id}/exercises/{exerciseId}/complete` body. */
export const completeExerciseSchema = z.strictObject({
  outcome: z.enum(EXERCISE_OUTCOMES, { error: `outcome is required: one of ${EXERCISE_OUTCOMES.join(", ")}` }),
  finding: text("finding", 4000, { multiline: true }),
  revision,
});
