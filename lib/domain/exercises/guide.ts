/**
 * The words of an interruption exercise — its six steps, step statuses and outcomes — and what each outcome does
 * to the layers it covered. Pure data with no imports beyond the vocabulary, shared by the verbs and the browser.
 */
import {
  EXERCISE_OUTCOMES,
  EXERCISE_STEPS,
  MAP_LAYERS,
  type ExerciseOutcome,
  type ExerciseStep,
  type MapLayer,
  type StepStatus,
  type Verification,
} from "@/db/schema/map-vocabulary";
import type { ExerciseStepRow } from "@/lib/contract/maps";

export { EXERCISE_OUTCOMES };

export type StepGuide = { label: string; hint: string; layers: MapLayer[] };

/** What each step asks for, and the layers it mostly exercises (the default coverage is all of them). */
export const STEP_GUIDE: Record<ExerciseStep, StepGuide> = {
  define_expected_result: {
    label: "Define the expected result",
    hint: "Before anything runs, write down what a correct finish of this disposable run looks like: the files, each external write made exactly once, and the rules it must keep.",
    layers: [],
  },
  establish_checkpoint: {
    label: "Establish a checkpoint",
    hint: "Record what the product holds before the interruption: the checkpoint version, artifact digests and receipts so far. Say what cannot be seen instead of guessing it.",
    layers: ["session_state", "artifacts"],
  },
  interrupt: {
    label: "Interrupt execution",
    hint: "Take the disposable sandbox away at the chosen point, the way an outage would. Note whether a tool had already acted when it went.",
    layers: ["compute"],
  },
  resume_and_reconcile: {
    label: "Resume and reconcile",
    hint: "Ask the resume gate, settle every write whose outcome is unknown against the other system, then continue. Check that nothing was written twice and that the run's constraints still applied.",
    layers: ["recovery", "tools", "compaction"],
  },
  retrieve_and_export: {
    label: "Retrieve the result and export",
    hint: "Compare the files you got back with the expected result, and export the run. Note what another system could use and what only works here.",
    layers: ["artifacts", "export"],
  },
  test_revocation: {
    label: "Test revocation",
    hint: "Revoke the run's test access, wait out the stated delay, then try a protected action on every path: each must be refused. Keep secret values out of the evidence.",
    layers: ["credentials"],
  },
};

/** Step statuses in words (with an icon; never colour alone). */
export const STEP_STATUS_WORD: Record<StepStatus, { word: string; icon: string }> = {
  pending: { word: "not done", icon: "○" },
  passed: { word: "as expected", icon: "✔" },
  failed: { word: "not as expected", icon: "✕" },
  blocked: { word: "could not be done", icon: "⊘" },
};

/** Outcomes in words, and the verification each sets on the covered layers. */
export const OUTCOME_GUIDE: Record<
  ExerciseOutcome,
  { word: string; icon: string; meaning: string; verification: Exclude<Verification, "unknown"> }
> = {
  safe_resume: {
    word: "Safe resume",
    icon: "▶",
    meaning: "The run continued from its checkpoint and no effect was repeated.",
    verification: "verified",
  },
  safe_replay: {
    word: "Safe replay",
    icon: "↺",
    meaning: "Reads repeated safely; every write replayed its stored receipt instead of running again.",
    verification: "verified",
  },
  visible_stop: {
    word: "Visible stop",
    icon: "■",
    meaning: "The run stopped and said why, instead of guessing; a person could settle it.",
    verification: "verified",
  },
  unsafe: {
    word: "Unsafe",
    icon: "⚠",
    meaning: "The run could repeat or lose an effect, or act without valid authority, without anyone being told.",
    verification: "failed",
  },
};

/** Six pending steps with no evidence. */
export function emptySteps(): ExerciseStepRow[] {
  return EXERCISE_STEPS.map((step) => ({
    step,
    status: "pending",
    task_id: null,
    artifact_digest: null,
    event_id: null,
    note: "",
  }));
}

/** Every layer some step exercises, in the map's order (all eight today). */
export function defaultLayers(): MapLayer[] {
  const touched = new Set(Object.values(STEP_GUIDE).flatMap((g) => g.layers));
  return MAP_LAYERS.filter((l) => touched.has(l));
}

/** The steps that exercise `layer`, in order. */
export function stepsOf(layer: MapLayer): ExerciseStep[] {
  return EXERCISE_STEPS.filter((s) => STEP_GUIDE[s].layers.includes(layer));
}

/**
 * Why a step's evidence does not count, or null when it does. Evidence is what the step itself links: a task, an
 * artifact digest or an event — a note alone describes, it proves nothing. "Test revocation" counts only with the
 * revocation check it relied on: a linked `credential.revocation_checked` event whose answer was `revoked`
 * (`revocationAnswer` reads the answer of a linked event; undefined when the event is not such a check).
 */
export function stepEvidenceGap(
  s: ExerciseStepRow,
  revocationAnswer: (eventId: string) => string | undefined,
): string | null {
  if (s.step === "test_revocation") {
    if (!s.event_id) return "it links no revocation check (the vault lane's evidence)";
    const answer = revocationAnswer(s.event_id);
    if (answer === undefined) return "the event it links is not a revocation check of its task";
    if (answer !== "revoked") return `the revocation check it links answered ${answer.replace("_", " ")}, not revoked`;
    return null;
  }
  return s.task_id || s.artifact_digest || s.event_id ? null : "it links no task, artifact digest or event";
}

/** What completing an exercise does to one covered layer, and why. `verification: null` leaves the row as it is. */
export type LayerResult = {
  layer: MapLayer;
  verification: Exclude<Verification, "unknown"> | null;
  /** The steps that exercise the layer. */
  steps: ExerciseStep[];
  why: string;
};

/**
 * The one rule for what an exercise proves about each covered layer (docs/concepts.md#interruption-exercises): a layer
 * turns `verified` only when every step that exercises it passed ("as expected") with evidence of its own
 * ({@link stepEvidenceGap}); `failed` when one of them did not go as expected, or when they all passed with evidence
 * but the outcome is `unsafe`; otherwise (a step could not be done, is not done, or carries no evidence) the layer is
 * left as it is — an exercise never verifies what it did not test. Pure; the complete verb and the page share it.
 */
export function layerResults(
  e: { layers: readonly MapLayer[]; steps: readonly ExerciseStepRow[]; outcome: ExerciseOutcome | null },
  revocationAnswer: (eventId: string) => string | undefined = () => undefined,
): LayerResult[] {
  return e.layers.map((layer) => {
    const steps = stepsOf(layer);
    const rows = steps.map((name) => e.steps.find((s) => s.step === name)).filter((s) => s !== undefined);
    const label = (s: ExerciseStepRow) => `“${STEP_GUIDE[s.step].label}”`;
    if (!rows.length) return { layer, verification: null, steps, why: "no step of an exercise tests this layer" };
    const failed = rows.find((s) => s.status === "failed");
    if (failed) return { layer, verification: "failed", steps, why: `${label(failed)} was not as expected` };
    const undone = rows.find((s) => s.status !== "passed");
    if (undone)
      return {
        layer,
        verification: null,
        steps,
        why: `${label(undone)} ${undone.status === "blocked" ? "could not be done" : "is not done"}: not tested, left as it was`,
      };
    for (const s of rows) {
      const gap = stepEvidenceGap(s, revocationAnswer);
      if (gap) return { layer, verification: null, steps, why: `${label(s)} passed, but ${gap}: left as it was` };
    }
    const names = rows.map(label).join(" and ");
    if (e.outcome === "unsafe")
      return { layer, verification: "failed", steps, why: `${names} passed with evidence, but the outcome is unsafe` };
    return { layer, verification: "verified", steps, why: `${names} passed with evidence` };
  });
}
