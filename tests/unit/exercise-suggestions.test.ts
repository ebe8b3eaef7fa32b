/**
 * Suggested evidence for the "Test revocation" step of an interruption exercise (decision 0018: the step can link the
 * evidence of a "Test revocation" check): each `credential.revocation_checked` event of a linked task is offered with
 * its answer (revoked / NOT revoked / nothing proven), credential, time and who asked, and taking it links that event;
 * other steps never offer it. Also the step's `event_id` in the exercise body schema (optional, so older clients work).
 */
import { describe, expect, it } from "vitest";
import { EXERCISE_STEPS } from "@/db/schema/map-vocabulary";
import type { LinkedTaskFacts, RevocationCheckFact } from "@/lib/contract/maps";
import { emptySteps, updateExerciseSchema } from "@/lib/domain/exercises/rules";
import { revocationCheckText, suggestionsFor } from "@/lib/domain/exercises/suggestions";

function check(over: Partial<RevocationCheckFact> = {}): RevocationCheckFact {
  return {
    event_id: "custody:revocation-check:case-918:records-api:41",
    credential_ref: "records-api",
    outcome: "revoked",
    revoked_at: "2026-01-02T03:04:05Z",
    checked_at: "2026-03-04T05:06:07.123Z",
    checked_by: "responder@acme.test",
    endpoint_host: "vault.acme.test",
    policy_version: 3,
    ...over,
  };
}

function facts(over: Partial<LinkedTaskFacts> = {}): LinkedTaskFacts {
  return {
    task_id: "case-918",
    phase: "drafting",
    current_attempt: 2,
    checkpoints: [],
    unknown_side_effects: [],
    side_effects: [],
    artifacts: [],
    gate: { verdict: "resume", reasons: [] },
    revocation_checks: [],
    ...over,
  };
}

describe("the Test revocation step's suggestions", () => {
  it("offer each revocation check of the task, newest first, with its answer, credential, time and who asked; taking one links its event", () => {
    const revoked = check();
    const still = check({
      event_id: "custody:revocation-check:case-918:files-api:40",
      credential_ref: "files-api",
      outcome: "not_revoked",
      revoked_at: null,
      checked_at: "2026-03-04T05:00:00Z",
    });
    const silent = check({
      event_id: "custody:revocation-check:case-918:mail-api:39",
      credential_ref: "mail-api",
      outcome: "timeout",
      revoked_at: null,
      policy_version: null,
      endpoint_host: null,
      checked_by: null,
    });
    const out = suggestionsFor("test_revocation", [facts({ revocation_checks: [revoked, still, silent] })]);
    const linking = out.filter((s) => s.apply.event_id);
    expect(linking.map((s) => s.apply.event_id)).toEqual([revoked.event_id, still.event_id, silent.event_id]);
    expect(linking.every((s) => s.apply.task_id === "case-918" && s.apply.note === s.text)).toBe(true);
    expect(linking[0]!.text).toBe(
      "case-918: revocation check of records-api: revoked since 2026-01-02T03:04:05Z — asked 2026-03-04 05:06:07 UTC by responder@acme.test from vault.acme.test, policy v3.",
    );
    expect(linking[1]!.text).toMatch(/files-api: NOT revoked \(it still works\) — asked 2026-03-04 05:00:00 UTC/);
    expect(linking[2]!.text).toBe(
      "case-918: revocation check of mail-api: no answer in time (nothing proven) — asked 2026-03-04 05:06:07 UTC.",
    );
    // The gate's view is still offered after the checks.
    expect(out.at(-1)!.key).toBe("case-918:no-revocation");
    expect(out.at(-1)!.apply.event_id).toBeUndefined();
  });

  it("say every answer that proves nothing in words, and offer nothing of the checks to the other steps", () => {
    for (const outcome of ["ambiguous", "unreachable", "refused"] as const) {
      expect(revocationCheckText(check({ outcome, revoked_at: "2026-01-02T03:04:05Z" }))).toMatch(
        /\(nothing proven\) — asked/,
      );
    }
    const t = facts({ revocation_checks: [check()] });
    for (const step of EXERCISE_STEPS.filter((s) => s !== "test_revocation")) {
      expect(suggestionsFor(step, [t]).filter((s) => s.apply.event_id || s.text.includes("revocation check"))).toEqual(
        [],
      );
    }
    // No check yet: only the gate's view, nothing to link.
    expect(suggestionsFor("test_revocation", [facts()]).map((s) => s.apply.event_id)).toEqual([undefined]);
  });
});

describe("the Establish a checkpoint step's suggestion", () => {
  const cp = (version: number, attempt: number | null) => ({
    version,
    phase: `phase-${version}`,
    digest: `${version}`.repeat(64).slice(0, 64),
    signature_valid: true,
    created_at: "2026-03-04T05:06:07Z",
    attempt,
  });

  it("offers the last checkpoint before the interruption, not one written after it", () => {
    const t = facts({ current_attempt: 2, checkpoints: [cp(4, 2), cp(3, 1), cp(2, 1)] });
    const [s] = suggestionsFor("establish_checkpoint", [t]);
    expect(s!.text).toMatch(
      /^case-918: checkpoint v3 \(phase-3\) — the last one before the interruption \(attempt 1\)/,
    );
    expect(s!.text).toMatch(/3 checkpoints kept\.$/);
  });

  it("offers the newest when the run was never interrupted, and says when there is none", () => {
    const [s] = suggestionsFor("establish_checkpoint", [
      facts({ current_attempt: 1, checkpoints: [cp(2, 1), cp(1, 1)] }),
    ]);
    expect(s!.text).toMatch(/^case-918: checkpoint v2 \(phase-2\), signature verified/);
    const [none] = suggestionsFor("establish_checkpoint", [facts()]);
    expect(none!.key).toBe("case-918:no-checkpoint");
  });
});

describe("a step's event_id in the exercise body", () => {
  const steps = () => emptySteps().map(({ event_id: _omit, ...s }) => s);

  it("is optional (absent is null), and kept when given", () => {
    const without = updateExerciseSchema.parse({ steps: steps(), revision: 1 });
    expect(without.steps!.map((s) => s.event_id)).toEqual([null, null, null, null, null, null]);
    const withEvent = steps().map((s) =>
      s.step === "test_revocation"
        ? { ...s, task_id: "case-918", event_id: " custody:revocation-check:case-918:records-api:41 " }
        : s,
    );
    expect(updateExerciseSchema.parse({ steps: withEvent, revision: 1 }).steps![5]).toMatchObject({
      task_id: "case-918",
      event_id: "custody:revocation-check:case-918:records-api:41",
    });
  });

  it("refuses an empty or overlong event id, with the step's path", () => {
    for (const bad of ["  ", "e".repeat(501), 42]) {
      const body = { steps: steps().map((s, i) => (i === 5 ? { ...s, event_id: bad } : s)), revision: 1 };
      const parsed = updateExerciseSchema.safeParse(body);
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.path.join("."))).toEqual(["steps.5.event_id"]);
    }
  });
});
