/**
 * JSON shapes of custody maps and interruption exercises (docs/concepts.md#custody-maps,
 * #interruption-exercises). Types only: shared by the route handlers, the domain verbs and the browser.
 */
import type {
  Custodian,
  Decision,
  EvidenceKind,
  EvidenceItemKind,
  ExerciseOutcome,
  ExerciseStatus,
  ExerciseStep,
  MapLayer,
  MapStatus,
  StepStatus,
  Verification,
  VerificationEvidence,
} from "@/db/schema/map-vocabulary";
import type { GateVerdict } from "./api";

export type {
  Custodian,
  Decision,
  EvidenceKind,
  EvidenceItemKind,
  ExerciseOutcome,
  ExerciseStatus,
  ExerciseStep,
  MapLayer,
  MapStatus,
  StepStatus,
  Verification,
  VerificationEvidence,
};

/** One layer row, exactly as the API and the JSON export write it. */
export type LayerRow = {
  layer: MapLayer;
  custodians: Custodian[];
  handoff: string;
  evidence: string;
  recovery_path: string;
  acceptance_question: string;
  verification: Verification;
  verification_evidence: VerificationEvidence | null;
  decision: Decision | null;
  decision_note: string;
  /** Optimistic concurrency: send it back with a change; a stale one answers 409 with both versions. */
  revision: number;
};

/** The sign-off of a published version (decision 0046): a named reviewer who was not its last editor. */
export type MapSignoff = { version: number; signed_off_by: string; signed_off_at: string; note: string };

/**
 * A map, exactly as the JSON export writes it: eight rows in the fixed order; `signoff` only when the version
 * exported is a published one that was signed off.
 */
export type CustodyMapJson = {
  id: string;
  workflow: string;
  title: string;
  version: number;
  status: MapStatus;
  signoff?: MapSignoff;
  layers: LayerRow[];
};

/** One evidence item of a layer: an exercise or task id, a bundle's sha256, or an http(s) document link. */
export type EvidenceItem = {
  id: string;
  layer: MapLayer;
  kind: EvidenceItemKind;
  ref: string;
  note: string;
  added_by: string;
  added_at: string;
};

/** One comment on a layer. */
export type LayerComment = { id: string; layer: MapLayer; author: string; body: string; created_at: string };

/** The work around a layer's row: who carries it, its evidence items and its comments (not part of a version). */
export type LayerWork = { assignee: string | null; evidence_items: EvidenceItem[]; comments: LayerComment[] };

/** Layers with a named custodian, verified, failed and decided, out of eight. */
export type MapProgress = {
  total: number;
  custodians_named: number;
  verified: number;
  failed: number;
  decided: number;
};

export type Recommendation = "not_ready" | "hold" | "adopt_with_constraints" | "adopt";

/** The adoption summary at the top of a map. */
export type AdoptionSummary = {
  accepted: number;
  constrained: number;
  evidence_requested: number;
  undecided: number;
  recommendation: Recommendation;
  /** One sentence: the overall recommendation in plain words. */
  headline: string;
  /** The facts behind it (which layers, which constraints, what is missing), one sentence each. */
  reasons: string[];
  /**
   * Whether the export was verified (decision 0038): `verified` when the Export layer links a bundle that passed the
   * verifier, `failed` when it links one that did not, `unverified` when it links one the server built but did not
   * verify (a workspace bundle), `none` when it links no bundle.
   */
  export_bundle: "verified" | "failed" | "unverified" | "none";
  /** One sentence saying so. */
  export_line: string;
};

export type MapVersionInfo = {
  version: number;
  published_at: string;
  published_by: string;
  /** Who made the last change to the rows this version froze (may not sign it off). */
  last_edited_by: string | null;
  signed_off_by: string | null;
  signed_off_at: string | null;
  signoff_note: string;
};

/** `GET /api/v1/maps/{id}`: the map plus what the page shows around it. */
export type MapView = CustodyMapJson & {
  summary: AdoptionSummary;
  progress: MapProgress;
  /** Published versions, newest first. */
  versions: MapVersionInfo[];
  created_by: string;
  updated_at: string;
  /** Who made the last change to the rows. */
  last_edited_by: string | null;
  archived_at: string | null;
  archived_by: string | null;
  /** Per layer: assignee, evidence items, comments. */
  work: Record<MapLayer, LayerWork>;
};

export type MapListItem = {
  id: string;
  workflow: string;
  title: string;
  version: number;
  status: MapStatus;
  updated_at: string;
  progress: MapProgress;
  recommendation: Recommendation;
  exercises: number;
  archived_at: string | null;
};

/** The 409 of a stale row write: both versions, and who wrote the current one when. */
export type LayerConflictDetails = {
  layer: MapLayer;
  current: LayerRow;
  yours: Omit<LayerRow, "revision"> & { revision: number };
  current_updated_by: string;
  current_updated_at: string;
};

/** One step of an exercise. */
export type ExerciseStepRow = {
  step: ExerciseStep;
  status: StepStatus;
  /** A task of this tenant (picked by search). */
  task_id: string | null;
  /** sha256 of an artifact, lower-case hex. */
  artifact_digest: string | null;
  /**
   * One event of the linked task kept as the step's evidence (its id, as on the timeline: `/tasks/{task_id}?event=…`),
   * e.g. the `credential.revocation_checked` event of a "Test revocation" check. Needs `task_id`.
   */
  event_id: string | null;
  /**
   * The "retrieve the result and export" step: sha256 of the linked task's bundle the server built, and whether the
   * offline verifier passed it (decision 0038). Set only by `POST …/exercises/{id}/export`; absent until then.
   */
  bundle_digest?: string | null;
  bundle_verified?: boolean | null;
  note: string;
};

export type ExerciseJson = {
  id: string;
  map_id: string;
  interruption_point: string;
  /** The layers whose verification the exercise sets when completed. */
  layers: MapLayer[];
  steps: ExerciseStepRow[];
  status: ExerciseStatus;
  outcome: ExerciseOutcome | null;
  finding: string;
  revision: number;
  created_by: string;
  created_at: string;
  updated_by: string;
  updated_at: string;
  completed_at: string | null;
  completed_map_version: number | null;
};

/** What the product knows about a task linked to an exercise: offered as suggested evidence. */
export type LinkedTaskFacts = {
  task_id: string;
  phase: string;
  current_attempt: number;
  /** Newest first; `attempt` is the sandbox attempt that wrote it (null for records from before fencing). */
  checkpoints: Array<{
    version: number;
    phase: string;
    digest: string;
    signature_valid: boolean;
    created_at: string;
    attempt: number | null;
  }>;
  unknown_side_effects: Array<{ name: string; status_reason: string | null }>;
  side_effects: Array<{ name: string; status: string }>;
  artifacts: Array<{ ref: string; sha256: string }>;
  gate: Pick<GateVerdict, "verdict" | "reasons">;
  /** The task's "Test revocation" checks (`credential.revocation_checked` events), newest first. */
  revocation_checks: RevocationCheckFact[];
};

/** One "Test revocation" check of a task's credential, as its vault-lane event records it. */
export type RevocationCheckFact = {
  /** The check's event on the task's timeline. */
  event_id: string;
  credential_ref: string;
  /** `revoked` and `not_revoked` are answers; the others mean nothing was proven. */
  outcome: "revoked" | "not_revoked" | "ambiguous" | "timeout" | "unreachable" | "refused";
  revoked_at: string | null;
  checked_at: string;
  checked_by: string | null;
  endpoint_host: string | null;
  policy_version: number | null;
};

/** `GET /api/v1/maps/{id}/exercises/{exerciseId}`. */
export type ExerciseView = ExerciseJson & {
  map: { id: string; workflow: string; title: string; version: number; status: MapStatus };
  /** Facts about each task linked from a step, in the order first linked. A task no longer found is left out. */
  linked_tasks: LinkedTaskFacts[];
};

export type ExerciseListItem = Pick<
  ExerciseJson,
  | "id"
  | "interruption_point"
  | "layers"
  | "status"
  | "outcome"
  | "finding"
  | "created_at"
  | "completed_at"
  | "updated_at"
>;
