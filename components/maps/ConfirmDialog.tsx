"use client";

/**
 * A confirmation in a native modal dialog (the repo's one confirm style, as the approval decision uses): focus moves
 * into it, Escape or Cancel closes it, the confirm button names the action. `children` says what will happen.
 */
import { useEffect, useId, useRef, type ReactNode } from "react";

export function ConfirmDialog({
  open,
  title,
  confirmLabel,
  tone = "neutral",
  busy = false,
  error,
  onConfirm,
  onClose,
  children,
  testId = "confirm-dialog",
}: {
  open: boolean;
  title: string;
  confirmLabel: string;
  tone?: "neutral" | "danger";
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onClose: () => void;
  children?: ReactNode;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const hid = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      onClose={onClose}
      aria-labelledby={hid}
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg border border-neutral-300 p-0 shadow-xl backdrop:bg-black/30"
      data-testid={testId}
    >
      <form
        method="dialog"
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          onConfirm();
        }}
      >
        <h2 id={hid} className="text-base font-semibold">
          {title}
        </h2>
        <div className="space-y-2 text-sm text-neutral-800">{children}</div>
        {error ? (
          <p role="alert" className="text-sm text-red-800">
            {error}
          </p>
        ) : null}
        <div className="flex flex-wrap justify-end gap-2">
          <button
            type="button"
            onClick={() => ref.current?.close()}
            className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm"
          >
            Cancel
          </button>
          <button
            type="submit"
            disabled={busy}
            className={`rounded-md px-3 py-1.5 text-sm font-semibold text-white disabled:opacity-60 ${tone === "danger" ? "bg-red-700" : "bg-neutral-900"}`}
          >
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
