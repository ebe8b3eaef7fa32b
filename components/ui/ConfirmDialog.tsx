"use client";

/**
 * A confirmation in a native modal dialog (`<dialog>` with `showModal()`, centred like the Reconcile dialog): focus moves
 * into it, Escape or Cancel closes it, everything works from the keyboard. Names the action and what it acts on, and
 * can ask for a reason (required or optional), as docs UX "Forms and actions" asks of destructive actions. The
 * confirm button runs `onConfirm(reason)`; an error it throws is shown in the dialog, which stays open.
 */
import { useEffect, useId, useRef, useState, type ReactNode } from "react";

export type ConfirmDialogProps = {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children: ReactNode;
  confirmLabel: string;
  /** `danger`: red confirm button. */
  tone?: "danger" | "neutral";
  /** Ask for a reason: `required` or `optional`; absent: no reason field. */
  reason?: "required" | "optional";
  onConfirm: (reason: string) => Promise<void>;
  testId?: string;
};

/** The dialog; render it always and drive it with `open`. */
export function ConfirmDialog({
  open,
  onClose,
  title,
  children,
  confirmLabel,
  tone = "neutral",
  reason,
  onConfirm,
  testId = "confirm-dialog",
}: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      setText("");
      setError(null);
      d.showModal();
    } else if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      onClose={onClose}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg border border-neutral-300 p-0 shadow-xl backdrop:bg-black/30"
      data-testid={testId}
    >
      <form
        method="dialog"
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          onConfirm(text.trim())
            .then(() => ref.current?.close())
            .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)))
            .finally(() => setBusy(false));
        }}
      >
        <h2 id={`${id}-title`} className="text-base font-semibold break-words">
          {title}
        </h2>
        <div id={`${id}-body`} className="space-y-2 text-sm text-neutral-700">
          {children}
        </div>
        {reason ? (
          <label className="flex flex-col text-sm font-medium">
            Reason{reason === "required" ? " (required)" : " (optional)"}
            <textarea
              value={text}
              onChange={(e) => setText(e.target.value)}
              required={reason === "required"}
              maxLength={500}
              rows={3}
              className="mt-1 rounded-md border border-neutral-300 px-2 py-1.5 text-sm font-normal"
              data-testid={`${testId}-reason`}
            />
          </label>
        ) : null}
        {error ? (
          <p role="alert" className="text-sm text-red-700">
            {error}
          </p>
        ) : null}
        <div className="flex justify-end gap-2">
          <button
            type="button"
            onClick={() => ref.current?.close()}
            className="rounded-md border border-neutral-300 px-3 py-1.5 text-sm"
          >
            Cancel
          </button>
          <button
            type="submit"
            disabled={busy}
            className={`rounded-md px-3 py-1.5 text-sm font-semibold text-white disabled:opacity-50 ${tone === "danger" ? "bg-red-700 hover:bg-red-800" : "bg-neutral-900 hover:bg-neutral-800"}`}
            data-testid={`${testId}-confirm`}
          >
            {busy ? "Working…" : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
