"use client";

/**
 * The work around one layer's row (decision 0046): who carries it (a member of the workspace), its evidence items
 * (an exercise of this map, a task, a bundle, a document link — the server checks each exists here) and comments.
 * Owners and admins assign and link evidence; owners, admins, approvers and responders comment; everyone reads.
 * Each control saves at once and shows the server's message when refused.
 */
import Link from "next/link";
import { useId, useState } from "react";
import { fieldErrors, mapApi } from "@/lib/client/maps";
import { ApiError } from "@/lib/client/api";
import type { EvidenceItem, EvidenceItemKind, ExerciseListItem, LayerWork, MapLayer } from "@/lib/contract/maps";
import { Time } from "@/components/ui/time";
import { FieldError, inputClass, labelClass, smallButtonClass } from "./fields";

const KIND_WORD: Record<EvidenceItemKind, string> = {
  exercise: "Exercise",
  task: "Task",
  bundle: "Bundle",
  document: "Document link",
};

const KINDS = Object.keys(KIND_WORD) as EvidenceItemKind[];

const REF_HINT: Record<EvidenceItemKind, string> = {
  exercise: "An exercise of this map",
  task: "A task id, e.g. case-2026-0412",
  bundle: "The bundle's sha256 digest",
  document: "https://…",
};

/** Where an evidence item opens. */
function evidenceHref(mapId: string, item: EvidenceItem): string | null {
  switch (item.kind) {
    case "exercise":
      return `/maps/${mapId}/exercises/${item.ref}`;
    case "task":
      return `/tasks/${encodeURIComponent(item.ref)}`;
    case "document":
      return item.ref;
    case "bundle":
      return null;
  }
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function LayerWorkPanel({
  mapId,
  layer,
  initial,
  exercises,
  members,
  canEdit,
  canComment,
}: {
  mapId: string;
  layer: MapLayer;
  initial: LayerWork;
  exercises: ExerciseListItem[];
  members: string[];
  canEdit: boolean;
  canComment: boolean;
}) {
  const idp = `work-${layer}`;
  const [assignee, setAssignee] = useState(initial.assignee);
  const [assignError, setAssignError] = useState<string | null>(null);
  const [items, setItems] = useState(initial.evidence_items);
  const [comments, setComments] = useState(initial.comments);
  const [kind, setKind] = useState<EvidenceItemKind>("document");
  const [ref, setRef] = useState("");
  const [note, setNote] = useState("");
  const [evError, setEvError] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [commentError, setCommentError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const refId = useId();

  const assign = async (value: string) => {
    setAssignError(null);
    try {
      const res = await mapApi.setAssignee(mapId, layer, value || null);
      setAssignee(res.assignee);
    } catch (err) {
      setAssignError(message(err));
    }
  };
  const addItem = async () => {
    setBusy(true);
    setEvError(null);
    try {
      const item = await mapApi.addEvidence(mapId, layer, { kind, ref: ref.trim(), ...(note.trim() ? { note } : {}) });
      setItems((prev) => [...prev, item]);
      setRef("");
      setNote("");
    } catch (err) {
      const f = err instanceof ApiError ? fieldErrors(err.details) : {};
      setEvError(f.ref ?? f.note ?? message(err));
    } finally {
      setBusy(false);
    }
  };
  const removeItem = async (item: EvidenceItem) => {
    setEvError(null);
    try {
      await mapApi.removeEvidence(mapId, layer, item.id);
      setItems((prev) => prev.filter((i) => i.id !== item.id));
    } catch (err) {
      setEvError(message(err));
    }
  };
  const addComment = async () => {
    setBusy(true);
    setCommentError(null);
    try {
      const c = await mapApi.addComment(mapId, layer, text);
      setComments((prev) => [...prev, c]);
      setText("");
    } catch (err) {
      const f = err instanceof ApiError ? fieldErrors(err.details) : {};
      setCommentError(f.text ?? message(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div
      className="space-y-3 border-t border-neutral-100 px-3 py-2 text-sm"
      data-testid={`work-${layer}`}
      aria-label="Assignee, evidence items and comments"
      role="group"
    >
      <div className="flex flex-wrap items-center gap-2">
        {canEdit ? (
          <p className="hidden text-xs text-neutral-800 print:block">Assignee: {assignee ?? "nobody yet"}</p>
        ) : null}
        {canEdit ? (
          <label className={`${labelClass} flex flex-wrap items-center gap-2 print:hidden`}>
            Assignee
            <select
              className={`${inputClass} w-auto max-w-full`}
              value={assignee ?? ""}
              onChange={(e) => void assign(e.target.value)}
              data-testid="assignee"
            >
              <option value="">nobody yet</option>
              {[...new Set([...(assignee ? [assignee] : []), ...members])].map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <p className="text-xs text-neutral-800">
            Assignee: <span data-testid="assignee-text">{assignee ?? "nobody yet"}</span>
          </p>
        )}
        {assignError ? <FieldError text={assignError} /> : null}
      </div>

      <div>
        <h4 className="text-xs font-semibold text-neutral-800">Evidence items ({items.length})</h4>
        {items.length ? (
          <ul className="mt-1 space-y-1" data-testid="evidence-items">
            {items.map((item) => {
              const href = evidenceHref(mapId, item);
              const exercise =
                item.kind === "exercise" ? exercises.find((x) => x.id === item.ref)?.interruption_point : undefined;
              return (
                <li
                  key={item.id}
                  className="flex flex-wrap items-baseline gap-x-2 gap-y-0.5"
                  data-testid="evidence-item"
                >
                  <span className="rounded border border-neutral-300 bg-neutral-50 px-1.5 text-xs">
                    {KIND_WORD[item.kind]}
                  </span>
                  {href ? (
                    <a
                      href={href}
                      className="min-w-0 font-mono text-xs break-all text-sky-800 underline"
                      {...(item.kind === "document" ? { rel: "noopener noreferrer nofollow", target: "_blank" } : {})}
                    >
                      {exercise ?? item.ref}
                    </a>
                  ) : (
                    <code className="min-w-0 font-mono text-xs break-all">{item.ref}</code>
                  )}
                  {item.note ? <span className="text-xs break-words text-neutral-800">— {item.note}</span> : null}
                  <span className="text-xs text-neutral-600">
                    {item.added_by}, <Time iso={item.added_at} />
                  </span>
                  {canEdit ? (
                    <button
                      type="button"
                      className={`${smallButtonClass} print:hidden`}
                      onClick={() => void removeItem(item)}
                      aria-label={`Remove evidence ${item.ref}`}
                    >
                      Remove
                    </button>
                  ) : null}
                </li>
              );
            })}
          </ul>
        ) : (
          <p className="mt-1 text-xs text-neutral-700">None linked yet.</p>
        )}
        {canEdit ? (
          <form
            className="mt-2 flex flex-wrap items-end gap-2 print:hidden"
            onSubmit={(e) => {
              e.preventDefault();
              void addItem();
            }}
            aria-label={`Add evidence to ${layer}`}
          >
            <label className={labelClass}>
              Kind
              <select
                className={`${inputClass} block w-auto`}
                value={kind}
                onChange={(e) => {
                  setKind(e.target.value as EvidenceItemKind);
                  setRef("");
                }}
                data-testid="evidence-kind"
              >
                {KINDS.map((k) => (
                  <option key={k} value={k}>
                    {KIND_WORD[k]}
                  </option>
                ))}
              </select>
            </label>
            <div className="min-w-0 flex-1 basis-48">
              <label className={labelClass} htmlFor={refId}>
                {kind === "document"
                  ? "Link"
                  : kind === "exercise"
                    ? "Exercise"
                    : kind === "task"
                      ? "Task id"
                      : "Digest"}
              </label>
              {kind === "exercise" ? (
                <select
                  id={refId}
                  className={inputClass}
                  value={ref}
                  onChange={(e) => setRef(e.target.value)}
                  data-testid="evidence-ref"
                >
                  <option value="">{exercises.length ? "choose an exercise" : "no exercises yet"}</option>
                  {exercises.map((x) => (
                    <option key={x.id} value={x.id}>
                      {x.interruption_point} ({x.status === "completed" ? "completed" : "in progress"})
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={refId}
                  className={inputClass}
                  value={ref}
                  onChange={(e) => setRef(e.target.value)}
                  placeholder={REF_HINT[kind]}
                  type={kind === "document" ? "url" : "text"}
                  aria-invalid={Boolean(evError)}
                  aria-describedby={evError ? `${idp}-ev-err` : undefined}
                  data-testid="evidence-ref"
                />
              )}
            </div>
            <label className={`${labelClass} min-w-0 flex-1 basis-40`}>
              Note (optional)
              <input className={inputClass} value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />
            </label>
            <button type="submit" className={smallButtonClass} disabled={busy || !ref.trim()}>
              Add evidence
            </button>
          </form>
        ) : null}
        {evError ? <FieldError id={`${idp}-ev-err`} text={evError} className="mt-1" /> : null}
      </div>

      <div>
        <h4 className="text-xs font-semibold text-neutral-800">Comments ({comments.length})</h4>
        {comments.length ? (
          <ol className="mt-1 space-y-1.5" data-testid="comments">
            {comments.map((c) => (
              <li
                key={c.id}
                className="rounded-md border border-neutral-200 bg-neutral-50 px-2 py-1"
                data-testid="comment"
              >
                <p className="text-xs text-neutral-700">
                  <span className="font-medium text-neutral-900">{c.author}</span> · <Time iso={c.created_at} />
                </p>
                <p className="text-sm break-words whitespace-pre-wrap">{c.body}</p>
              </li>
            ))}
          </ol>
        ) : (
          <p className="mt-1 text-xs text-neutral-700">No comments.</p>
        )}
        {canComment ? (
          <form
            className="mt-2 flex flex-wrap items-end gap-2 print:hidden"
            onSubmit={(e) => {
              e.preventDefault();
              void addComment();
            }}
          >
            <label className={`${labelClass} min-w-0 flex-1 basis-64`}>
              Comment
              <textarea
                className={`${inputClass} min-h-[2.5rem] resize-y`}
                value={text}
                onChange={(e) => setText(e.target.value)}
                maxLength={2000}
                rows={2}
                aria-invalid={Boolean(commentError)}
                data-testid="comment-text"
              />
            </label>
            <button type="submit" className={smallButtonClass} disabled={busy || !text.trim()}>
              Add comment
            </button>
          </form>
        ) : null}
        {commentError ? <FieldError text={commentError} className="mt-1" /> : null}
        {!canEdit && !canComment ? (
          <p className="mt-1 text-xs text-neutral-700">
            Your role reads this; owners and admins link evidence, and responders and approvers comment too.{" "}
            <Link href="/settings" className="underline">
              Roles
            </Link>
          </p>
        ) : null}
      </div>
    </div>
  );
}
