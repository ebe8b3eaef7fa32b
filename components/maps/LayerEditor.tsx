"use client";

/**
 * One row of the custody-map worksheet. For owners and admins every field is an input that autosaves (about a
 * second after the last change) with `PATCH /api/v1/maps/{id}/layers/{layer}` and the revision the row was based
 * on; the row says whether it is saved. A refused value shows the server's message under its field. A 409 (someone
 * else saved the row first) shows both versions side by side; the person chooses — nothing is overwritten
 * silently. For other roles the row is read-only text.
 */
import Link from "next/link";
import { useState, type ReactNode } from "react";
import { mapApi, type LayerSaveResult } from "@/lib/client/maps";
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
import { BUNDLE_LAYERS, LAYER_GUIDE, MAP_LAYERS } from "@/lib/domain/maps/layers";
import { CONSTRAINT_PRESETS, joinEvidenceRequest, splitEvidenceRequest } from "@/lib/domain/maps/names";
import { DecisionBadge, VerificationBadge } from "./badges";
import { ConflictNotice } from "./ConflictNotice";
import { areaClass, FieldError, inputClass, labelClass, smallButtonClass, TextAreaField } from "./fields";
import { SaveStatus } from "./SaveStatus";
import { useAutosave, type SaveState } from "./useAutosave";

type Fields = Omit<LayerRow, "layer" | "revision">;

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
  footer,
}: {
  mapId: string;
  initial: LayerRow;
  exercises: ExerciseListItem[];
  canEdit: boolean;
  onSaved: (res: LayerSaveResult) => void;
  onState: (layer: LayerRow["layer"], state: SaveState) => void;
  /** Shown under the row (its assignee, evidence items and comments). */
  footer?: ReactNode;
}) {
  const layer = initial.layer;
  const guide = LAYER_GUIDE[layer];
  const autosave = useAutosave({
    initial,
    draftOf: fieldsOf,
    patchOf: (d: Fields, row: LayerRow) => changedFields(d, fieldsOf(row)),
    send: async (patch, row) => {
      const res = await mapApi.saveLayer(mapId, layer, { ...patch, revision: row.revision });
      onSaved(res);
      return res.row;
    },
    onState: (s) => onState(layer, s),
  });
  const { draft, base, state, errors, conflict, change } = autosave;
  const [request, setRequest] = useState(
    () => splitEvidenceRequest(initial.decision_note) ?? { what: initial.decision_note, whom: "" },
  );

  /** Resolves a conflict: keep theirs (drop my change) or save mine on top of theirs (explicitly). */
  const resolve = (keep: "theirs" | "mine") => {
    const theirs = autosave.resolve(keep);
    if (theirs) setRequest(splitEvidenceRequest(theirs.decision_note) ?? { what: theirs.decision_note, whom: "" });
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
          {canEdit ? (
            <span className="print:hidden">
              <SaveStatus state={state} testId="save-state" why />
            </span>
          ) : null}
        </div>
      </header>

      {conflict ? (
        <ConflictPanel details={conflict.details as LayerConflictDetails} mine={draft} onResolve={resolve} />
      ) : null}
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
            <button
              type="button"
              className={`${smallButtonClass} ml-2`}
              onClick={() => change({ decision: "constrain" })}
            >
              Constrain this layer
            </button>
          ) : null}
        </div>
      ) : null}

      {canEdit ? (
        <div className="hidden print:block">
          <ReadOnlyRow mapId={mapId} row={base} exercises={exercises} printCopy />
        </div>
      ) : null}
      {canEdit ? (
        <div className="grid gap-x-4 gap-y-3 p-3 md:grid-cols-2 xl:grid-cols-[1.3fr_1fr_1fr] print:hidden">
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
              className={smallButtonClass}
              onClick={() => change({ custodians: [...draft.custodians, { name: "", organization: "" }] })}
            >
              + Add custodian
            </button>
            <label className="block pt-1 text-xs font-semibold text-neutral-900" htmlFor={`${idp}-handoff`}>
              Handoff{orgs.size > 1 ? " (required: more than one organization)" : " between organizations"}
            </label>
            <textarea
              id={`${idp}-handoff`}
              className={areaClass}
              value={draft.handoff}
              aria-invalid={Boolean(err("handoff"))}
              aria-describedby={err("handoff") ? `${idp}-handoff-err` : undefined}
              placeholder="Who hands what to whom, and how the receiving side checks it"
              onChange={(e) => change({ handoff: e.target.value })}
            />
            {err("handoff") ? <FieldError id={`${idp}-handoff-err`} text={errFor("handoff")!} /> : null}
          </fieldset>

          <div className="min-w-0 space-y-3">
            <TextAreaField
              id={`${idp}-evidence`}
              label="Evidence to retain"
              value={draft.evidence}
              error={errFor("evidence")}
              onChange={(v) => change({ evidence: v })}
            />
            <TextAreaField
              id={`${idp}-recovery_path`}
              label="Recovery or export path"
              value={draft.recovery_path}
              error={errFor("recovery_path")}
              onChange={(v) => change({ recovery_path: v })}
            />
            <TextAreaField
              id={`${idp}-acceptance_question`}
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
              allowBundle={(BUNDLE_LAYERS as readonly string[]).includes(layer)}
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
      {footer}
    </section>
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
        <label className={labelClass} htmlFor={`${idp}-name`}>
          Team or service {index + 1}
          <input
            id={`${idp}-name`}
            className={inputClass}
            value={value.name}
            aria-invalid={Boolean(nameError)}
            aria-describedby={nameError ? `${idp}-name-err` : undefined}
            onChange={(e) => onChange({ ...value, name: e.target.value })}
          />
        </label>
        <label className={labelClass} htmlFor={`${idp}-org`}>
          Organization {index + 1}
          <input
            id={`${idp}-org`}
            className={inputClass}
            value={value.organization}
            aria-invalid={Boolean(orgError)}
            aria-describedby={orgError ? `${idp}-org-err` : undefined}
            onChange={(e) => onChange({ ...value, organization: e.target.value })}
          />
        </label>
        <button
          type="button"
          className={`${smallButtonClass} mb-0.5`}
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

const EVIDENCE_KIND_LABEL: Record<EvidenceKind, string> = {
  exercise: "an exercise of this map",
  task: "a task id",
  artifact: "an artifact digest (sha256)",
  document: "a document (link or id)",
  bundle: "an export bundle (sha256)",
};

function VerificationInputs({
  idp,
  mapId,
  verification,
  evidence,
  exercises,
  allowBundle,
  errors,
  onChange,
}: {
  idp: string;
  mapId: string;
  verification: Verification;
  evidence: VerificationEvidence | null;
  exercises: ExerciseListItem[];
  /** The artifacts and export layers may link an export bundle (decision 0038). */
  allowBundle: boolean;
  errors: { main?: string; ref?: string; note?: string };
  onChange: (v: { verification?: Verification; verification_evidence?: VerificationEvidence | null }) => void;
}) {
  const kind = evidence?.kind ?? "";
  return (
    <fieldset className="space-y-1.5">
      <legend className="text-xs font-semibold text-neutral-900">Verification</legend>
      <div className="grid grid-cols-2 gap-2">
        <label className={labelClass} htmlFor={`${idp}-verification`}>
          Result
          <select
            id={`${idp}-verification`}
            className={inputClass}
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
        <label className={labelClass} htmlFor={`${idp}-evidence-kind`}>
          Evidence linked
          <select
            id={`${idp}-evidence-kind`}
            className={inputClass}
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
            {(Object.keys(EVIDENCE_KIND_LABEL) as EvidenceKind[])
              .filter((k) => k !== "bundle" || allowBundle || kind === "bundle")
              .map((k) => (
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
            <label className={`block ${labelClass}`} htmlFor={`${idp}-evidence-ref`}>
              Exercise
              <select
                id={`${idp}-evidence-ref`}
                className={inputClass}
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
            <label className={`block ${labelClass}`} htmlFor={`${idp}-evidence-ref`}>
              {evidence.kind === "task"
                ? "Task id"
                : evidence.kind === "artifact" || evidence.kind === "bundle"
                  ? "sha256"
                  : "Link or document id"}
              <input
                id={`${idp}-evidence-ref`}
                className={`${inputClass} ${evidence.kind === "document" ? "" : "font-mono"}`}
                value={evidence.ref}
                aria-invalid={Boolean(errors.ref)}
                aria-describedby={errors.ref ? `${idp}-ref-err` : undefined}
                onChange={(e) => onChange({ verification_evidence: { ...evidence, ref: e.target.value } })}
              />
            </label>
          )}
          {errors.ref ? <FieldError id={`${idp}-ref-err`} text={errors.ref} /> : null}
          {evidence.kind === "bundle" && evidence.bundle_verified !== undefined ? (
            <p className="text-xs text-neutral-800" data-testid="bundle-result">
              {evidence.bundle_verified === true
                ? "✔ this bundle passed verification"
                : evidence.bundle_verified === false
                  ? "✕ this bundle failed verification"
                  : "○ this bundle was exported but not verified by the server"}
            </p>
          ) : null}
          <EvidenceLink mapId={mapId} evidence={evidence} exercises={exercises} />
          <label className={`block ${labelClass}`} htmlFor={`${idp}-evidence-note`}>
            What it shows (optional)
            <input
              id={`${idp}-evidence-note`}
              className={inputClass}
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
  testId = "evidence-link",
}: {
  mapId: string;
  evidence: VerificationEvidence;
  exercises: ExerciseListItem[];
  testId?: string;
}) {
  if (evidence.kind === "exercise" && exercises.some((x) => x.id === evidence.ref)) {
    return (
      <Link
        href={`/maps/${mapId}/exercises/${evidence.ref}`}
        className="text-xs text-sky-800 underline"
        data-testid={testId}
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
        data-testid={testId}
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
                className={smallButtonClass}
                onClick={() => onNote(note.trim() ? `${note.trim()}; ${p.toLowerCase()}` : p)}
              >
                + {p}
              </button>
            ))}
          </div>
          <label className={`block ${labelClass}`} htmlFor={`${idp}-constraint`}>
            Constraint
            <textarea
              id={`${idp}-constraint`}
              className={areaClass}
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
          <label className={labelClass} htmlFor={`${idp}-missing`}>
            What is missing
            <input
              id={`${idp}-missing`}
              className={inputClass}
              value={request.what}
              aria-invalid={Boolean(error)}
              aria-describedby={error ? `${idp}-decision-err` : undefined}
              onChange={(e) => onRequest({ ...request, what: e.target.value })}
            />
          </label>
          <label className={labelClass} htmlFor={`${idp}-from`}>
            From whom (team and organization)
            <input
              id={`${idp}-from`}
              className={inputClass}
              value={request.whom}
              aria-invalid={Boolean(error)}
              aria-describedby={error ? `${idp}-decision-err` : undefined}
              onChange={(e) => onRequest({ ...request, whom: e.target.value })}
            />
          </label>
        </div>
      ) : decision === "accept" ? (
        <label className={`block ${labelClass}`} htmlFor={`${idp}-accept-note`}>
          Why it is acceptable (optional)
          <input
            id={`${idp}-accept-note`}
            className={inputClass}
            value={note}
            onChange={(e) => onNote(e.target.value)}
          />
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
    <ConflictNotice
      by={details.current_updated_by}
      at={details.current_updated_at}
      what="row"
      className="m-3"
      onResolve={onResolve}
    >
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
    </ConflictNotice>
  );
}

function ReadOnlyRow({
  mapId,
  row,
  exercises,
  printCopy = false,
}: {
  mapId: string;
  row: LayerRow;
  exercises: ExerciseListItem[];
  /** The editor's copy for printing: without test ids, so the screen's controls stay the only ones found. */
  printCopy?: boolean;
}) {
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
            <EvidenceLink
              mapId={mapId}
              evidence={row.verification_evidence}
              exercises={exercises}
              testId={printCopy ? "evidence-link-print" : "evidence-link"}
            />
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
