"use client";

/**
 * Starting a custody map (workflow + title) and importing one from its JSON export. Both go through the API;
 * a refused value shows the server's message with the field it names.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ApiError } from "@/lib/client/api";
import { mapApi } from "@/lib/client/maps";

const input = "w-full rounded-md border border-neutral-400 px-2 py-1.5 text-sm";
const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60";

export function NewMapForm() {
  const router = useRouter();
  const [workflow, setWorkflow] = useState("");
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="rounded-lg border border-neutral-200 bg-white p-3"
      aria-labelledby="new-map-h"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          const map = await mapApi.create({ workflow, title });
          router.push(`/maps/${map.id}`);
        } catch (err) {
          setError(err instanceof Error ? err.message : String(err));
          setBusy(false);
        }
      }}
    >
      <h2 id="new-map-h" className="text-sm font-semibold">
        Start a custody map
      </h2>
      <p className="mb-2 text-xs text-neutral-700">
        It starts as a draft with the eight layers and our worksheet text to edit.
      </p>
      <div className="grid gap-2 sm:grid-cols-2">
        <label className="text-xs font-medium text-neutral-800">
          Workflow
          <input
            className={input}
            value={workflow}
            onChange={(e) => setWorkflow(e.target.value)}
            placeholder="e.g. document-processing"
            required
          />
        </label>
        <label className="text-xs font-medium text-neutral-800">
          Title
          <input
            className={input}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            placeholder="e.g. Case files to reports"
            required
          />
        </label>
      </div>
      <button className={`${primary} mt-2`} disabled={busy || !workflow.trim() || !title.trim()}>
        {busy ? "Creating…" : "Create map"}
      </button>
      {error ? (
        <p role="alert" className="mt-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
    </form>
  );
}

export function ImportMapForm() {
  const router = useRouter();
  const [error, setError] = useState<{ message: string; fields: Array<{ path: string; message: string }> } | null>(
    null,
  );
  const [busy, setBusy] = useState(false);
  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-3">
      <h2 className="text-sm font-semibold" id="import-map-h">
        Import a map
      </h2>
      <p className="mb-2 text-xs text-neutral-700">A JSON export of a map (Export → JSON) becomes a new draft here.</p>
      <label className="text-xs font-medium text-neutral-800" htmlFor="import-map-file">
        JSON file
      </label>
      <input
        id="import-map-file"
        type="file"
        accept="application/json,.json"
        disabled={busy}
        className="block w-full text-sm file:mr-2 file:rounded-md file:border file:border-neutral-400 file:bg-white file:px-2 file:py-1 file:text-sm"
        onChange={async (e) => {
          const file = e.target.files?.[0];
          if (!file) return;
          setBusy(true);
          setError(null);
          let doc: unknown;
          try {
            doc = JSON.parse(await file.text());
          } catch {
            setError({ message: `${file.name} is not valid JSON; choose a map's JSON export.`, fields: [] });
            setBusy(false);
            return;
          }
          try {
            const map = await mapApi.import(doc);
            router.push(`/maps/${map.id}`);
          } catch (err) {
            const fields =
              err instanceof ApiError
                ? ((err.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields ?? [])
                : [];
            setError({ message: err instanceof Error ? err.message : String(err), fields });
            setBusy(false);
            e.target.value = "";
          }
        }}
      />
      {error ? (
        <div role="alert" className="mt-2 text-sm text-red-800" data-testid="import-error">
          <p>Not imported: {error.message}</p>
          {error.fields.length > 1 ? (
            <ul className="mt-1 list-disc pl-5 text-xs">
              {error.fields.slice(0, 12).map((f) => (
                <li key={f.path + f.message}>
                  <code className="font-mono">{f.path}</code>: {f.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
