/**
 * The Markdown export of a custody map: a heading, the adoption summary, one table of the eight layers, then
 * each layer in full (multi-line text kept). Table cells escape `|` and fold line breaks so the table stays a
 * table. Pure.
 */
import type { CustodyMapJson, LayerRow } from "@/lib/contract/maps";
import { LAYER_GUIDE } from "./layers";
import { evidenceText } from "./diff";
import { adoptionSummary } from "./summary";

/** Text safe inside a Markdown table cell: pipes escaped, line breaks as `<br>`, empty as an em dash. */
export function cell(value: string): string {
  const t = value.trim();
  if (!t) return "—";
  return t.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
}

const DECISION_WORD: Record<NonNullable<LayerRow["decision"]>, string> = {
  accept: "Accept",
  constrain: "Constrain",
  request_evidence: "Request evidence",
};

function decisionText(row: LayerRow): string {
  if (!row.decision) return "undecided";
  const note = row.decision_note.trim();
  return note ? `${DECISION_WORD[row.decision]}: ${note}` : DECISION_WORD[row.decision];
}

function custodianLines(row: LayerRow): string {
  return row.custodians.map((c) => `${c.name} (${c.organization})`).join("; ");
}

/**
 * The map as a Markdown document.
 * @param opts.exportedAt ISO time printed under the heading (omitted when absent, so output can be compared).
 */
export function mapToMarkdown(map: CustodyMapJson, opts: { exportedAt?: string } = {}): string {
  const summary = adoptionSummary(map.layers);
  const out: string[] = [];
  out.push(`# ${map.title.replace(/\r?\n/g, " ")}`);
  out.push("");
  out.push(`- Workflow: ${map.workflow}`);
  out.push(`- Version: ${map.version} (${map.status})`);
  out.push(`- Map id: ${map.id}`);
  if (opts.exportedAt) out.push(`- Exported: ${opts.exportedAt}`);
  out.push("");
  out.push("## Adoption summary");
  out.push("");
  out.push(`**${summary.headline}**`);
  out.push("");
  out.push(
    `Accepted: ${summary.accepted} · Constrained: ${summary.constrained} · Evidence requested: ${summary.evidence_requested} · Undecided: ${summary.undecided}`,
  );
  if (summary.reasons.length) {
    out.push("");
    for (const r of summary.reasons) out.push(`- ${r}`);
  }
  out.push("");
  out.push("## Layers");
  out.push("");
  out.push(
    "| Layer | Custodians | Evidence to retain | Recovery or export path | Acceptance question | Verification | Decision |",
  );
  out.push("|---|---|---|---|---|---|---|");
  for (const row of map.layers) {
    out.push(
      `| ${LAYER_GUIDE[row.layer].label} | ${cell(custodianLines(row))} | ${cell(row.evidence)} | ${cell(row.recovery_path)} | ${cell(row.acceptance_question)} | ${cell(
        row.verification + (row.verification_evidence ? ` (${evidenceText(row.verification_evidence)})` : ""),
      )} | ${cell(decisionText(row))} |`,
    );
  }
  for (const row of map.layers) {
    out.push("");
    out.push(`### ${LAYER_GUIDE[row.layer].label} (\`${row.layer}\`)`);
    out.push("");
    out.push(`- Custodians: ${custodianLines(row) || "none named yet"}`);
    if (row.handoff.trim()) out.push(`- Handoff: ${row.handoff.trim().replace(/\r?\n/g, "\n  ")}`);
    out.push(`- Evidence to retain: ${row.evidence.trim().replace(/\r?\n/g, "\n  ") || "—"}`);
    out.push(`- Recovery or export path: ${row.recovery_path.trim().replace(/\r?\n/g, "\n  ") || "—"}`);
    out.push(`- Acceptance question: ${row.acceptance_question.trim().replace(/\r?\n/g, "\n  ") || "—"}`);
    out.push(
      `- Verification: ${row.verification}${row.verification_evidence ? ` — ${evidenceText(row.verification_evidence)}` : ""}`,
    );
    out.push(`- Decision: ${decisionText(row).replace(/\r?\n/g, "\n  ")}`);
  }
  out.push("");
  return out.join("\n");
}
