"use client";

/**
 * The one confirmation of the app (issue 24: no native `confirm()`, no inline confirm rows): a native modal
 * `<dialog>` opened with `showModal()`, centred, with the question as its accessible name. Focus moves into it (to
 * Cancel, the harmless choice, or with `focusField` to the first field of its content), Tab stays inside, Escape
 * and Cancel close it without acting, and focus returns to the control that opened it. Every destructive action — on
 * settings, policies, tasks, approvals — asks through it, either with {@link useConfirm} (a yes/no question) or by
 * rendering {@link ConfirmDialog} itself when the question carries fields (a reason) or shows its own progress.
 */
import { useCallback, useEffect, useId, useRef, useState } from "react";

export type ConfirmTone = "danger" | "primary" | "approve";

const TONE: Record<ConfirmTone, string> = {
  danger: "bg-red-700 hover:bg-red-800",
  primary: "bg-neutral-900 hover:bg-neutral-800",
  approve: "bg-emerald-700 hover:bg-emerald-800",
};

export type ConfirmDialogProps = {
  open: boolean;
  /** The question, naming the action and what it acts on. */
  title: React.ReactNode;
  /** What will happen; fields (a reason) may sit here too. */
  children?: React.ReactNode;
  /** The confirm button's label: the action's verb and object ("Revoke key"), never "OK". */
  confirmLabel: string;
  tone?: ConfirmTone;
  /** While the action runs: the confirm button says so and is disabled. */
  busy?: boolean;
  /** A refusal to show inside the dialog (the action failed; the dialog stays open). */
  error?: string | null;
  onConfirm: () => void;
  /** Cancel, Escape, or closing after a confirmation. */
  onClose: () => void;
  testId?: string;
  /** data-testid of the confirm button. */
  confirmTestId?: string;
  /** Focus the first field of `children` on opening (a reason to type) rather than Cancel. */
  focusField?: boolean;
  /** The confirm button's label while `busy` (default "Working…"). */
  busyLabel?: string;
};

/** The dialog itself, controlled by `open`. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  tone = "danger",
  busy = false,
  error = null,
  onConfirm,
  onClose,
  testId = "confirm-dialog",
  confirmTestId = "confirm-action",
  busyLabel = "Working…",
  focusField = false,
}: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<Element | null>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      opener.current = document.activeElement;
      d.showModal();
      const field = focusField ? d.querySelector<HTMLElement>("input, textarea, select") : null;
      (field ?? cancel.current)?.focus();
    } else if (!open && d.open) {
      d.close();
    }
  }, [open, focusField]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={() => {
        const back = opener.current;
        opener.current = null;
        if (back instanceof HTMLElement && back.isConnected) back.focus();
        if (open) onClose();
      }}
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg border border-neutral-300 p-0 shadow-xl backdrop:bg-black/30"
      data-testid={testId}
    >
      {open ? (
        <form
          method="dialog"
          className="space-y-3 p-4"
          onSubmit={(e) => {
            e.preventDefault();
            if (!busy) onConfirm();
          }}
        >
          <h2 id={titleId} className="text-base font-semibold break-words">
            {title}
          </h2>
          {children ? <div className="space-y-2 text-sm text-neutral-700">{children}</div> : null}
          {error ? (
            <p role="alert" className="text-sm text-red-700">
              {error}
            </p>
          ) : null}
          <div className="flex flex-wrap justify-end gap-2">
            <button
              ref={cancel}
              type="button"
              onClick={() => ref.current?.close()}
              className="rounded-md border border-neutral-300 px-3 py-1.5 text-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600"
            >
              Cancel
            </button>
            <button
              type="submit"
              disabled={busy}
              className={`rounded-md px-3 py-1.5 text-sm font-semibold text-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600 disabled:opacity-50 ${TONE[tone]}`}
              data-testid={confirmTestId}
            >
              {busy ? busyLabel : confirmLabel}
            </button>
          </div>
        </form>
      ) : null}
    </dialog>
  );
}

/** A question for {@link useConfirm}. */
export type ConfirmQuestion = {
  title: React.ReactNode;
  body?: React.ReactNode;
  confirmLabel: string;
  tone?: ConfirmTone;
};

/**
 * A yes/no confirmation as a promise: `if (await confirm({title, body, confirmLabel})) act();`. Render `dialog`
 * once in the component that asks.
 */
export function useConfirm(): { confirm: (q: ConfirmQuestion) => Promise<boolean>; dialog: React.ReactNode } {
  const [question, setQuestion] = useState<ConfirmQuestion | null>(null);
  const resolver = useRef<((yes: boolean) => void) | null>(null);
  const settle = useCallback((yes: boolean) => {
    resolver.current?.(yes);
    resolver.current = null;
    setQuestion(null);
  }, []);
  const confirm = useCallback((q: ConfirmQuestion) => {
    resolver.current?.(false);
    setQuestion(q);
    return new Promise<boolean>((resolve) => {
      resolver.current = resolve;
    });
  }, []);
  const dialog = (
    <ConfirmDialog
      open={question !== null}
      title={question?.title}
      confirmLabel={question?.confirmLabel ?? ""}
      tone={question?.tone}
      onConfirm={() => settle(true)}
      onClose={() => settle(false)}
    >
      {question?.body}
    </ConfirmDialog>
  );
  return { confirm, dialog };
}
