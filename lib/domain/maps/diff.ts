/**
 * Comparing two versions of a map: every field that differs, per layer, as the text a person reads (custodians
 * as "Name (Organization)", evidence links as "kind: ref"). Revisions are bookkeeping and never compared.
 * Pure; used by the versions panel of the worksheet and its tests.
 */
import type { CustodyMapJson, LayerRow, MapLayer, VerificationEvidence } from "@/lib/contract/maps";

export const COMPARED_FIELDS = [
  "custodians",
  "handoff",
  "evidence",
  "recovery_path",
  "acceptance_question",
  "verification",
  "verification_evidence",
  "decision",
  "decision_note",
] as const;
export type ComparedField = (typeof COMPARED_FIELDS)[number];

export type MapChange =
  | { scope: "map"; field: "workflow" | "title"; before: string; after: string }
  | { scope: "layer"; layer: MapLayer; field: ComparedField; before: string; after: string };

/** A custodian list as one line of text. */
export function custodiansText(row: Pick<LayerRow, "custodians">): string {
  return row.custodians.map((c) => `${c.name} (${c.organization})`).join("; ");
}

/** An evidence link as one line of text. */
export function evidenceText(e: VerificationEvidence | null): string {
  if (!e) return "";
  const result =
    e.kind !== "bundle"
      ? ""
      : e.bundle_verified === true
        ? " (verified)"
        : e.bundle_verified === false
          ? " (verification failed)"
          : " (not verified)";
  return `${e.kind}: ${e.ref}${result}${e.note ? ` — ${e.note}` : ""}`;
}

/** One field of a row as text. */
export function fieldText(row: LayerRow, field: ComparedField): string {
  switch (field) {
    case "custodians":
      return custodiansText(row);
    case "verification_evidence":
      return evidenceText(row.verification_evidence);
    case "decision":
      return row.decision ?? "";
    default:
      return row[field];
  }
}

/** The changes from `before` to `after`, map fields first, then layers in their fixed order. */
export function diffMaps(before: CustodyMapJson, after: CustodyMapJson): MapChange[] {
  const changes: MapChange[] = [];
  for (const field of ["workflow", "title"] as const) {
    if (before[field] !== after[field])
      changes.push({ scope: "map", field, before: before[field], after: after[field] });
  }
  const old = new Map(before.layers.map((l) => [l.layer, l]));
  for (const row of after.layers) {
    const prev = old.get(row.layer);
    if (!prev) continue;
    for (const field of COMPARED_FIELDS) {
      const a = fieldText(prev, field);
      const b = fieldText(row, field);
      if (a !== b) changes.push({ scope: "layer", layer: row.layer, field, before: a, after: b });
    }
  }
  return changes;
}
