"use client";

/**
 * One row of the custody-map worksheet. For owners and admins every field is an input that autosaves (about a
 * second after the last change) with `PATCH /api/v1/maps/{id}/layers/{layer}` and the revision the row was based
 * on; the row says whether it is saved. A refused value shows the server's message under its field. A 409 (someone
 * else saved the row first) shows both versions side by side; the person chooses — nothing is overwritten
 * silently. For other roles the row is read-only text.
 */
import Link from "next/link";
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "@/lib/client/api";
import { fieldErrors, mapApi, type LayerSaveResult } from "@/lib/client/maps";
import type {
  Custodian,
  Decision,
  EvidenceKind,
  ExerciseListItem,
  LayerConflictDetails,
  LayerRow,
  Verification,
  VerificationEvidence,
} from "@/lib/contract/maps";
import { custodiansText, evidenceText, fieldText, COMPARED_FIELDS, type ComparedField } from "@/lib/domain/maps/diff";
import { LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { CONSTRAINT_PRESETS, joinEvidenceRequest, splitEvidenceRequest } from "@/lib/domain/maps/names";
import { DecisionBadge, VerificationBadge } from "./badges";

type Fields = Omit<LayerRow, "layer" | "revision">;

export type SaveState =
  | { kind: "saved"; at: string | null }
  | { kind: "dirty" }
  | { kind: "saving" }
  | { kind: "invalid"; message: string }
  | { kind: "conflict" }
  | { kind: "error"; message: string };

const AUTOSAVE_MS = 900;

const FIELD_LABEL: Record<ComparedField, string> = {
  custodians: "Custodians",
  handoff: "Handoff",
  evidence: "Evidence to retain",
  recovery_path: "Recovery or export path",
  acceptance_question: "Acceptance question",
  verification: "Verification",
  verification_evidence: "Verification evidence",
  decision: "Decision",
  decision_note: "Decision note",
};

const input =
  "w-full rounded-md border border-neutral-400 bg-white px-2 py-1.5 text-sm aria-[invalid=true]:border-red-600";
const area = `${input} min-h-[4.5rem] resize-y`;
const small =
  "rounded-md border border-neutral-400 bg-white px-2 py-1 text-xs font-medium text-neutral-800 hover:bg-neutral-100";

function fieldsOf(row: LayerRow): Fields {
  const { layer: _l, revision: _r, ...f } = row;
  return f;
}

/** The fields as they would be sent: strings trimmed, blank custodian lines and blank evidence links left out. */
function normalize(f: Fields): Fields {
  const ev = f.verification_evidence;
  const ref = ev?.ref.trim() ?? "";
  return {
    ...f,
    custodians: f.custodians
      .filter((c) => c.name.trim() || c.organization.trim())
      .map((c) => ({ name: c.name.trim(), organization: c.organization.trim() })),
    handoff: f.handoff.trim(),
    evidence: f.evidence.trim(),
    recovery_path: f.recovery_path.trim(),
    acceptance_question: f.acceptance_question.trim(),
    verification_evidence:
      ev && ref ? { kind: ev.kind, ref, ...(ev.note?.trim() ? { note: ev.note.trim() } : {}) } : null,
    decision_note: f.decision_note.trim(),
  };
}

/** The fields of `next` that differ from `base` (both normalized). */
function changedFields(next: Fields, base: Fields): Partial<Fields> {
  const a = normalize(next);
  const b = normalize(base);
  const out: Partial<Fields> = {};
  for (const k of Object.keys(a) as Array<keyof Fields>) {
    if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) (out as Record<string, unknown>)[k] = a[k];
  }
  return out;
}

export function LayerEditor({
  mapId,
  initial,
  exercises,
  canEdit,
  onSaved,
  onState,
}: {
  mapId: string;
  initial: LayerRow;
  exercises: ExerciseListItem[];
  canEdit: boolean;
  onSaved: (res: LayerSaveResult) => void;
  onState: (layer: LayerRow["layer"], state: SaveState) => void;
}) {
  const layer = initial.layer;
  const guide = LAYER_GUIDE[layer];
  const [draft, setDraft] = useState<Fields>(() => fieldsOf(initial));
  const [base, setBase] = useState<LayerRow>(initial);
  const [state, setStateRaw] = useState<SaveState>({ kind: "saved", at: null });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState<LayerConflictDetails | null>(null);
  const [request, setRequest] = useState(
    () => splitEvidenceRequest(initial.decision_note) ?? { what: initial.decision_note, whom: "" },
  );
  const draftRef = useRef(draft);
  const baseRef = useRef(base);
  const conflictRef = useRef(conflict);
  const saving = useRef(false);
  const again = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const setState = useCallback(
    (s: SaveState) => {
      setStateRaw(s);
      onState(layer, s);
    },
    [layer, onState],
  );

  const saveRef = useRef<() => Promise<void>>(async () => {});
  const schedule = (ms: number) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void saveRef.current(), ms);
  };

  const save = async () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (conflictRef.current) return;
    if (saving.current) {
      again.current = true;
      return;
    }
    const b = baseRef.current;
    const patch = changedFields(draftRef.current, fieldsOf(b));
    if (Object.keys(patch).length === 0) {
      setErrors({});
      setState({ kind: "saved", at: null });
      return;
    }
    saving.current = true;
    setState({ kind: "saving" });
    try {
      const res = await mapApi.saveLayer(mapId, layer, { ...patch, revision: b.revision });
      baseRef.current = res.row;
      setBase(res.row);
      setErrors({});
      onSaved(res);
      const stillDirty = Object.keys(changedFields(draftRef.current, fieldsOf(res.row))).length > 0;
      setState(stillDirty ? { kind: "dirty" } : { kind: "saved", at: new Date().toISOString() });
      if (stillDirty) again.current = true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.details) {
        const details = err.details as LayerConflictDetails;
        conflictRef.current = details;
        setConflict(details);
        setState({ kind: "conflict" });
      } else if (err instanceof ApiError && err.status === 422) {
        setErrors(fieldErrors(err.details));
        setState({ kind: "invalid", message: err.message });
      } else {
        setState({ kind: "error", message: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      saving.current = false;
      if (again.current) {
        again.current = false;
        schedule(AUTOSAVE_MS);
      }
    }
  };

  useEffect(() => {
    saveRef.current = save;
  });
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );

  const change = (patch: Partial<Fields>) => {
    const next = { ...draftRef.current, ...patch };
    draftRef.current = next;
    setDraft(next);
    if (conflictRef.current) return;
    setState({ kind: "dirty" });
    schedule(AUTOSAVE_MS);
  };

  /** Resolves a conflict: keep theirs (drop my change) or save mine on top of theirs (explicitly). */
  const resolve = (keep: "theirs" | "mine") => {
    const current = conflictRef.current?.current;
    if (!current) return;
    conflictRef.current = null;
    setConflict(null);
    baseRef.current = current;
    setBase(current);
    if (keep === "theirs") {
      const f = fieldsOf(current);
      draftRef.current = f;
      setDraft(f);
      setRequest(splitEvidenceRequest(f.decision_note) ?? { what: f.decision_note, whom: "" });
      setErrors({});
      setState({ kind: "saved", at: null });
    } else {
      void save();
    }
  };

  const position = MAP_LAYERS.indexOf(layer) + 1;
  const orgs = new Set(draft.custodians.map((c) => c.organization.trim().toLowerCase()).filter(Boolean));
  const err = (path: string) => errors[path];
  const shown = new Set<string>();
  const errFor = (path: string) => {
    shown.add(path);
    return errors[path];
  };
  const idp = `layer-${layer}`;

  return (
    <section
      id={idp}
      aria-labelledby={`${idp}-h`}
      className="rounded-lg border border-neutral-200 bg-white"
      data-testid={`layer-${layer}`}
      data-layer={layer}
      data-revision={base.revision}
    >
      <header className="flex flex-wrap items-start justify-between gap-2 border-b border-neutral-100 px-3 py-2">
        <div className="min-w-0">
          <h3 id={`${idp}-h`} className="text-sm font-semibold">
            <span className="text-neutral-600">{position} ·</span> {guide.label}{" "}
            <code className="ml-1 font-mono text-xs font-normal text-neutral-600">{layer}</code>
          </h3>
          <p className="text-xs text-neutral-700">{guide.covers}</p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <VerificationBadge value={base.verification} />
          <DecisionBadge value={base.decision} />
          {canEdit ? <SaveIndicator state={state} /> : null}
        </div>
      </header>

      {conflict ? <ConflictPanel details={conflict} mine={draft} onResolve={resolve} /> : null}
      {base.verification === "failed" && base.decision !== "constrain" ? (
        <div
          className="mx-3 mt-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900"
          data-testid="suggest-constrain"
        >
          <span aria-hidden="true">⚠ </span>
          Verification failed{base.verification_evidence ? ` (${evidenceText(base.verification_evidence)})` : ""}.
          Suggested decision: <strong>constrain</strong> — shorter runs, lower permissions or reversible effects until
          it passes.
          {canEdit ? (
            <button type="button" className={`${small} ml-2`} onClick={() => change({ decision: "constrain" })}>
              Constrain this layer
            </button>
          ) : null}
        </div>
      ) : null}

      {canEdit ? (
        <div className="grid gap-x-4 gap-y-3 p-3 md:grid-cols-2 xl:grid-cols-[1.3fr_1fr_1fr]">
          <fieldset className="min-w-0 space-y-1.5">
            <legend className="text-xs font-semibold text-neutral-900">Custodians</legend>
            <p className="text-xs text-neutral-700" id={`${idp}-cust-hint`}>
              {guide.custodiansHint} Name each team or service and its organization.
            </p>
            {draft.custodians.map((c, i) => (
              <CustodianInputs
                key={i}
                idp={`${idp}-custodian-${i}`}
                index={i}
                value={c}
                nameError={errFor(`custodians.${i}.name`)}
                orgError={errFor(`custodians.${i}.organization`)}
                rowError={errFor(`custodians.${i}`)}
                onChange={(v) => change({ custodians: draft.custodians.map((x, j) => (j === i ? v : x)) })}
                onRemove={() => change({ custodians: draft.custodians.filter((_, j) => j !== i) })}
              />
            ))}
            {err("custodians") ? <FieldError id={`${idp}-cust-err`} text={errFor("custodians")!} /> : null}
            <button
              type="button"
              className={small}
              onClick={() => change({ custodians: [...draft.custodians, { name: "", organization: "" }] })}
            >
              + Add custodian
            </button>
            <label className="block pt-1 text-xs font-semibold text-neutral-900" htmlFor={`${idp}-handoff`}>
              Handoff{orgs.size > 1 ? " (required: more than one organization)" : " between organizations"}
            </label>
            <textarea
              id={`${idp}-handoff`}
              className={area}
              value={draft.handoff}
              aria-invalid={Boolean(err("handoff"))}
              aria-describedby={err("handoff") ? `${idp}-handoff-err` : undefined}
              placeholder="Who hands what to whom, and how the receiving side checks it"
              onChange={(e) => change({ handoff: e.target.value })}
            />
            {err("handoff") ? <FieldError id={`${idp}-handoff-err`} text={errFor("handoff")!} /> : null}
          </fieldset>

          <div className="min-w-0 space-y-3">
            <TextField
              idp={idp}
              name="evidence"
              label="Evidence to retain"
              value={draft.evidence}
              error={errFor("evidence")}
              onChange={(v) => change({ evidence: v })}
            />
            <TextField
              idp={idp}
              name="recovery_path"
              label="Recovery or export path"
              value={draft.recovery_path}
              error={errFor("recovery_path")}
              onChange={(v) => change({ recovery_path: v })}
            />
            <TextField
              idp={idp}
              name="acceptance_question"
              label="Acceptance question"
              value={draft.acceptance_question}
              error={errFor("acceptance_question")}
              onChange={(v) => change({ acceptance_question: v })}
            />
          </div>

          <div className="min-w-0 space-y-3 md:col-span-2 xl:col-span-1">
            <VerificationInputs
              idp={idp}
              mapId={mapId}
              verification={draft.verification}
              evidence={draft.verification_evidence}
              exercises={exercises}
              errors={{
                main: errFor("verification_evidence"),
                ref: errFor("verification_evidence.ref"),
                note: errFor("verification_evidence.note"),
              }}
              onChange={(v) => change(v)}
            />
            <DecisionInputs
              idp={idp}
              decision={draft.decision}
              note={draft.decision_note}
              request={request}
              error={errFor("decision_note")}
              onDecision={(d) => change({ decision: d })}
              onNote={(n) => change({ decision_note: n })}
              onRequest={(r) => {
                setRequest(r);
                change({ decision_note: r.what.trim() || r.whom.trim() ? joinEvidenceRequest(r.what, r.whom) : "" });
              }}
            />
          </div>
          {Object.keys(errors).some((p) => !shown.has(p)) ? (
            <ul className="text-sm text-red-800 md:col-span-2 xl:col-span-3" role="alert">
              {Object.entries(errors)
                .filter(([p]) => !shown.has(p))
                .map(([p, m]) => (
                  <li key={p}>
                    <code className="font-mono text-xs">{p}</code>: {m}
                  </li>
                ))}
            </ul>
          ) : null}
        </div>
      ) : (
        <ReadOnlyRow mapId={mapId} row={base} exercises={exercises} />
      )}
    </section>
  );
}

function FieldError({ id, text }: { id: string; text: string }) {
  return (
    <p id={id} className="text-xs text-red-800" role="alert" data-testid="field-error">
      <span aria-hidden="true">✕ </span>
      {text}
    </p>
  );
}

/** The row's save state in words (announced politely to screen readers). */
function SaveIndicator({ state }: { state: SaveState }) {
  const text =
    state.kind === "saved"
      ? state.at
        ? `Saved ${new Date(state.at).toLocaleTimeString()}`
        : "Saved"
      : state.kind === "dirty"
        ? "Unsaved changes…"
        : state.kind === "saving"
          ? "Saving…"
          : state.kind === "conflict"
            ? "Not saved: conflict"
            : state.kind === "invalid"
              ? "Not saved: fix the field"
              : "Not saved: retry";
  const cls =
    state.kind === "saved"
      ? "text-emerald-800"
      : state.kind === "dirty" || state.kind === "saving"
        ? "text-neutral-700"
        : "text-red-800";
  const icon = state.kind === "saved" ? "✔" : state.kind === "saving" || state.kind === "dirty" ? "↻" : "✕";
  return (
    <span
      className={`inline-flex items-center gap-1 text-xs font-medium ${cls}`}
      role="status"
      aria-live="polite"
      data-testid="save-state"
      data-state={state.kind}
    >
      <span aria-hidden="true">{icon}</span>
      {text}
    </span>
  );
}

function CustodianInputs({
  idp,
  index,
  value,
  nameError,
  orgError,
  rowError,
  onChange,
  onRemove,
}: {
  idp: string;
  index: number;
  value: Custodian;
  nameError?: string;
  orgError?: string;
  rowError?: string;
  onChange: (v: Custodian) => void;
  onRemove: () => void;
}) {
  return (
    <div className="rounded-md border border-neutral-200 p-2" data-testid="custodian">
      <div className="grid grid-cols-[1fr_1fr_auto] items-end gap-2">
        <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-name`}>
          Team or service {index + 1}
          <input
            id={`${idp}-name`}
            className={input}
            value={value.name}
            aria-invalid={Boolean(nameError)}
            aria-describedby={nameError ? `${idp}-name-err` : undefined}
            onChange={(e) => onChange({ ...value, name: e.target.value })}
          />
        </label>
        <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-org`}>
          Organization {index + 1}
          <input
            id={`${idp}-org`}
            className={input}
            value={value.organization}
            aria-invalid={Boolean(orgError)}
            aria-describedby={orgError ? `${idp}-org-err` : undefined}
            onChange={(e) => onChange({ ...value, organization: e.target.value })}
          />
        </label>
        <button
          type="button"
          className={`${small} mb-0.5`}
          onClick={onRemove}
          aria-label={`Remove custodian ${index + 1}`}
        >
          Remove
        </button>
      </div>
      {nameError ? <FieldError id={`${idp}-name-err`} text={nameError} /> : null}
      {orgError ? <FieldError id={`${idp}-org-err`} text={orgError} /> : null}
      {rowError ? <FieldError id={`${idp}-err`} text={rowError} /> : null}
    </div>
  );
}

function TextField({
  idp,
  name,
  label,
  value,
  error,
  onChange,
}: {
  idp: string;
  name: string;
  label: string;
  value: string;
  error?: string;
  onChange: (v: string) => void;
}) {
  const id = `${idp}-${name}`;
  return (
    <div>
      <label className="block text-xs font-semibold text-neutral-900" htmlFor={id}>
        {label}
      </label>
      <textarea
        id={id}
        className={area}
        value={value}
        aria-invalid={Boolean(error)}
        aria-describedby={error ? `${id}-err` : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {error ? <FieldError id={`${id}-err`} text={error} /> : null}
    </div>
  );
}

const EVIDENCE_KIND_LABEL: Record<EvidenceKind, string> = {
  exercise: "an exercise of this map",
  task: "a task id",
  artifact: "an artifact digest (sha256)",
  document: "a document (link or id)",
};

function VerificationInputs({
  idp,
  mapId,
  verification,
  evidence,
  exercises,
  errors,
  onChange,
}: {
  idp: string;
  mapId: string;
  verification: Verification;
  evidence: VerificationEvidence | null;
  exercises: ExerciseListItem[];
  errors: { main?: string; ref?: string; note?: string };
  onChange: (v: { verification?: Verification; verification_evidence?: VerificationEvidence | null }) => void;
}) {
  const kind = evidence?.kind ?? "";
  return (
    <fieldset className="space-y-1.5">
      <legend className="text-xs font-semibold text-neutral-900">Verification</legend>
      <div className="grid grid-cols-2 gap-2">
        <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-verification`}>
          Result
          <select
            id={`${idp}-verification`}
            className={input}
            value={verification}
            aria-invalid={Boolean(errors.main)}
            aria-describedby={errors.main ? `${idp}-ver-err` : undefined}
            onChange={(e) => onChange({ verification: e.target.value as Verification })}
          >
            <option value="unknown">? unknown</option>
            <option value="verified">✔ verified</option>
            <option value="failed">✕ failed</option>
          </select>
        </label>
        <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-evidence-kind`}>
          Evidence linked
          <select
            id={`${idp}-evidence-kind`}
            className={input}
            value={kind}
            onChange={(e) => {
              const k = e.target.value as EvidenceKind | "";
              onChange({
                verification_evidence: k
                  ? {
                      kind: k,
                      ref: k === "exercise" ? (exercises[0]?.id ?? "") : "",
                      ...(evidence?.note ? { note: evidence.note } : {}),
                    }
                  : null,
              });
            }}
          >
            <option value="">none yet</option>
            {(Object.keys(EVIDENCE_KIND_LABEL) as EvidenceKind[]).map((k) => (
              <option key={k} value={k}>
                {EVIDENCE_KIND_LABEL[k]}
              </option>
            ))}
          </select>
        </label>
      </div>
      {errors.main ? <FieldError id={`${idp}-ver-err`} text={errors.main} /> : null}
      {evidence ? (
        <>
          {evidence.kind === "exercise" ? (
            <label className="block text-xs font-medium text-neutral-800" htmlFor={`${idp}-evidence-ref`}>
              Exercise
              <select
                id={`${idp}-evidence-ref`}
                className={input}
                value={evidence.ref}
                onChange={(e) => onChange({ verification_evidence: { ...evidence, ref: e.target.value } })}
              >
                {exercises.length === 0 ? <option value="">no exercise recorded yet</option> : null}
                {!exercises.some((x) => x.id === evidence.ref) && evidence.ref ? (
                  <option value={evidence.ref}>{evidence.ref}</option>
                ) : null}
                {exercises.map((x) => (
                  <option key={x.id} value={x.id}>
                    {x.interruption_point} · {x.status === "completed" ? x.outcome : "in progress"}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <label className="block text-xs font-medium text-neutral-800" htmlFor={`${idp}-evidence-ref`}>
              {evidence.kind === "task" ? "Task id" : evidence.kind === "artifact" ? "sha256" : "Link or document id"}
              <input
                id={`${idp}-evidence-ref`}
                className={`${input} ${evidence.kind === "document" ? "" : "font-mono"}`}
                value={evidence.ref}
                aria-invalid={Boolean(errors.ref)}
                aria-describedby={errors.ref ? `${idp}-ref-err` : undefined}
                onChange={(e) => onChange({ verification_evidence: { ...evidence, ref: e.target.value } })}
              />
            </label>
          )}
          {errors.ref ? <FieldError id={`${idp}-ref-err`} text={errors.ref} /> : null}
          <EvidenceLink mapId={mapId} evidence={evidence} exercises={exercises} />
          <label className="block text-xs font-medium text-neutral-800" htmlFor={`${idp}-evidence-note`}>
            What it shows (optional)
            <input
              id={`${idp}-evidence-note`}
              className={input}
              value={evidence.note ?? ""}
              onChange={(e) => onChange({ verification_evidence: { ...evidence, note: e.target.value } })}
            />
          </label>
          {errors.note ? <FieldError id={`${idp}-note-err`} text={errors.note} /> : null}
        </>
      ) : (
        <p className="text-xs text-neutral-700">
          Stays unknown until evidence is linked: an exercise, a task, an artifact digest or a document.
        </p>
      )}
    </fieldset>
  );
}

/** A link to the evidence when the product holds it (an exercise of this map, a task). */
function EvidenceLink({
  mapId,
  evidence,
  exercises,
}: {
  mapId: string;
  evidence: VerificationEvidence;
  exercises: ExerciseListItem[];
}) {
  if (evidence.kind === "exercise" && exercises.some((x) => x.id === evidence.ref)) {
    return (
      <Link
        href={`/maps/${mapId}/exercises/${evidence.ref}`}
        className="text-xs text-sky-800 underline"
        data-testid="evidence-link"
      >
        Open the exercise
      </Link>
    );
  }
  if (evidence.kind === "task" && evidence.ref.trim()) {
    return (
      <Link
        href={`/tasks/${encodeURIComponent(evidence.ref.trim())}`}
        className="text-xs text-sky-800 underline"
        data-testid="evidence-link"
      >
        Open task {evidence.ref.trim()}
      </Link>
    );
  }
  if (evidence.kind === "document" && /^https?:\/\//i.test(evidence.ref.trim())) {
    return (
      <a
        href={evidence.ref.trim()}
        className="text-xs text-sky-800 underline"
        rel="noreferrer noopener"
        target="_blank"
      >
        Open the document
      </a>
    );
  }
  return null;
}

function DecisionInputs({
  idp,
  decision,
  note,
  request,
  error,
  onDecision,
  onNote,
  onRequest,
}: {
  idp: string;
  decision: Decision | null;
  note: string;
  request: { what: string; whom: string };
  error?: string;
  onDecision: (d: Decision | null) => void;
  onNote: (n: string) => void;
  onRequest: (r: { what: string; whom: string }) => void;
}) {
  const options: Array<{ value: Decision | null; label: string }> = [
    { value: null, label: "Undecided" },
    { value: "accept", label: "Accept" },
    { value: "constrain", label: "Constrain" },
    { value: "request_evidence", label: "Request evidence" },
  ];
  return (
    <fieldset className="space-y-1.5">
      <legend className="text-xs font-semibold text-neutral-900">Decision</legend>
      <div className="flex flex-wrap gap-x-3 gap-y-1" role="radiogroup" aria-label="Decision">
        {options.map((o) => (
          <label key={o.label} className="inline-flex items-center gap-1 text-sm">
            <input
              type="radio"
              name={`${idp}-decision`}
              checked={decision === o.value}
              onChange={() => onDecision(o.value)}
            />
            {o.label}
          </label>
        ))}
      </div>
      {decision === "constrain" ? (
        <>
          <div className="flex flex-wrap gap-1" aria-label="Common constraints">
            {CONSTRAINT_PRESETS.map((p) => (
              <button
                key={p}
                type="button"
                className={small}
                onClick={() => onNote(note.trim() ? `${note.trim()}; ${p.toLowerCase()}` : p)}
              >
                + {p}
              </button>
            ))}
          </div>
          <label className="block text-xs font-medium text-neutral-800" htmlFor={`${idp}-constraint`}>
            Constraint
            <textarea
              id={`${idp}-constraint`}
              className={area}
              value={note}
              aria-invalid={Boolean(error)}
              aria-describedby={error ? `${idp}-decision-err` : undefined}
              placeholder="e.g. runs under 20 minutes; records:write only on test records"
              onChange={(e) => onNote(e.target.value)}
            />
          </label>
        </>
      ) : decision === "request_evidence" ? (
        <div className="grid gap-2 sm:grid-cols-2">
          <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-missing`}>
            What is missing
            <input
              id={`${idp}-missing`}
              className={input}
              value={request.what}
              aria-invalid={Boolean(error)}
              aria-describedby={error ? `${idp}-decision-err` : undefined}
              onChange={(e) => onRequest({ ...request, what: e.target.value })}
            />
          </label>
          <label className="text-xs font-medium text-neutral-800" htmlFor={`${idp}-from`}>
            From whom (team and organization)
            <input
              id={`${idp}-from`}
              className={input}
              value={request.whom}
              aria-invalid={Boolean(error)}
              aria-describedby={error ? `${idp}-decision-err` : undefined}
              onChange={(e) => onRequest({ ...request, whom: e.target.value })}
            />
          </label>
        </div>
      ) : decision === "accept" ? (
        <label className="block text-xs font-medium text-neutral-800" htmlFor={`${idp}-accept-note`}>
          Why it is acceptable (optional)
          <input id={`${idp}-accept-note`} className={input} value={note} onChange={(e) => onNote(e.target.value)} />
        </label>
      ) : null}
      {error ? <FieldError id={`${idp}-decision-err`} text={error} /> : null}
    </fieldset>
  );
}

/** Both versions of a row after a 409, field by field, and the two ways out. */
function ConflictPanel({
  details,
  mine,
  onResolve,
}: {
  details: LayerConflictDetails;
  mine: Fields;
  onResolve: (keep: "theirs" | "mine") => void;
}) {
  const theirs = details.current;
  const yours = { ...theirs, ...mine } as LayerRow;
  const differing = COMPARED_FIELDS.filter((f) => fieldText(theirs, f) !== fieldText(yours, f));
  return (
    <div
      role="alert"
      className="m-3 rounded-md border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950"
      data-testid="conflict"
    >
      <p className="font-semibold">
        <span aria-hidden="true">⚠ </span>
        {details.current_updated_by} saved this row at {new Date(details.current_updated_at).toLocaleString()} while you
        were editing. Your change is not saved.
      </p>
      <div className="mt-2 overflow-x-auto">
        <table className="w-full min-w-[32rem] text-left text-xs">
          <thead>
            <tr>
              <th scope="col" className="py-1 pr-2">
                Field
              </th>
              <th scope="col" className="py-1 pr-2">
                Their version (saved, revision {theirs.revision})
              </th>
              <th scope="col" className="py-1">
                Your version
              </th>
            </tr>
          </thead>
          <tbody>
            {(differing.length ? differing : (["custodians"] as ComparedField[])).map((f) => (
              <tr key={f} className="border-t border-amber-200 align-top">
                <th scope="row" className="py-1 pr-2 font-medium">
                  {FIELD_LABEL[f]}
                </th>
                <td className="whitespace-pre-wrap py-1 pr-2" data-testid="conflict-theirs">
                  {fieldText(theirs, f) || "—"}
                </td>
                <td className="whitespace-pre-wrap py-1" data-testid="conflict-yours">
                  {fieldText(yours, f) || "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="mt-2 flex flex-wrap gap-2">
        <button
          type="button"
          className="rounded-md border border-neutral-500 bg-white px-3 py-1 text-sm font-medium"
          onClick={() => onResolve("theirs")}
        >
          Keep their version
        </button>
        <button
          type="button"
          className="rounded-md bg-neutral-900 px-3 py-1 text-sm font-medium text-white"
          onClick={() => onResolve("mine")}
        >
          Save mine over theirs
        </button>
      </div>
    </div>
  );
}

function ReadOnlyRow({ mapId, row, exercises }: { mapId: string; row: LayerRow; exercises: ExerciseListItem[] }) {
  const item = (label: string, value: React.ReactNode) => (
    <div className="min-w-0">
      <dt className="text-xs font-semibold text-neutral-900">{label}</dt>
      <dd className="whitespace-pre-wrap break-words text-sm text-neutral-800">
        {value || <span className="text-neutral-600">—</span>}
      </dd>
    </div>
  );
  return (
    <dl className="grid gap-x-4 gap-y-3 p-3 md:grid-cols-2 xl:grid-cols-3">
      {item("Custodians", custodiansText(row) || "none named yet")}
      {row.handoff ? item("Handoff", row.handoff) : null}
      {item("Evidence to retain", row.evidence)}
      {item("Recovery or export path", row.recovery_path)}
      {item("Acceptance question", row.acceptance_question)}
      {item(
        "Verification",
        <>
          {row.verification}
          {row.verification_evidence ? ` — ${evidenceText(row.verification_evidence)} ` : " (no evidence linked yet)"}
          {row.verification_evidence ? (
            <EvidenceLink mapId={mapId} evidence={row.verification_evidence} exercises={exercises} />
          ) : null}
        </>,
      )}
      {item(
        "Decision",
        row.decision
          ? `${row.decision.replace("_", " ")}${row.decision_note ? `: ${row.decision_note}` : ""}`
          : "undecided",
      )}
    </dl>
  );
}
