/**
 * Which of a task's artifacts a write's payload names (decision 0045): what an approver is shown as "the artifact it
 * will publish". A payload names an artifact when one of its string values is the artifact's sha256, its ref, or its
 * ref's file name (`{"report": "report.md"}` names `s3://out/report.md`). Of several versions of one ref, the newest
 * listed counts: that is what the write would send now.
 */
import type { ArtifactView } from "@/lib/contract/api";

/** At most this many string values of a payload are looked at (a payload is bounded; this keeps the walk bounded too). */
const MAX_VALUES = 2000;

function stringsOf(value: unknown, out: Set<string>, depth = 0): void {
  if (out.size >= MAX_VALUES || depth > 32) return;
  if (typeof value === "string") out.add(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out, depth + 1);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringsOf(v, out, depth + 1);
}

function fileName(ref: string): string {
  return ref.split("/").pop() ?? ref;
}

/**
 * The artifacts of `artifacts` (newest listed first, as the task's artifact list answers) that `payload` names, one
 * per ref.
 */
export function artifactsNamedBy(payload: unknown, artifacts: readonly ArtifactView[]): ArtifactView[] {
  if (payload === null || payload === undefined) return [];
  const values = new Set<string>();
  stringsOf(payload, values);
  const seen = new Set<string>();
  const named: ArtifactView[] = [];
  for (const a of artifacts) {
    if (seen.has(a.ref)) continue;
    const byRef = values.has(a.ref) || values.has(fileName(a.ref));
    if (byRef || values.has(a.sha256)) {
      seen.add(a.ref);
      named.push(a);
    }
  }
  return named;
}
