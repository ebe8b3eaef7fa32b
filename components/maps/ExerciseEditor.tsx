"use client";

/**
 * An interruption exercise. While in progress, owners and admins record it (autosaved with the revision it was based
 * on, like the worksheet rows): the covered layers, six steps with status and evidence — a task of this workspace
 * found by search, an artifact digest, one event of the task (e.g. a "Test revocation" check, linked from the
 * suggestions and shown with a link to it on the task's timeline), a note — and the outcome with the finding. Linking
 * a task brings in what the product knows about it as suggested evidence per step. "Run it for real" shows the demo
 * runtime's command for the chosen point. Completing the exercise sets the covered layers' verification on the map.
 */
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useCallback, useEffect, useState, useSyncExternalStore } from "react";
import type { Role } from "@/db/schema/enums";
import { ApiError } from "@/lib/client/api";
import { fieldErrors, mapApi, mapKeys } from "@/lib/client/maps";
import type {
  ExerciseJson,
  ExerciseOutcome,
  ExerciseStepRow,
  ExerciseView,
  LayerRow,
  LinkedTaskFacts,
  MapLayer,
  StepStatus,
} from "@/lib/contract/maps";
import {
  EXERCISE_OUTCOMES,
  layerResults,
  OUTCOME_GUIDE,
  STEP_GUIDE,
  STEP_STATUS_WORD,
} from "@/lib/domain/exercises/guide";
import { REVOCATION_ANSWER, revocationCheckText, suggestionsFor } from "@/lib/domain/exercises/suggestions";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import {
  drillTaskId,
  isCrashPoint,
  POINT_GUIDE,
  POINT_LAYERS,
  RECORDS_TOOL,
  recordsUrlOfLookup,
} from "@/lib/demo/interruption-points";
import { CopyButton } from "@/components/ui/CopyButton";
import { Time } from "@/components/ui/time";
import { VerdictBadge } from "@/components/ui/status";
import { OutcomeBadge, StepStatusBadge, VerificationBadge } from "./badges";
import { ConflictNotice } from "./ConflictNotice";
import { FieldError, inputClass, labelClass, smallButtonClass, TextAreaField } from "./fields";
import { SaveStatus } from "./SaveStatus";
import { useAutosave } from "./useAutosave";

type Draft = Pick<ExerciseJson, "interruption_point" | "layers" | "steps" | "outcome" | "finding">;

const draftOf = (e: ExerciseJson): Draft => ({
  interruption_point: e.interruption_point,
  layers: e.layers,
  steps: e.steps,
  outcome: e.outcome,
  finding: e.finding,
});
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function ExerciseEditor({
  initial,
  canEdit,
  role,
  recordsLookup = null,
}: {
  initial: ExerciseView;
  canEdit: boolean;
  role: Role;
  /** The workspace's lookup URL of the demo's records tool (Settings → Lookups), or null when none is registered. */
  recordsLookup?: string | null;
}) {
  const mapId = initial.map_id;
  const [linked, setLinked] = useState(initial.linked_tasks);
  const [completed, setCompleted] = useState<{ layers: LayerRow[]; mapVersion: number; newDraft: boolean } | null>(
    null,
  );
  const [completing, setCompleting] = useState(false);
  const [exporting, setExporting] = useState(false);
  const [exportFailure, setExportFailure] = useState<string | null>(null);

  const refreshLinked = useCallback(async () => {
    try {
      setLinked((await mapApi.exercise(mapId, initial.id)).linked_tasks);
    } catch {
      // the facts are suggestions only; the page keeps the last ones
    }
  }, [mapId, initial.id]);

  const autosave = useAutosave<Draft, ExerciseJson, Record<string, unknown>>({
    initial,
    draftOf,
    patchOf: (d, b) => {
      const body: Record<string, unknown> = {};
      for (const k of Object.keys(d) as Array<keyof Draft>) if (!same(d[k], draftOf(b)[k])) body[k] = d[k];
      return body;
    },
    send: async (body, b) => {
      const next = await mapApi.saveExercise(mapId, initial.id, { ...body, revision: b.revision });
      const tasksChanged = !same(
        next.steps.map((s) => s.task_id),
        b.steps.map((s) => s.task_id),
      );
      if (tasksChanged) void refreshLinked();
      return next;
    },
  });
  const { draft, base, errors, conflict, change, flush, resolve, draftRef, baseRef } = autosave;
  const save = autosave.state;
  const editable = canEdit && base.status === "in_progress";

  const changeStep = (i: number, patch: Partial<ExerciseStepRow>, now = false) =>
    change({ steps: draftRef.current.steps.map((s, j) => (j === i ? { ...s, ...patch } : s)) }, now);

  const complete = async () => {
    setCompleting(true);
    const ok = await flush();
    if (!ok) {
      setCompleting(false);
      return;
    }
    try {
      const res = await mapApi.completeExercise(mapId, initial.id, {
        outcome: draftRef.current.outcome ?? "",
        finding: draftRef.current.finding,
        revision: baseRef.current.revision,
      });
      autosave.commit(res.exercise);
      setCompleted({ layers: res.layers, mapVersion: res.map.version, newDraft: res.map.new_draft });
      autosave.setErrors({});
      autosave.setState({ kind: "saved", at: new Date().toISOString() });
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) autosave.setErrors(fieldErrors(err.details));
      autosave.setState({
        kind: err instanceof ApiError && err.status === 409 ? "conflict" : "invalid",
        message: err instanceof Error ? err.message : String(err),
      });
    } finally {
      setCompleting(false);
    }
  };

  // The "retrieve the result and export" step: the server builds, verifies and records the linked task's bundle.
  const exportStep = async () => {
    setExporting(true);
    setExportFailure(null);
    const ok = await flush();
    if (!ok) {
      setExporting(false);
      return;
    }
    try {
      const res = await mapApi.exportExerciseStep(mapId, initial.id);
      autosave.commit(res.exercise);
      setExportFailure(res.first_failure ? `${res.first_failure.check}: ${res.first_failure.message}` : null);
      autosave.setErrors({});
      autosave.setState({ kind: "saved", at: new Date().toISOString() });
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) autosave.setErrors(fieldErrors(err.details));
      autosave.setState({
        kind: err instanceof ApiError && err.status === 409 ? "conflict" : "invalid",
        message: err instanceof Error ? err.message : String(err),
      });
    } finally {
      setExporting(false);
    }
  };

  const shown = editable ? draft : draftOf(base);
  const point = shown.interruption_point;

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-xs text-neutral-700">
            <Link href="/maps" className="underline">
              Custody maps
            </Link>{" "}
            /{" "}
            <Link href={`/maps/${mapId}`} className="underline">
              {initial.map.title}
            </Link>{" "}
            / exercise
          </p>
          <h1 className="text-xl font-semibold">
            Interruption exercise:{" "}
            <code className="font-mono text-lg" data-testid="exercise-point">
              {point}
            </code>
          </h1>
          <div className="mt-1 flex flex-wrap items-center gap-2 text-xs text-neutral-700">
            <OutcomeBadge value={base.status === "completed" ? base.outcome : null} />
            <span>started by {base.created_by}</span>
            <Time iso={base.created_at} />
            {base.completed_at ? (
              <span>
                completed <Time iso={base.completed_at} /> into map v{base.completed_map_version}
              </span>
            ) : null}
            {editable ? <SaveStatus state={save} testId="exercise-save-state" /> : null}
          </div>
        </div>
      </div>
      {!canEdit ? (
        <p
          className="rounded-md border border-neutral-300 bg-neutral-50 px-3 py-2 text-sm text-neutral-800"
          data-testid="read-only-note"
        >
          Your role ({role}) can read exercises; owners and admins record them.
        </p>
      ) : null}
      {"message" in save && save.message && !conflict ? (
        <p
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="exercise-error"
        >
          {save.message}
        </p>
      ) : null}
      {conflict ? <ExerciseConflict current={conflict.current} yours={conflict.yours} onResolve={resolve} /> : null}
      {completed ? (
        <CompletedPanel
          mapId={mapId}
          layers={completed.layers}
          mapVersion={completed.mapVersion}
          newDraft={completed.newDraft}
        />
      ) : null}

      <RunForReal
        point={point}
        recordsLookup={recordsLookup}
        exerciseId={initial.id}
        editable={editable}
        onLink={(taskId) => changeStep(2, { task_id: taskId }, true)}
      />

      <section aria-labelledby="covered-h" className="rounded-lg border border-neutral-200 bg-white p-3">
        <h2 id="covered-h" className="text-sm font-semibold">
          Layers covered
        </h2>
        <p className="text-xs text-neutral-700">
          Completing the exercise sets a covered layer&apos;s verification on the map, with a link back here, only when
          the steps that test it passed with evidence of their own.
        </p>
        <PointLayers point={point} covered={shown.layers} />
        {editable ? (
          <div className="mt-2 grid gap-1 sm:grid-cols-2 lg:grid-cols-4">
            {MAP_LAYERS.map((l) => (
              <label key={l} className="flex items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={draft.layers.includes(l)}
                  onChange={(e) =>
                    change({
                      layers: e.target.checked
                        ? MAP_LAYERS.filter((x) => x === l || draft.layers.includes(x))
                        : draft.layers.filter((x) => x !== l),
                    })
                  }
                />
                {LAYER_GUIDE[l].label}
              </label>
            ))}
          </div>
        ) : (
          <p className="mt-1 text-sm">{shown.layers.map((l) => LAYER_GUIDE[l].label).join(", ") || "none"}</p>
        )}
        {errors.layers ? <FieldError text={errors.layers} /> : null}
        <LayerResults draft={shown} linked={linked} completed={base.status === "completed"} />
      </section>

      <ol className="space-y-3" aria-label="Steps">
        {shown.steps.map((s, i) => (
          <StepCard
            key={s.step}
            index={i}
            step={s}
            editable={editable}
            linked={linked}
            errors={errors}
            onChange={(patch, now) => changeStep(i, patch, now)}
            exportPanel={
              s.step === "retrieve_and_export" ? (
                <ExportStepPanel
                  step={s}
                  recorded={base.steps[i] ?? s}
                  editable={editable}
                  busy={exporting}
                  failure={exportFailure}
                  onExport={() => void exportStep()}
                />
              ) : null
            }
          />
        ))}
      </ol>
      {errors.steps ? (
        <p className="text-sm text-red-800" role="alert" data-testid="steps-error">
          {errors.steps}
        </p>
      ) : null}
      <LinkedTasks tasks={linked} />

      <section
        aria-labelledby="outcome-h"
        className="rounded-lg border border-neutral-200 bg-white p-3"
        data-testid="outcome-section"
      >
        <h2 id="outcome-h" className="text-sm font-semibold">
          Outcome
        </h2>
        {editable ? (
          <>
            <div className="mt-2 grid gap-2 sm:grid-cols-2" role="radiogroup" aria-label="Outcome">
              {EXERCISE_OUTCOMES.map((o) => (
                <label key={o} className="flex items-start gap-2 rounded-md border border-neutral-200 p-2 text-sm">
                  <input
                    type="radio"
                    name="outcome"
                    className="mt-1"
                    checked={draft.outcome === o}
                    onChange={() => change({ outcome: o as ExerciseOutcome })}
                  />
                  <span>
                    <span className="font-medium">
                      <span aria-hidden="true">{OUTCOME_GUIDE[o].icon} </span>
                      {OUTCOME_GUIDE[o].word}
                    </span>
                    <span className="block text-xs text-neutral-700">
                      {OUTCOME_GUIDE[o].meaning}{" "}
                      {o === "unsafe"
                        ? "Layers whose steps were done become failed."
                        : "Layers whose steps passed with evidence become verified."}
                    </span>
                  </span>
                </label>
              ))}
            </div>
            {errors.outcome ? <FieldError text={errors.outcome} /> : null}
            <TextAreaField
              id="finding"
              label="Finding"
              className="mt-2"
              areaClassName={`${inputClass} min-h-[5rem]`}
              value={draft.finding}
              error={errors.finding}
              placeholder="What happened at the interruption point, and what it means for the layers covered"
              onChange={(v) => change({ finding: v })}
            />
            <button
              type="button"
              className="mt-2 rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60"
              disabled={completing || Boolean(conflict)}
              onClick={() => void complete()}
            >
              {completing ? "Completing…" : "Complete the exercise"}
            </button>
            <p className="mt-1 text-xs text-neutral-700">
              A completed exercise is kept as recorded; test again with a new one.
            </p>
          </>
        ) : base.outcome ? (
          <div className="mt-1 text-sm">
            <OutcomeBadge value={base.outcome} /> <span className="whitespace-pre-wrap">{base.finding}</span>
          </div>
        ) : (
          <p className="mt-1 text-sm text-neutral-700">Not completed yet.</p>
        )}
      </section>
    </div>
  );
}

/** Which layers the chosen point can test (a demo runtime point), and covered layers it cannot. */
function PointLayers({ point, covered }: { point: string; covered: readonly MapLayer[] }) {
  if (!isCrashPoint(point)) {
    return (
      <p className="mt-1 text-xs text-neutral-700" data-testid="point-layers">
        Cover only the layers your interruption at <strong>{point}</strong> can test.
      </p>
    );
  }
  const { tests, cannot } = POINT_LAYERS[point];
  const outside = covered.filter((l) => !tests.includes(l));
  return (
    <div className="mt-1 text-xs text-neutral-800" data-testid="point-layers">
      <p>
        An interruption at <code className="font-mono">{point}</code> can test:{" "}
        {tests.map((l) => LAYER_GUIDE[l].label).join(", ")}.
      </p>
      <ul className="mt-0.5 list-disc pl-5 text-neutral-700">
        {(Object.entries(cannot) as Array<[MapLayer, string]>).map(([l, why]) => (
          <li key={l}>
            Not {LAYER_GUIDE[l].label}: {why}.
          </li>
        ))}
      </ul>
      {outside.length ? (
        <p className="mt-1 text-amber-900" role="note" data-testid="point-layers-outside">
          ⚠ Covered but not testable at this point: {outside.map((l) => LAYER_GUIDE[l].label).join(", ")}. Completing
          the exercise will leave them as they are unless their steps pass with evidence.
        </p>
      ) : null}
    </div>
  );
}

const RESULT_WORD = {
  verified: { icon: "✔", word: "verified" },
  failed: { icon: "✕", word: "failed" },
  left: { icon: "○", word: "left as it is" },
} as const;

/** What completing sets on each covered layer, and why (lib/domain/exercises/guide.ts layerResults, as the server). */
function LayerResults({
  draft,
  linked,
  completed,
}: {
  draft: Pick<ExerciseJson, "layers" | "steps" | "outcome">;
  linked: readonly LinkedTaskFacts[];
  completed: boolean;
}) {
  if (!draft.layers.length) return null;
  const answers = new Map(linked.flatMap((t) => t.revocation_checks.map((c) => [c.event_id, c.outcome] as const)));
  const results = layerResults(draft, (id) => answers.get(id));
  return (
    <div className="mt-2" data-testid="layer-results">
      <p className="text-xs font-semibold">{completed ? "What completing set" : "What completing would set"}</p>
      <ul className="mt-1 space-y-0.5 text-xs">
        {results.map((r) => {
          const w = RESULT_WORD[r.verification ?? "left"];
          return (
            <li key={r.layer} data-testid="layer-result" data-layer={r.layer} data-result={r.verification ?? "left"}>
              <span aria-hidden="true">{w.icon} </span>
              <span className="font-medium">{LAYER_GUIDE[r.layer].label}</span>: {w.word} — {r.why}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** The commands that run the demo runtime to the chosen point with a disposable task id, and a button to link that task. */
function RunForReal({
  point,
  recordsLookup,
  exerciseId,
  editable,
  onLink,
}: {
  point: string;
  recordsLookup: string | null;
  exerciseId: string;
  editable: boolean;
  onLink: (taskId: string) => void;
}) {
  const origin = useSyncExternalStore(
    () => () => {},
    () => window.location.origin,
    () => "http://localhost:3000",
  );
  if (!isCrashPoint(point)) {
    return (
      <section aria-labelledby="run-h" className="rounded-lg border border-neutral-200 bg-white p-3 text-sm">
        <h2 id="run-h" className="text-sm font-semibold">
          Run it for real
        </h2>
        <p className="mt-1 text-neutral-800">
          Interrupt your own disposable run at <strong>{point}</strong>, then link its task to the steps below. The demo
          runtime can do it at after_intent, after_external_write, after_receipt, during_report or after_checkpoint.
        </p>
      </section>
    );
  }
  const taskId = drillTaskId(point, exerciseId);
  const demo = `DEMO_INTERRUPT_AT=${point} DEMO_INTERRUPT_TASK_ID=${taskId} npm run demo`;
  // The runtime must write to the records service the workspace's lookup asks; else the lookup cannot see its writes.
  const recordsUrl = recordsLookup ? recordsUrlOfLookup(recordsLookup) : null;
  const runtime = `${recordsUrl ? `RECORDS_URL=${recordsUrl} ` : ""}CUSTODY_URL=${origin} CUSTODY_API_KEY=<runtime key> npm run demo:runtime -- --interrupt-at ${point} --task-id ${taskId}`;
  return (
    <section
      aria-labelledby="run-h"
      className="rounded-lg border border-sky-200 bg-sky-50 p-3 text-sm text-sky-950"
      data-testid="run-for-real"
    >
      <h2 id="run-h" className="text-sm font-semibold">
        Run it for real
      </h2>
      <p className="mt-1">
        The demo runtime loses its sandbox at <code className="font-mono">{point}</code> (
        {POINT_GUIDE[point].transition}). {POINT_GUIDE[point].knows} It runs as its own task,{" "}
        <code className="font-mono">{taskId}</code>, then waits at the resume gate for you.
      </p>
      <p className="mt-2 text-xs font-medium">With the demo (stop a running one first; it keeps its data):</p>
      <div className="mt-1 flex items-start gap-2">
        <code
          className="block flex-1 break-all rounded bg-white px-2 py-1 font-mono text-xs text-neutral-900"
          data-testid="run-command"
        >
          {demo}
        </code>
        <CopyButton value={demo} />
      </div>
      <p className="mt-2 text-xs font-medium">Or against a running server, with a runtime API key from Settings:</p>
      <div className="mt-1 flex items-start gap-2">
        <code className="block flex-1 break-all rounded bg-white px-2 py-1 font-mono text-xs text-neutral-900">
          {runtime}
        </code>
        <CopyButton value={runtime} />
      </div>
      {recordsUrl ? (
        <p className="mt-1 text-xs" data-testid="run-lookup-note">
          It writes to the records service this workspace&apos;s lookup of{" "}
          <code className="font-mono">{RECORDS_TOOL}</code> asks (
          <code className="break-all font-mono">{recordsLookup}</code>, Settings → Lookups), so “Look up by idempotency
          key” sees its writes.
        </p>
      ) : (
        <p
          className="mt-1 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-950"
          role="note"
          data-testid="run-lookup-note"
        >
          ⚠{" "}
          {recordsLookup ? (
            <>
              This workspace&apos;s lookup of <code className="font-mono">{RECORDS_TOOL}</code> (
              <code className="break-all font-mono">{recordsLookup}</code>) is not a records service&apos;s{" "}
              <code className="font-mono">/lookup</code>
            </>
          ) : (
            <>
              This workspace has no lookup for <code className="font-mono">{RECORDS_TOOL}</code>
            </>
          )}
          : this command starts its own records service, which “Look up by idempotency key” cannot see — it would answer
          “no write” for a write that happened. Do not record “not applied” from that answer; register the records
          service under Settings → Lookups first (or add <code className="font-mono">RECORDS_URL=…</code> for the
          service your lookup asks).
        </p>
      )}
      {editable ? (
        <button type="button" className={`${smallButtonClass} mt-2`} onClick={() => onLink(taskId)}>
          Link {taskId} to “Interrupt execution”
        </button>
      ) : null}
    </section>
  );
}

function StepCard({
  index,
  step,
  editable,
  linked,
  errors,
  onChange,
  exportPanel,
}: {
  index: number;
  step: ExerciseStepRow;
  editable: boolean;
  linked: ExerciseView["linked_tasks"];
  errors: Record<string, string>;
  onChange: (patch: Partial<ExerciseStepRow>, now?: boolean) => void;
  exportPanel?: ReactNode;
}) {
  const guide = STEP_GUIDE[step.step];
  const idp = `step-${step.step}`;
  const e = (f: string) => errors[`steps.${index}.${f}`];
  const facts = linked.filter((t) => t.task_id === step.task_id);
  const suggestions = suggestionsFor(step.step, step.task_id ? facts : linked);
  return (
    <li className="rounded-lg border border-neutral-200 bg-white p-3" data-testid={idp} aria-labelledby={`${idp}-h`}>
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div className="min-w-0">
          <h3 id={`${idp}-h`} className="text-sm font-semibold">
            <span className="text-neutral-600">{index + 1} ·</span> {guide.label}
          </h3>
          <p className="text-xs text-neutral-700">{guide.hint}</p>
        </div>
        <StepStatusBadge value={step.status} />
      </div>
      {editable ? (
        <div className="mt-2 grid gap-3 md:grid-cols-2">
          <div className="space-y-2">
            <label className={`block ${labelClass}`} htmlFor={`${idp}-status`}>
              Status
              <select
                id={`${idp}-status`}
                className={inputClass}
                value={step.status}
                aria-invalid={Boolean(e("status"))}
                onChange={(ev) => onChange({ status: ev.target.value as StepStatus })}
              >
                {(Object.keys(STEP_STATUS_WORD) as StepStatus[]).map((s) => (
                  <option key={s} value={s}>
                    {STEP_STATUS_WORD[s].icon} {STEP_STATUS_WORD[s].word}
                  </option>
                ))}
              </select>
            </label>
            {e("status") ? <FieldError text={e("status")!} /> : null}
            <TaskPicker
              idp={idp}
              value={step.task_id}
              error={e("task_id")}
              onPick={(t) => onChange({ task_id: t, ...(t !== step.task_id ? { event_id: null } : {}) }, true)}
            />
            <EvidenceEvent step={step} linked={linked} onUnlink={() => onChange({ event_id: null }, true)} />
            {step.step === "test_revocation" && !step.event_id ? (
              <p className="text-xs text-neutral-700" data-testid="revocation-link-needed">
                Link the revocation check this step relied on (a “Test revocation” check on the task&apos;s Egress and
                vault tab, offered under the suggestions): without it, Credentials is not verified.
              </p>
            ) : null}
            {e("event_id") ? <FieldError text={e("event_id")!} /> : null}
            <label className={`block ${labelClass}`} htmlFor={`${idp}-digest`}>
              Artifact digest (sha256, optional)
              <input
                id={`${idp}-digest`}
                className={`${inputClass} font-mono`}
                value={step.artifact_digest ?? ""}
                aria-invalid={Boolean(e("artifact_digest"))}
                onChange={(ev) => onChange({ artifact_digest: ev.target.value.trim() ? ev.target.value : null })}
              />
            </label>
            {e("artifact_digest") ? <FieldError text={e("artifact_digest")!} /> : null}
          </div>
          <div className="space-y-2">
            <label className={`block ${labelClass}`} htmlFor={`${idp}-note`}>
              Note
              <textarea
                id={`${idp}-note`}
                className={`${inputClass} min-h-[5.5rem]`}
                value={step.note}
                aria-invalid={Boolean(e("note"))}
                onChange={(ev) => onChange({ note: ev.target.value })}
              />
            </label>
            {e("note") ? <FieldError text={e("note")!} /> : null}
            {suggestions.length ? (
              <div className="rounded-md border border-neutral-200 bg-neutral-50 p-2" data-testid="suggestions">
                <p className="text-xs font-semibold text-neutral-900">Suggested evidence from the linked task</p>
                <ul className="mt-1 space-y-1">
                  {suggestions.map((sg) => (
                    <li key={sg.key} className="flex items-start justify-between gap-2 text-xs text-neutral-800">
                      <span className="min-w-0 break-words">{sg.text}</span>
                      <button
                        type="button"
                        className={smallButtonClass}
                        onClick={() =>
                          onChange(
                            {
                              note: step.note.includes(sg.apply.note ?? "")
                                ? step.note
                                : [step.note.trim(), sg.apply.note].filter(Boolean).join("\n"),
                              ...(sg.apply.artifact_digest ? { artifact_digest: sg.apply.artifact_digest } : {}),
                              ...(!step.task_id && sg.apply.task_id ? { task_id: sg.apply.task_id } : {}),
                              ...(sg.apply.event_id ? { event_id: sg.apply.event_id } : {}),
                            },
                            Boolean(sg.apply.event_id),
                          )
                        }
                        aria-label={sg.apply.event_id ? `Link this check as evidence: ${sg.text}` : undefined}
                      >
                        {sg.apply.event_id ? (step.event_id === sg.apply.event_id ? "Linked" : "Link") : "Use"}
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
          </div>
        </div>
      ) : (
        <dl className="mt-2 grid gap-2 text-sm md:grid-cols-3">
          <div>
            <dt className="text-xs font-semibold">Task</dt>
            <dd>
              {step.task_id ? (
                <Link
                  className="font-mono text-xs text-sky-800 underline"
                  href={`/tasks/${encodeURIComponent(step.task_id)}`}
                >
                  {step.task_id}
                </Link>
              ) : (
                "—"
              )}
            </dd>
          </div>
          <div>
            <dt className="text-xs font-semibold">Artifact digest</dt>
            <dd className="break-all font-mono text-xs">{step.artifact_digest ?? "—"}</dd>
          </div>
          <div>
            <dt className="text-xs font-semibold">Note</dt>
            <dd className="whitespace-pre-wrap break-words">{step.note || "—"}</dd>
          </div>
          {step.event_id ? (
            <div className="md:col-span-3">
              <dt className="text-xs font-semibold">Evidence event</dt>
              <dd>
                <EvidenceEvent step={step} linked={linked} />
              </dd>
            </div>
          ) : null}
        </dl>
      )}
      {exportPanel}
    </li>
  );
}

/**
 * The export step's bundle (decision 0038): the sha256 and verifier result the server recorded, and — while the
 * exercise is in progress — a button that has the server build, verify and record the linked task's bundle.
 */
function ExportStepPanel({
  step,
  recorded,
  editable,
  busy,
  failure,
  onExport,
}: {
  step: ExerciseStepRow;
  recorded: ExerciseStepRow;
  editable: boolean;
  busy: boolean;
  failure: string | null;
  onExport: () => void;
}) {
  const digest = recorded.bundle_digest ?? null;
  return (
    <div
      className="mt-3 rounded-md border border-neutral-200 bg-neutral-50 p-2 text-sm"
      data-testid="export-step-bundle"
    >
      <p className="text-xs font-semibold text-neutral-900">Evidence bundle</p>
      {digest ? (
        <>
          <p className="mt-1 flex flex-wrap items-center gap-2 text-xs">
            <span>sha256</span>
            <code className="break-all font-mono" data-testid="export-step-digest">
              {digest}
            </code>
            <CopyButton value={digest} label="Copy bundle digest" />
          </p>
          <p className="mt-1 text-xs text-neutral-800" data-testid="export-step-result">
            {recorded.bundle_verified
              ? "✔ passed offline verification — link this digest on the map's Export layer"
              : `✕ failed verification${failure ? ` (${failure})` : ""}`}
          </p>
        </>
      ) : (
        <p className="mt-1 text-xs text-neutral-700">No bundle exported yet.</p>
      )}
      {editable ? (
        <div className="mt-2">
          <button
            type="button"
            className={smallButtonClass}
            disabled={busy || !step.task_id}
            onClick={onExport}
            data-testid="export-step-button"
          >
            {busy ? "Exporting and verifying…" : digest ? "Export and verify again" : "Export and verify the bundle"}
          </button>
          {!step.task_id ? (
            <p className="mt-1 text-xs text-neutral-700">Link the task whose result to export first.</p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/**
 * The event a step keeps as evidence, linked to it on the task's timeline (`/tasks/{id}?event=…`); a "Test revocation"
 * check is described by its answer. `onUnlink` (editing) removes the link, keeping the task.
 */
function EvidenceEvent({
  step,
  linked,
  onUnlink,
}: {
  step: ExerciseStepRow;
  linked: readonly LinkedTaskFacts[];
  onUnlink?: () => void;
}) {
  if (!step.event_id || !step.task_id) return null;
  const check = linked
    .find((t) => t.task_id === step.task_id)
    ?.revocation_checks.find((c) => c.event_id === step.event_id);
  return (
    <p className="text-xs text-neutral-800" data-testid="step-event">
      {onUnlink ? <span className="font-medium">Evidence event </span> : null}
      <Link
        href={`/tasks/${encodeURIComponent(step.task_id)}?event=${encodeURIComponent(step.event_id)}`}
        className="break-words text-sky-800 underline"
        data-testid="step-event-link"
      >
        {check ? (
          <>
            <span aria-hidden="true">{REVOCATION_ANSWER[check.outcome].icon} </span>
            {revocationCheckText(check)}
          </>
        ) : (
          <span className="font-mono">{step.event_id}</span>
        )}
      </Link>{" "}
      <span className="text-neutral-600">(on the task&apos;s timeline)</span>
      {onUnlink ? (
        <button type="button" className={`${smallButtonClass} ml-2`} onClick={onUnlink}>
          Unlink event
        </button>
      ) : null}
    </p>
  );
}

/** A task of this workspace, found by search (part of its id, an idempotency key, a sandbox id or a host). */
function TaskPicker({
  idp,
  value,
  error,
  onPick,
}: {
  idp: string;
  value: string | null;
  error?: string;
  onPick: (taskId: string | null) => void;
}) {
  const [q, setQ] = useState("");
  const [debounced, setDebounced] = useState("");
  useEffect(() => {
    const t = setTimeout(() => setDebounced(q.trim()), 250);
    return () => clearTimeout(t);
  }, [q]);
  const results = useQuery({
    queryKey: mapKeys.taskSearch(debounced),
    queryFn: () => mapApi.searchTasks(debounced),
    enabled: debounced.length > 0,
  });
  if (value) {
    return (
      <div className="text-xs">
        <span className="font-medium text-neutral-800">Task </span>
        <Link
          href={`/tasks/${encodeURIComponent(value)}`}
          className="font-mono text-sky-800 underline"
          data-testid="linked-task"
        >
          {value}
        </Link>
        <button type="button" className={`${smallButtonClass} ml-2`} onClick={() => onPick(null)}>
          Unlink
        </button>
        {error ? <FieldError text={error} className="mt-1" /> : null}
      </div>
    );
  }
  return (
    <div>
      <label className={`block ${labelClass}`} htmlFor={`${idp}-task`}>
        Find a task of this workspace
        <input
          id={`${idp}-task`}
          className={inputClass}
          value={q}
          onChange={(e) => setQ(e.target.value)}
          placeholder="task id, idempotency key, sandbox id or host"
          autoComplete="off"
        />
      </label>
      {error ? <FieldError text={error} /> : null}
      {debounced ? (
        <ul
          className="mt-1 max-h-40 overflow-auto rounded-md border border-neutral-200 text-xs"
          aria-label="Matching tasks"
        >
          {results.isPending ? (
            <li className="px-2 py-1 text-neutral-700">Searching…</li>
          ) : results.isError ? (
            <li className="px-2 py-1 text-red-800">{results.error.message}</li>
          ) : results.data.length === 0 ? (
            <li className="px-2 py-1 text-neutral-700">No task matches “{debounced}”.</li>
          ) : (
            results.data.map((t) => (
              <li key={t.task_id}>
                <button
                  type="button"
                  className="w-full px-2 py-1 text-left hover:bg-neutral-100 focus:bg-neutral-100"
                  onClick={() => onPick(t.task_id)}
                >
                  <span className="font-mono">{t.task_id}</span>{" "}
                  <span className="text-neutral-700">
                    · {t.phase}
                    {t.unknown_side_effects ? ` · ${t.unknown_side_effects} unknown` : ""}
                  </span>
                </button>
              </li>
            ))
          )}
        </ul>
      ) : null}
    </div>
  );
}

/** What the product knows now about each task the steps link. */
function LinkedTasks({ tasks }: { tasks: ExerciseView["linked_tasks"] }) {
  return (
    <section
      aria-labelledby="linked-h"
      className="rounded-lg border border-neutral-200 bg-white p-3"
      data-testid="linked-tasks"
    >
      <h2 id="linked-h" className="text-sm font-semibold">
        What the product knows about the linked tasks
      </h2>
      {tasks.length === 0 ? (
        <p className="mt-1 text-sm text-neutral-700">
          No task linked yet. Find the disposable run&apos;s task in a step above; its checkpoints, unknown writes and
          gate verdict then appear here and as suggestions.
        </p>
      ) : (
        <ul className="mt-2 space-y-2">
          {tasks.map((t) => {
            const latest = t.checkpoints[0];
            return (
              <li
                key={t.task_id}
                className="flex flex-wrap items-center gap-x-4 gap-y-1 text-sm"
                data-testid="linked-task-facts"
              >
                <Link href={`/tasks/${encodeURIComponent(t.task_id)}`} className="font-mono text-sky-800 underline">
                  {t.task_id}
                </Link>
                <span>
                  phase {t.phase} · attempt {t.current_attempt}
                </span>
                <span>
                  {latest
                    ? `checkpoint v${latest.version} (${latest.signature_valid ? "✔ signature verified" : "✕ signature does not verify"})`
                    : "no checkpoint"}
                </span>
                <span>
                  {t.unknown_side_effects.length
                    ? `? unknown: ${t.unknown_side_effects.map((e) => e.name).join(", ")}`
                    : "no unknown write"}
                </span>
                <span>{t.artifacts.length} artifacts</span>
                {t.revocation_checks[0] ? (
                  <span>
                    revocation check: {t.revocation_checks[0].credential_ref}{" "}
                    {REVOCATION_ANSWER[t.revocation_checks[0].outcome].word}
                  </span>
                ) : null}
                <span className="inline-flex items-center gap-1">
                  gate <VerdictBadge verdict={t.gate.verdict} reasons={t.gate.reasons.length} />
                </span>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

function ExerciseConflict({
  current,
  yours,
  onResolve,
}: {
  current: ExerciseJson;
  yours: Draft;
  onResolve: (keep: "theirs" | "mine") => void;
}) {
  const rows: Array<[string, string, string]> = [];
  if (current.interruption_point !== yours.interruption_point)
    rows.push(["Interruption point", current.interruption_point, yours.interruption_point]);
  if (!same(current.layers, yours.layers)) rows.push(["Layers", current.layers.join(", "), yours.layers.join(", ")]);
  current.steps.forEach((s, i) => {
    const y = yours.steps[i];
    if (y && !same(s, y)) {
      const txt = (x: ExerciseStepRow) =>
        [
          STEP_STATUS_WORD[x.status].word,
          x.task_id ? `task ${x.task_id}` : "",
          x.artifact_digest ?? "",
          x.event_id ? `event ${x.event_id}` : "",
          x.note,
        ]
          .filter(Boolean)
          .join(" · ");
      rows.push([STEP_GUIDE[s.step].label, txt(s), txt(y)]);
    }
  });
  if (current.outcome !== yours.outcome) rows.push(["Outcome", current.outcome ?? "—", yours.outcome ?? "—"]);
  if (current.finding !== yours.finding) rows.push(["Finding", current.finding, yours.finding]);
  return (
    <ConflictNotice by={current.updated_by} at={current.updated_at} what="exercise" onResolve={onResolve}>
      <table className="mt-2 w-full text-left text-xs">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Their version</th>
            <th scope="col">Your version</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([f, a, b]) => (
            <tr key={f} className="border-t border-amber-200 align-top">
              <th scope="row" className="pr-2 font-medium">
                {f}
              </th>
              <td className="whitespace-pre-wrap pr-2">{a || "—"}</td>
              <td className="whitespace-pre-wrap">{b || "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ConflictNotice>
  );
}

function CompletedPanel({
  mapId,
  layers,
  mapVersion,
  newDraft,
}: {
  mapId: string;
  layers: LayerRow[];
  mapVersion: number;
  newDraft: boolean;
}) {
  return (
    <section
      role="status"
      className="rounded-lg border border-emerald-300 bg-emerald-50 p-3 text-sm text-emerald-950"
      data-testid="completed"
    >
      <p className="font-semibold">
        <span aria-hidden="true">✔ </span>Exercise completed. The map
        {newDraft ? ` starts draft v${mapVersion}` : ` (v${mapVersion})`} now shows:
      </p>
      <ul className="mt-1 space-y-1">
        {layers.map((l) => (
          <li key={l.layer} className="flex flex-wrap items-center gap-2">
            <Link href={`/maps/${mapId}#layer-${l.layer}`} className="underline">
              {LAYER_GUIDE[l.layer as MapLayer].label}
            </Link>
            <VerificationBadge value={l.verification} />
            {l.verification === "failed" ? <span>— suggested decision: constrain</span> : null}
          </li>
        ))}
      </ul>
      <Link
        href={`/maps/${mapId}`}
        className="mt-2 inline-block rounded-md bg-neutral-900 px-3 py-1 text-sm font-medium text-white"
      >
        Back to the map
      </Link>
    </section>
  );
}
