"use client";

/**
 * Starting a custody map (workflow + title) and importing one from its JSON export (as a new map, or as the next
 * version of the map of its workflow). Both go through the API; a refused value shows the server's message with the
 * field it names.
 */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ApiError } from "@/lib/client/api";
import { mapApi } from "@/lib/client/maps";
import type { MapListItem } from "@/lib/contract/maps";

const input = "w-full rounded-md border border-neutral-400 px-2 py-1.5 text-sm";
const primary = "rounded-md bg-neutral-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-60";

/** Starts a map; `initialWorkflow` fills the workflow in (the maps page filtered to a workflow without a map). */
export function NewMapForm({ initialWorkflow = "" }: { initialWorkflow?: string } = {}) {
  const router = useRouter();
  const [workflow, setWorkflow] = useState(initialWorkflow);
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

/**
 * Importing a map's JSON export. When the tenant already has a map of the document's workflow, the form offers to
 * take it as that map's next version (the usual case: a map went out for review and came back) or, deliberately, as
 * a separate map — never a silent duplicate (decision 0046).
 */
export function ImportMapForm() {
  const router = useRouter();
  const [error, setError] = useState<{ message: string; fields: Array<{ path: string; message: string }> } | null>(
    null,
  );
  const [busy, setBusy] = useState(false);
  const [offer, setOffer] = useState<{ doc: unknown; workflow: string; existing: MapListItem[] } | null>(null);

  const run = async (call: () => Promise<{ id: string }>) => {
    setBusy(true);
    setError(null);
    try {
      const map = await call();
      router.push(`/maps/${map.id}`);
    } catch (err) {
      const fields =
        err instanceof ApiError
          ? ((err.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields ?? [])
          : [];
      setError({ message: err instanceof Error ? err.message : String(err), fields });
      setBusy(false);
    }
  };

  return (
    <div className="rounded-lg border border-neutral-200 bg-white p-3">
      <h2 className="text-sm font-semibold" id="import-map-h">
        Import a map
      </h2>
      <p className="mb-2 text-xs text-neutral-700">
        A JSON export of a map (Export → JSON) becomes a draft here: the next version of the map of its workflow, or a
        new map.
      </p>
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
          e.target.value = "";
          if (!file) return;
          setError(null);
          setOffer(null);
          let doc: unknown;
          try {
            doc = JSON.parse(await file.text());
          } catch {
            setError({ message: `${file.name} is not valid JSON; choose a map's JSON export.`, fields: [] });
            return;
          }
          const workflow = (doc as { workflow?: unknown } | null)?.workflow;
          if (typeof workflow === "string" && workflow.trim()) {
            try {
              const existing = await mapApi.ofWorkflow(workflow.trim());
              if (existing.length) {
                setOffer({ doc, workflow: workflow.trim(), existing });
                return;
              }
            } catch {
              // The look-up is a courtesy: without it the import below still answers for itself.
            }
          }
          await run(() => mapApi.import(doc));
        }}
      />
      {offer ? (
        <div
          className="mt-2 space-y-2 rounded-md border border-sky-300 bg-sky-50 p-2 text-sm"
          role="group"
          aria-labelledby="import-offer-h"
          data-testid="import-offer"
        >
          <p id="import-offer-h">
            Workflow <code className="font-mono break-all">{offer.workflow}</code> already has{" "}
            {offer.existing.length === 1 ? "a map" : `${offer.existing.length} maps`}. Take this file as the next
            version of:
          </p>
          <ul className="space-y-1">
            {offer.existing.map((m) => (
              <li key={m.id}>
                <button
                  type="button"
                  className="rounded-md bg-neutral-900 px-3 py-1.5 text-left text-sm font-medium text-white disabled:opacity-60"
                  disabled={busy}
                  onClick={() => void run(() => mapApi.importVersion(m.id, offer.doc))}
                >
                  New version of “{m.title}” (now v{m.version} {m.status}
                  {m.archived_at ? ", archived" : ""})
                </button>
              </li>
            ))}
          </ul>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm disabled:opacity-60"
              disabled={busy}
              onClick={() => void run(() => mapApi.import(offer.doc))}
            >
              Import as a separate map
            </button>
            <button
              type="button"
              className="rounded-md border border-neutral-400 bg-white px-3 py-1.5 text-sm"
              onClick={() => setOffer(null)}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : null}
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
