/**
 * Suggested evidence for each step of an exercise, from what the product knows about the tasks linked to it
 * (LinkedTaskFacts: checkpoints, side effects, artifacts, the gate's verdict, "Test revocation" checks). A suggestion
 * is text a person can take into the step with one click — it is never recorded on its own. Pure; used by the
 * exercise page.
 */
import type { GateReasonCode } from "@/lib/contract/api";
import type { ExerciseStep, LinkedTaskFacts, RevocationCheckFact } from "@/lib/contract/maps";

/** Gate reasons about the authority a run holds: what a "Test revocation" step looks for. */
const AUTHORITY_REASONS: readonly GateReasonCode[] = ["credential_revoked", "credential_expired", "principal_revoked"];

export type Suggestion = {
  key: string;
  text: string;
  /** What taking it changes on the step (the note is appended to; `event_id` links that event of the task). */
  apply: { note?: string; artifact_digest?: string; task_id?: string; event_id?: string };
};

/** A revocation check's answer in words: only `revoked` and `not_revoked` are answers; the rest prove nothing. */
export const REVOCATION_ANSWER: Record<RevocationCheckFact["outcome"], { word: string; icon: string }> = {
  revoked: { word: "revoked", icon: "✔" },
  not_revoked: { word: "NOT revoked (it still works)", icon: "✕" },
  ambiguous: { word: "no clear answer (nothing proven)", icon: "?" },
  timeout: { word: "no answer in time (nothing proven)", icon: "?" },
  unreachable: { word: "endpoint unreachable (nothing proven)", icon: "?" },
  refused: { word: "endpoint may not be called (nothing proven)", icon: "?" },
};

const utc = (iso: string) => `${iso.slice(0, 19).replace("T", " ")} UTC`;

/** One revocation check as a sentence: the credential, the answer, when, by whom, from where and under which policy. */
export function revocationCheckText(c: RevocationCheckFact): string {
  const since = c.outcome === "revoked" && c.revoked_at ? ` since ${c.revoked_at}` : "";
  const from = c.endpoint_host ? ` from ${c.endpoint_host}` : "";
  const policy = c.policy_version !== null ? `, policy v${c.policy_version}` : "";
  return `revocation check of ${c.credential_ref}: ${REVOCATION_ANSWER[c.outcome].word}${since} — asked ${utc(c.checked_at)}${c.checked_by ? ` by ${c.checked_by}` : ""}${from}${policy}.`;
}

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
      // The step asks for the record the run would resume from: once a sandbox was replaced, that is the newest
      // checkpoint an earlier attempt wrote (the last one before the interruption), not one written after it.
      const before =
        t.current_attempt > 1
          ? t.checkpoints.find((c) => c.attempt !== null && c.attempt < t.current_attempt)
          : undefined;
      const chosen = before ?? t.checkpoints[0];
      if (chosen) {
        const which = before ? ` — the last one before the interruption (attempt ${before.attempt})` : "";
        add(
          "checkpoint",
          `${t.task_id}: checkpoint v${chosen.version} (${chosen.phase})${which}, signature ${chosen.signature_valid ? "verified" : "does NOT verify"}, digest ${short(chosen.digest)}; ${t.checkpoints.length} checkpoint${t.checkpoints.length === 1 ? "" : "s"} kept.`,
        );
      } else {
        add("no-checkpoint", `${t.task_id}: no checkpoint recorded — the run cannot be resumed from a record.`);
      }
      break;
    }
    case "interrupt":
      if (t.current_attempt > 1) {
        add(
          "attempts",
          `${t.task_id}: sandbox replaced ${t.current_attempt - 1} time${t.current_attempt === 2 ? "" : "s"}; now at attempt ${t.current_attempt}.`,
        );
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
        add(
          "effects",
          `${t.task_id}: no write with an unknown outcome (${t.side_effects.map((e) => `${e.name} ${e.status.replace("_", " ")}`).join(", ")}).`,
        );
      }
      break;
    }
    case "retrieve_and_export":
      for (const a of t.artifacts)
        add(`artifact:${a.sha256}`, `${t.task_id}: ${base(a.ref)} sha256 ${short(a.sha256)} (${a.ref}).`, {
          artifact_digest: a.sha256,
        });
      break;
    case "test_revocation": {
      // Each "Test revocation" check the task holds, newest first: linking one keeps its event as the step's evidence.
      for (const c of t.revocation_checks)
        add(`check:${c.event_id}`, `${t.task_id}: ${revocationCheckText(c)}`, { event_id: c.event_id });
      const credential = t.gate.reasons.filter((r) => AUTHORITY_REASONS.includes(r.code));
      if (credential.length) {
        for (const r of credential)
          add(`gate:${r.code}:${r.target}`, `${t.task_id}: the gate stops with ${r.code} — ${r.message}`);
      } else {
        add(
          "no-revocation",
          `${t.task_id}: the gate reports no revoked principal and no revoked or expired credential for this run.`,
        );
      }
      break;
    }
  }
  return out;
}
