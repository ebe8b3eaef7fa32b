/**
 * The eight layers of a custody map and the worksheet text a new map starts from (docs/concepts.md#custody-maps).
 * The wording is ours: what to identify, what evidence to keep, how to recover or export, and a question a test
 * can answer. Pure data, shared by the domain verbs, the Markdown export and the browser.
 */
import { BUNDLE_LAYERS, MAP_LAYERS, type MapLayer } from "@/db/schema/map-vocabulary";

export { BUNDLE_LAYERS, MAP_LAYERS, type MapLayer };

export type LayerGuide = {
  /** Short name for headings. */
  label: string;
  /** What the layer covers, in one line. */
  covers: string;
  /** Who to name as custodians (shown as a hint; never stored as a custodian). */
  custodiansHint: string;
  /** Starting text of the three worksheet columns of a new map. */
  evidence: string;
  recoveryPath: string;
  acceptanceQuestion: string;
};

export const LAYER_GUIDE: Record<MapLayer, LayerGuide> = {
  session_state: {
    label: "Session state",
    covers: "Where the run stood: its instructions, its position and its checkpoints.",
    custodiansHint: "The service that keeps the durable session, and the team allowed to fetch it.",
    evidence:
      "Checkpoint id and version, the task's instructions as given, and the next step the run was about to take.",
    recoveryPath:
      "How a checkpoint is fetched and a stopped run is continued through an interface the service supports.",
    acceptanceQuestion: "After an interrupted test run, can we fetch everything needed to continue it?",
  },
  compaction: {
    label: "Compaction",
    covers: "What happens to the context when the harness shortens it.",
    custodiansHint:
      "Whoever operates the harness that compacts context, and the application owner who writes the constraints that must survive it.",
    evidence:
      "The constraints as originally written, and whatever the harness lets us see of the context after compaction.",
    recoveryPath: "Keep the authoritative constraints outside any summary and apply them again after each compaction.",
    acceptanceQuestion:
      "Do the required constraints still hold after compaction, and which parts of it can we not inspect?",
  },
  tools: {
    label: "Tools",
    covers: "Writes the run makes in other systems.",
    custodiansHint: "The owner of each tool that writes elsewhere, and the team that authorizes its calls.",
    evidence: "For every write: the receipt, the external operation id and the result as the other system recorded it.",
    recoveryPath:
      "Check the other system's state before any retry; send idempotency keys wherever the tool honours them.",
    acceptanceQuestion: "Can we tell a write that never happened from one that happened but whose answer was lost?",
  },
  compute: {
    label: "Compute",
    covers: "The sandbox the code runs in and its lifecycle.",
    custodiansHint: "The operator of the sandbox, and the team responsible for creating and replacing it.",
    evidence: "Environment image and manifest, and which paths survive when the sandbox is replaced.",
    recoveryPath: "A written procedure to replace the sandbox and bring back what the run depends on.",
    acceptanceQuestion: "When the sandbox is replaced, what is still there and what is gone?",
  },
  credentials: {
    label: "Credentials",
    covers: "The access the run holds, its scope and its revocation.",
    custodiansHint: "The issuer of the run's credentials, and the team that sets their scope and revokes them.",
    evidence: "Scope, expiry and revocation records — never the secret values themselves.",
    recoveryPath: "Revoke the test access, then issue fresh access through the approved path.",
    acceptanceQuestion: "Once access is revoked, is every later protected action refused, on every path?",
  },
  artifacts: {
    label: "Artifacts",
    covers: "Files the run produces, drafts included.",
    custodiansHint: "The operator of the storage, and the team accountable for how long files are kept.",
    evidence: "A manifest of the files with versions or sha256 digests, and the retention rule.",
    recoveryPath: "Fetch draft and final files without needing a running sandbox.",
    acceptanceQuestion: "After an interruption, can we get the expected files back and prove their contents?",
  },
  recovery: {
    label: "Recovery",
    covers: "How a stopped run continues.",
    custodiansHint: "The workflow owner, and the service that continues a stopped run.",
    evidence: "The checkpoint used, the tool receipts, the resume decision and what the run produced afterwards.",
    recoveryPath: "Continue through the supported mechanism, settling every unknown effect before any new write.",
    acceptanceQuestion: "Can the run continue without repeating an effect that already happened?",
  },
  export: {
    label: "Export",
    covers: "What can leave the service, and what it means elsewhere.",
    custodiansHint: "The service that offers the export, and the team that has to make sense of it.",
    evidence: "What the export contains, in which formats, and the limits the service states.",
    recoveryPath: "Download the state and files that can be exported and judge what another system could do with them.",
    acceptanceQuestion: "What can we take elsewhere, and which behaviour only works on this service?",
  },
};

/** True when `value` names one of the eight layers. */
export function isMapLayer(value: string): value is MapLayer {
  return (MAP_LAYERS as readonly string[]).includes(value);
}
