/**
 * Suggested evidence for each step of an exercise, from what the product knows about the tasks linked to it
 * (LinkedTaskFacts: checkpoints, side effects, artifacts, the gate's verdict). A suggestion is text a person can
 * take into the step with one click — it is never recorded on its own. Pure; used by the exercise page.
 */
import type { ExerciseStep, LinkedTaskFacts } from "@/lib/client/map-types";

export type Suggestion = {
  key: string;
  text: string;
  /** What taking it changes on the step (the note is appended to). */
  apply: { note?: string; artifact_digest?: string; task_id?: string };
};

const short = (digest: string) => `${digest.slice(0, 12)}…`;
const base = (ref: string) => ref.split("/").pop() ?? ref;

/** The suggestions for one step from every linked task. */
export function suggestionsFor(step: ExerciseStep, tasks: readonly LinkedTaskFacts[]): Suggestion[] {
  return tasks.flatMap((t) => forTask(step, t));
}

function forTask(step: ExerciseStep, t: LinkedTaskFacts): Suggestion[] {
  const out: Suggestion[] = [];
  const add = (key: string, text: string, apply: Suggestion["apply"] = {}) =>
    out.push({ key: `${t.task_id}:${key}`, text, apply: { task_id: t.task_id, note: text, ...apply } });
  switch (step) {
    case "define_expected_result": {
      const writes = t.side_effects.map((e) => e.name);
      const files = t.artifacts.map((a) => base(a.ref));
      if (writes.length || files.length) {
        add(
          "expected",
          `Expected for ${t.task_id}: ${writes.length ? `${writes.join(", ")} made exactly once` : "no external write"}${files.length ? `; files ${[...new Set(files)].join(", ")} complete and matching their digests` : ""}.`,
        );
      }
      break;
    }
    case "establish_checkpoint": {
      const latest = t.checkpoints[0];
      if (latest) {
        add(
          "checkpoint",
          `${t.task_id}: checkpoint v${latest.version} (${latest.phase}), signature ${latest.signature_valid ? "verified" : "does NOT verify"}, digest ${short(latest.digest)}; ${t.checkpoints.length} checkpoint${t.checkpoints.length === 1 ? "" : "s"} kept.`,
        );
      } else {
        add("no-checkpoint", `${t.task_id}: no checkpoint recorded — the run cannot be resumed from a record.`);
      }
      break;
    }
    case "interrupt":
      if (t.current_attempt > 1) {
        add("attempts", `${t.task_id}: sandbox replaced ${t.current_attempt - 1} time${t.current_attempt === 2 ? "" : "s"}; now at attempt ${t.current_attempt}.`);
      }
      break;
    case "resume_and_reconcile": {
      const codes = [...new Set(t.gate.reasons.map((r) => r.code))];
      add("gate", `${t.task_id}: resume gate says ${t.gate.verdict}${codes.length ? ` (${codes.join(", ")})` : ""}.`);
      if (t.unknown_side_effects.length) {
        add(
          "unknown",
          `${t.task_id}: outcome unknown for ${t.unknown_side_effects.map((e) => e.name).join(", ")} — reconcile against the other system before any retry.`,
        );
      } else if (t.side_effects.length) {
        add("effects", `${t.task_id}: no write with an unknown outcome (${t.side_effects.map((e) => `${e.name} ${e.status.replace("_", " ")}`).join(", ")}).`);
      }
      break;
    }
    case "retrieve_and_export":
      for (const a of t.artifacts) add(`artifact:${a.sha256}`, `${t.task_id}: ${base(a.ref)} sha256 ${short(a.sha256)} (${a.ref}).`, { artifact_digest: a.sha256 });
      break;
    case "test_revocation": {
      const credential = t.gate.reasons.filter((r) => ["credential_revoked", "credential_expired", "principal_revoked"].includes(r.code));
      if (credential.length) {
        for (const r of credential) add(`gate:${r.code}:${r.target}`, `${t.task_id}: the gate stops with ${r.code} — ${r.message}`);
      } else {
        add("no-revocation", `${t.task_id}: the gate reports no revoked principal and no revoked or expired credential for this run.`);
      }
      break;
    }
  }
  return out;
}
