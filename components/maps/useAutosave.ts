"use client";

/**
 * Autosave of one record edited in place (a custody-map worksheet row, an interruption exercise): a change is saved
 * about a second after the last keystroke (or at once when asked), with the revision the edit was based on. At most
 * one save is in flight; a change made meanwhile is saved right after it. A 409 whose details carry the stored
 * version (`details.current`: someone else saved first) blocks saving until the person chooses theirs or mine —
 * nothing is overwritten silently. A 422 keeps the server's message per field path.
 */
import { useEffect, useRef, useState, type RefObject } from "react";
import { ApiError } from "@/lib/client/api";
import { fieldErrors } from "@/lib/client/maps";

/** How long after the last change a save starts (ms). */
const AUTOSAVE_MS = 900;

/** Where a record's autosave stands; `at` is when the last save completed (ISO), null when nothing was sent. */
export type SaveState =
  | { kind: "saved"; at: string | null }
  | { kind: "dirty" }
  | { kind: "saving" }
  | { kind: "invalid"; message: string }
  | { kind: "conflict"; message?: string }
  | { kind: "error"; message: string };

/** A save refused because someone else saved first: their stored version, the draft that was sent, the 409 details. */
type SaveConflict<B, D> = { current: B; yours: D; details: unknown };

/**
 * The autosave of a record of type `B` edited as a draft of type `D`.
 * @param opts.initial the record as loaded.
 * @param opts.draftOf the editable part of a record.
 * @param opts.patchOf the fields of a draft that differ from a record, as they would be sent (empty: nothing to save).
 * @param opts.send saves a patch based on a record (its revision) and resolves with the record as stored; rejects with
 *   the API's error ({@link ApiError}).
 * @param opts.onState told every state change (the worksheet sums its rows' states).
 * @returns the draft, the record as last stored, the save state, the server's messages by field path, the conflict;
 *   `change` (merge a patch into the draft and save it, now or after {@link AUTOSAVE_MS}), `flush` (save now; true when
 *   nothing is left unsaved), `resolve` (end a conflict: keep theirs, which returns the draft it restored, or save
 *   mine over it), and for actions beyond saving (completing an exercise) the latest draft and record, `commit` (take
 *   a stored record as the base), `setErrors` and `setState`.
 */
export function useAutosave<D extends object, B, P extends object = Partial<D>>(opts: {
  initial: B;
  draftOf: (record: B) => D;
  patchOf: (draft: D, record: B) => P;
  send: (patch: P, record: B) => Promise<B>;
  onState?: (state: SaveState) => void;
}): {
  draft: D;
  base: B;
  state: SaveState;
  errors: Record<string, string>;
  conflict: SaveConflict<B, D> | null;
  change: (patch: Partial<D>, now?: boolean) => void;
  flush: () => Promise<boolean>;
  resolve: (keep: "theirs" | "mine") => D | null;
  draftRef: RefObject<D>;
  baseRef: RefObject<B>;
  commit: (record: B) => void;
  setErrors: (errors: Record<string, string>) => void;
  setState: (state: SaveState) => void;
} {
  const { draftOf, patchOf, send, onState } = opts;
  const [draft, setDraft] = useState<D>(() => draftOf(opts.initial));
  const [base, setBase] = useState<B>(opts.initial);
  const [state, setStateRaw] = useState<SaveState>({ kind: "saved", at: null });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState<SaveConflict<B, D> | null>(null);
  const draftRef = useRef(draft);
  const baseRef = useRef(base);
  const conflictRef = useRef(conflict);
  const saving = useRef(false);
  const again = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const setState = (s: SaveState) => {
    setStateRaw(s);
    onState?.(s);
  };
  const commit = (record: B) => {
    baseRef.current = record;
    setBase(record);
  };

  const flushRef = useRef<() => Promise<boolean>>(async () => true);
  const schedule = (ms: number) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void flushRef.current(), ms);
  };

  const flush = async (): Promise<boolean> => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (conflictRef.current) return false;
    if (saving.current) {
      again.current = true;
      return false;
    }
    const b = baseRef.current;
    const d = draftRef.current;
    const patch = patchOf(d, b);
    if (Object.keys(patch).length === 0) {
      setErrors({});
      setState({ kind: "saved", at: null });
      return true;
    }
    saving.current = true;
    setState({ kind: "saving" });
    try {
      const next = await send(patch, b);
      commit(next);
      setErrors({});
      const stillDirty = Object.keys(patchOf(draftRef.current, next)).length > 0;
      setState(stillDirty ? { kind: "dirty" } : { kind: "saved", at: new Date().toISOString() });
      if (stillDirty) again.current = true;
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        const current = (err.details as { current?: B } | undefined)?.current;
        if (current) {
          const c = { current, yours: d, details: err.details };
          conflictRef.current = c;
          setConflict(c);
        }
        setState({ kind: "conflict", message: err.message });
      } else if (err instanceof ApiError && err.status === 422) {
        setErrors(fieldErrors(err.details));
        setState({ kind: "invalid", message: err.message });
      } else {
        setState({ kind: "error", message: err instanceof Error ? err.message : String(err) });
      }
      return false;
    } finally {
      saving.current = false;
      if (again.current) {
        again.current = false;
        schedule(AUTOSAVE_MS);
      }
    }
  };

  const patchOfRef = useRef(patchOf);
  useEffect(() => {
    flushRef.current = flush;
    patchOfRef.current = patchOf;
  });
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  // Leaving (reload, close, another address) with a change not yet stored: save it now and ask the browser to warn
  // (decision 0046). If the person stays, the save completes; an edit is never lost silently.
  useEffect(() => {
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      const pending =
        timer.current !== null ||
        saving.current ||
        conflictRef.current !== null ||
        Object.keys(patchOfRef.current(draftRef.current, baseRef.current)).length > 0;
      if (!pending) return;
      void flushRef.current();
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, []);

  const change = (patch: Partial<D>, now = false) => {
    const next = { ...draftRef.current, ...patch };
    draftRef.current = next;
    setDraft(next);
    if (conflictRef.current) return;
    setState({ kind: "dirty" });
    schedule(now ? 0 : AUTOSAVE_MS);
  };

  const resolve = (keep: "theirs" | "mine"): D | null => {
    const c = conflictRef.current;
    if (!c) return null;
    conflictRef.current = null;
    setConflict(null);
    commit(c.current);
    if (keep === "mine") {
      void flush();
      return null;
    }
    const theirs = draftOf(c.current);
    draftRef.current = theirs;
    setDraft(theirs);
    setErrors({});
    setState({ kind: "saved", at: null });
    return theirs;
  };

  return {
    draft,
    base,
    state,
    errors,
    conflict,
    change,
    flush,
    resolve,
    draftRef,
    baseRef,
    commit,
    setErrors,
    setState,
  };
}
