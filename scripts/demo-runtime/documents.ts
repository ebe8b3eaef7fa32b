/**
 * Fixed content of the reference scenario: the input document `case-918.pdf` (a real, minimal one-page PDF)
 * and the two halves of `report.md`. Everything here is deterministic, so every run of the demo produces the
 * same digests.
 */
import { createHash } from "node:crypto";

/** Lower-case hex sha256 of bytes or a UTF-8 string. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Builds a minimal, valid one-page PDF 1.4 with the given lines of text (Helvetica), with a correct
 * cross-reference table. ASCII text only.
 */
export function minimalPdf(lines: string[]): Buffer {
  const escape = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = ["BT", "/F1 14 Tf", "72 760 Td", "18 TL", ...lines.map((l) => `(${escape(l)}) Tj T*`), "ET"].join(
    "\n",
  );
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

/** The scenario's input document for `taskId`. */
export function caseDocument(taskId: string): Buffer {
  return minimalPdf([
    `Case file ${taskId}`,
    "Claimant: Test Person (synthetic record for the Run Custody demo)",
    "Request: review of a damaged shipment, claim amount 1,250.00 EUR",
    "Attachments: photo set A (3 images), carrier statement",
    "Reviewer note: evidence complete; approve for record update.",
  ]);
}

/** First half of `report.md` (written before the sandbox is lost). */
export function reportFirstHalf(taskId: string, documentSha256: string): string {
  return [
    `# Review report: ${taskId}`,
    "",
    "## Source",
    "",
    `- Document: \`${taskId}.pdf\``,
    `- sha256: \`${documentSha256}\``,
    "",
    "## Findings",
    "",
    "1. The claim concerns a damaged shipment; the claimed amount is 1,250.00 EUR.",
    "2. The photo set and the carrier statement agree on the damage.",
    "",
  ].join("\n");
}

/** Second half of `report.md` (written after the run resumes). */
export function reportSecondHalf(recordId: string): string {
  return [
    "## Actions",
    "",
    `- Record \`${recordId}\` was set to status \`reviewed\` (one update, idempotency key kept in the task record).`,
    "",
    "## Conclusion",
    "",
    "The evidence is complete. The claim is ready for payment by the claims team.",
    "",
  ].join("\n");
}
