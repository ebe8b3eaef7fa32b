"use client";

/** Shown when the task page fails to load; offers a retry. */
export default function TaskError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div role="alert" className="rounded-lg border border-red-200 bg-red-50 p-6 text-sm text-red-900">
      <h1 className="font-semibold">This task could not be loaded</h1>
      <p className="mt-1">
        {error.digest ? `Reference ${error.digest}. ` : ""}Try again; if it keeps failing, check the server log.
      </p>
      <button type="button" onClick={reset} className="mt-3 rounded-md bg-red-800 px-3 py-1.5 font-medium text-white">
        Try again
      </button>
    </div>
  );
}
