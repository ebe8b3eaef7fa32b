/**
 * What an editor shows after a 409 (someone else saved the record first): who saved it and when, both versions
 * (the table passed as `children`), and the two ways out. Nothing is overwritten until the person chooses.
 */
import type { ReactNode } from "react";

/**
 * @param by who saved the stored version; `at` when (ISO); `what` the record in words ("row", "exercise").
 * @param onResolve "theirs" drops my change, "mine" saves it over theirs.
 */
export function ConflictNotice({
  by,
  at,
  what,
  className = "",
  onResolve,
  children,
}: {
  by: string;
  at: string;
  what: string;
  className?: string;
  onResolve: (keep: "theirs" | "mine") => void;
  children: ReactNode;
}) {
  return (
    <div
      role="alert"
      className={`${className} rounded-md border border-amber-400 bg-amber-50 p-3 text-sm text-amber-950`.trim()}
      data-testid="conflict"
    >
      <p className="font-semibold">
        <span aria-hidden="true">⚠ </span>
        {by} saved this {what} at {new Date(at).toLocaleString()} while you were editing. Your change is not saved.
      </p>
      {children}
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
