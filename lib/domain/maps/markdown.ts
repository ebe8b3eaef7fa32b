/**
 * The Markdown export of a custody map: a heading, the adoption summary, one table of the eight layers, then
 * each layer in full (multi-line text kept). Pure.
 *
 * What people typed can never change the document's structure: every line ending CommonMark knows (LF, CR, CRLF) and
 * the separators other renderers break at (U+2028, U+2029, NEL, vertical tab, form feed) are folded — to `<br>` in a
 * table cell, to a space in a one-line field, to an indented continuation line in a list item — and each line of a
 * field is escaped where Markdown would read it as syntax: ASCII punctuation at its start (`#` heading, `-` `+` `*` list
 * item or rule, `>` quote, `|` and `:` table rows, backtick and tilde fences, `<` HTML, `[` link definitions, `=` and
 * `-` heading underlines), a number followed by `.` or `)` (ordered list), leading spaces (indented code), and
 * backslashes, `<` and backticks anywhere (escapes, inline HTML, code spans), and `|` anywhere in a table cell.
 */
import type { CustodyMapJson, LayerRow } from "@/lib/contract/maps";
import { LAYER_GUIDE } from "./layers";
import { evidenceText } from "./diff";
import { adoptionSummary } from "./summary";

/** Every line break a Markdown renderer may honour: CommonMark's CRLF, LF and CR, and U+2028, U+2029, NEL, VT, FF. */
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029\u0085\u000b\u000c]/;

/**
 * One line of typed text as inline Markdown that starts no block and opens no code span or HTML: leading spaces
 * dropped, backslashes, backticks and `<` escaped anywhere (`|` too inside a table cell), ASCII punctuation escaped at
 * its start, and the `.` or `)` after a leading number.
 */
function inertLine(line: string, inCell: boolean): string {
  const text = line
    .replace(/^[ \t]+/, "")
    .replace(inCell ? /[\\`<|]/g : /[\\`<]/g, "\\$&")
    .replace(/^(\d+)([.)])/, "$1\\$2");
  return /^[!-/:-@[-`{-~]/.test(text) && !text.startsWith("\\") ? `\\${text}` : text;
}

/** The lines of a field, each inert ({@link inertLine}), blank lines dropped. */
function inertLines(value: string, inCell = false): string[] {
  return value
    .trim()
    .split(LINE_BREAK)
    .map((line) => inertLine(line, inCell))
    .filter((l) => l.trim() !== "");
}

/** A one-line field (a title, a name): its lines joined by spaces. */
function inline(value: string): string {
  return inertLines(value).join(" ");
}

/** A field that may span lines, as the rest of a list item: later lines indented under it. Empty when blank. */
function itemText(value: string): string {
  return inertLines(value).join("\n  ");
}

/** Text safe inside a Markdown table cell: its lines inert and joined by `<br>`, empty as an em dash. */
export function cell(value: string): string {
  const lines = inertLines(value, true);
  return lines.length ? lines.join("<br>") : "—";
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
  out.push(`# ${inline(map.title)}`);
  out.push("");
  out.push(`- Workflow: ${inline(map.workflow)}`);
  out.push(`- Version: ${map.version} (${map.status})`);
  out.push(`- Map id: ${inline(map.id)}`);
  if (opts.exportedAt) out.push(`- Exported: ${opts.exportedAt}`);
  if (map.signoff) {
    const note = map.signoff.note.trim() ? ` — ${inline(map.signoff.note)}` : "";
    out.push(`- Signed off: by ${inline(map.signoff.signed_off_by)} at ${map.signoff.signed_off_at}${note}`);
  } else if (map.status === "published") {
    out.push("- Signed off: not yet (a reviewer who is not its last editor signs a published version off)");
  }
  out.push("");
  out.push("## Adoption summary");
  out.push("");
  out.push(`**${inline(summary.headline)}**`);
  out.push("");
  out.push(inline(summary.export_line));
  out.push("");
  out.push(
    `Accepted: ${summary.accepted} · Constrained: ${summary.constrained} · Evidence requested: ${summary.evidence_requested} · Undecided: ${summary.undecided}`,
  );
  if (summary.reasons.length) {
    out.push("");
    for (const r of summary.reasons) out.push(`- ${itemText(r)}`);
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
    out.push(`- Custodians: ${itemText(custodianLines(row)) || "none named yet"}`);
    if (row.handoff.trim()) out.push(`- Handoff: ${itemText(row.handoff)}`);
    out.push(`- Evidence to retain: ${itemText(row.evidence) || "—"}`);
    out.push(`- Recovery or export path: ${itemText(row.recovery_path) || "—"}`);
    out.push(`- Acceptance question: ${itemText(row.acceptance_question) || "—"}`);
    out.push(
      `- Verification: ${row.verification}${row.verification_evidence ? ` — ${itemText(evidenceText(row.verification_evidence))}` : ""}`,
    );
    out.push(`- Decision: ${itemText(decisionText(row))}`);
  }
  out.push("");
  return out.join("\n");
}
