/**
 * The closed vocabularies of custody maps and interruption exercises, as plain `as const` arrays: the database
 * enums (db/schema/maps.ts), the zod schemas and the browser all use these. No Drizzle import here, so the
 * browser bundle can include it.
 */

/** The eight layers of a custody map, in their fixed order (docs/concepts.md#custody-maps). */
export const MAP_LAYERS = [
  "session_state",
  "compaction",
  "tools",
  "compute",
  "credentials",
  "artifacts",
  "recovery",
  "export",
] as const;
export type MapLayer = (typeof MAP_LAYERS)[number];

/** `draft` while it can change; `published` once a version is frozen (the next edit starts a new draft). */
export const MAP_STATUSES = ["draft", "published"] as const;
export type MapStatus = (typeof MAP_STATUSES)[number];

/** Verification of one layer: `unknown` until evidence is linked; `verified` / `failed` need that link. */
export const VERIFICATIONS = ["unknown", "verified", "failed"] as const;
export type Verification = (typeof VERIFICATIONS)[number];

/** The adoption decision per layer (null = not decided yet). */
export const DECISIONS = ["accept", "constrain", "request_evidence"] as const;
export type Decision = (typeof DECISIONS)[number];

/** What kind of evidence a layer's verification links to. */
export const EVIDENCE_KINDS = ["exercise", "task", "artifact", "document", "bundle"] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** The kinds of a layer's evidence items (decision 0046): an exercise, a task, a bundle, a document link. */
export const EVIDENCE_ITEM_KINDS = ["exercise", "task", "bundle", "document"] as const;
export type EvidenceItemKind = (typeof EVIDENCE_ITEM_KINDS)[number];

/** The outcome of an interruption exercise (docs/concepts.md#interruption-exercises). */
export const EXERCISE_OUTCOMES = ["safe_resume", "safe_replay", "visible_stop", "unsafe"] as const;
export type ExerciseOutcome = (typeof EXERCISE_OUTCOMES)[number];

export const EXERCISE_STATUSES = ["in_progress", "completed"] as const;
export type ExerciseStatus = (typeof EXERCISE_STATUSES)[number];

/** The six steps of an interruption exercise, in order (docs/concepts.md#interruption-exercises). */
export const EXERCISE_STEPS = [
  "define_expected_result",
  "establish_checkpoint",
  "interrupt",
  "resume_and_reconcile",
  "retrieve_and_export",
  "test_revocation",
] as const;
export type ExerciseStep = (typeof EXERCISE_STEPS)[number];

/** Where a step stands: not done yet, done as expected, done and not as expected, or could not be done. */
export const STEP_STATUSES = ["pending", "passed", "failed", "blocked"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** A named party holding a layer: a team or service, and its organization. */
export type Custodian = { name: string; organization: string };

/** The layers whose verification may link an export bundle (decision 0038). */
export const BUNDLE_LAYERS = ["artifacts", "export"] as const satisfies readonly MapLayer[];

/**
 * The evidence a verification links to: an exercise id, a task id, an artifact sha256, a document reference, or the
 * sha256 of an export bundle this server produced — then `bundle_verified` is the verifier's result, filled in by the
 * server from its record of the bundle, never by the person linking it.
 */
export type VerificationEvidence = { kind: EvidenceKind; ref: string; note?: string; bundle_verified?: boolean | null };

/** One step of an exercise as stored. */
export type ExerciseStepJson = {
  step: ExerciseStep;
  status: StepStatus;
  task_id: string | null;
  artifact_digest: string | null;
  /** An event of the linked task kept as evidence (absent in steps stored before it existed). */
  event_id?: string | null;
  /** The "retrieve the result and export" step: the linked task's bundle the server built, and its verification. */
  bundle_digest?: string | null;
  bundle_verified?: boolean | null;
  note: string;
};
