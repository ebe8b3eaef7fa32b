/**
 * Figures computed from a map's eight rows: the progress shown in the list, and the adoption summary with the
 * overall recommendation shown at the top of the worksheet. Pure functions.
 *
 * The recommendation, in order of precedence:
 * - `not_ready` — a layer has no decision yet;
 * - `hold` — evidence is requested for a layer, or a layer is accepted although its verification failed;
 * - `adopt_with_constraints` — every layer is accepted or constrained, at least one constrained;
 * - `adopt` — every layer is accepted. Accepted layers whose verification is still unknown are listed as reasons.
 */
import type { AdoptionSummary, LayerRow, MapProgress } from "@/lib/contract/maps";
import { LAYER_GUIDE } from "./layers";
import { isPlaceholderName, splitEvidenceRequest } from "./names";

const label = (r: Pick<LayerRow, "layer">) => LAYER_GUIDE[r.layer].label;
/** Typed text as the end of a sentence: trimmed, without its own closing full stop. */
const clause = (text: string) => text.trim().replace(/[.。]+$/u, "");

/** "Tools", "Tools and Compute", "Tools, Compute and Export". */
export function listWords(words: string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

/** True when the row names at least one real custodian. */
export function hasNamedCustodian(row: Pick<LayerRow, "custodians">): boolean {
  return row.custodians.some((c) => !isPlaceholderName(c.name));
}

/** Layers with a named custodian, verified, failed and decided, out of eight. */
export function mapProgress(layers: readonly LayerRow[]): MapProgress {
  return {
    total: layers.length,
    custodians_named: layers.filter(hasNamedCustodian).length,
    verified: layers.filter((l) => l.verification === "verified").length,
    failed: layers.filter((l) => l.verification === "failed").length,
    decided: layers.filter((l) => l.decision !== null).length,
  };
}

/** Whether the Export layer links a bundle that passed the verifier (decision 0038), and the sentence saying so. */
function exportBundle(layers: readonly LayerRow[]): Pick<AdoptionSummary, "export_bundle" | "export_line"> {
  const e = layers.find((l) => l.layer === "export")?.verification_evidence;
  if (!e || e.kind !== "bundle") {
    return {
      export_bundle: "none",
      export_line: "Export: no verified bundle is linked yet; export one and link its digest to the Export layer.",
    };
  }
  if (e.bundle_verified !== true && e.bundle_verified !== false) {
    return {
      export_bundle: "unverified",
      export_line: `Export: bundle ${e.ref.slice(0, 12)}… was exported but has not been verified; check it with npx run-custody verify.`,
    };
  }
  return e.bundle_verified
    ? {
        export_bundle: "verified",
        export_line: `Export: bundle ${e.ref.slice(0, 12)}… was exported and passed offline verification.`,
      }
    : {
        export_bundle: "failed",
        export_line: `Export: bundle ${e.ref.slice(0, 12)}… was exported but failed verification.`,
      };
}

/** The adoption summary and overall recommendation of a map's rows. */
export function adoptionSummary(layers: readonly LayerRow[]): AdoptionSummary {
  return { ...recommend(layers), ...exportBundle(layers) };
}

function recommend(layers: readonly LayerRow[]): Omit<AdoptionSummary, "export_bundle" | "export_line"> {
  const accepted = layers.filter((l) => l.decision === "accept");
  const constrained = layers.filter((l) => l.decision === "constrain");
  const requested = layers.filter((l) => l.decision === "request_evidence");
  const undecided = layers.filter((l) => l.decision === null);
  const acceptedButFailed = accepted.filter((l) => l.verification === "failed");
  const acceptedUnverified = accepted.filter((l) => l.verification === "unknown");
  const counts = {
    accepted: accepted.length,
    constrained: constrained.length,
    evidence_requested: requested.length,
    undecided: undecided.length,
  };
  const reasons: string[] = [];

  for (const r of requested) {
    const parts = splitEvidenceRequest(r.decision_note);
    reasons.push(
      parts
        ? `${label(r)}: evidence requested — ${clause(parts.what)}, from ${clause(parts.whom)}.`
        : `${label(r)}: evidence requested.`,
    );
  }
  for (const r of acceptedButFailed)
    reasons.push(`${label(r)} is accepted, but its verification failed: reconsider it (constrain is suggested).`);
  for (const r of constrained) reasons.push(`${label(r)}: constrained — ${clause(r.decision_note)}.`);
  if (acceptedUnverified.length) {
    reasons.push(
      `${listWords(acceptedUnverified.map(label))} ${acceptedUnverified.length === 1 ? "is" : "are"} accepted without verified evidence yet.`,
    );
  }

  if (undecided.length) {
    return {
      ...counts,
      recommendation: "not_ready",
      headline: `Not ready to decide: ${undecided.length} of ${layers.length} layers have no decision yet (${listWords(undecided.map(label))}).`,
      reasons,
    };
  }
  if (requested.length || acceptedButFailed.length) {
    const what = [
      ...(requested.length ? [`evidence is requested for ${listWords(requested.map(label))}`] : []),
      ...(acceptedButFailed.length ? [`${listWords(acceptedButFailed.map(label))} failed verification`] : []),
    ];
    return {
      ...counts,
      recommendation: "hold",
      headline: `Hold: ${listWords(what)}; keep consequential work off this workflow until that is settled.`,
      reasons,
    };
  }
  if (constrained.length) {
    return {
      ...counts,
      recommendation: "adopt_with_constraints",
      headline: `Adopt with constraints on ${listWords(constrained.map(label))}.`,
      reasons,
    };
  }
  return {
    ...counts,
    recommendation: "adopt",
    headline: acceptedUnverified.length
      ? `Adopt: every layer is accepted (${acceptedUnverified.length} without verified evidence).`
      : "Adopt: every layer is accepted and verified.",
    reasons,
  };
}
